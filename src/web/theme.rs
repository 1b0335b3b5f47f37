//! Which palette the page paints with: the widget's fixed theme, a link's
//! `theme=light|dark`, or the user's light/dark preference. The colours are
//! `overlap_view::palette`'s.

use overlap_view::palette::{Palette, Theme, DARK, LIGHT};

/// The palette for `el`: a widget fixes its theme with the CSS
/// `color-scheme` (`light` or `dark`), and so does a link's theme (through
/// `data-theme` on the page, see [`apply`]); otherwise the user's preference.
pub fn for_element(el: &web_sys::Element) -> &'static Palette {
    let scheme = crate::web::dom::window()
        .and_then(|w| w.get_computed_style(el).ok().flatten())
        .and_then(|s| s.get_property_value("color-scheme").ok())
        .unwrap_or_default();
    let words: Vec<&str> = scheme.split_whitespace().collect();
    match words.as_slice() {
        ["dark"] | ["only", "dark"] | ["dark", "only"] => &DARK,
        ["light"] | ["only", "light"] | ["light", "only"] => &LIGHT,
        _ => current(),
    }
}

/// The palette of the user's preference.
pub fn current() -> &'static Palette {
    if crate::web::dom::prefers("(prefers-color-scheme: dark)") {
        &DARK
    } else {
        &LIGHT
    }
}

/// Fixes the page's theme (the style sheet's `:root[data-theme=…]` blocks),
/// or lets it follow the user's preference again with `None`.
pub fn apply(theme: Option<Theme>) {
    let Some(root) = crate::web::dom::document().and_then(|d| d.document_element()) else {
        return;
    };
    let _ = match theme {
        Some(t) => root.set_attribute("data-theme", t.name()),
        None => root.remove_attribute("data-theme"),
    };
}

/// The palette of an exported picture: the chosen theme, light without one
/// (slides and papers are light far more often than not).
pub fn for_export(theme: Option<Theme>) -> &'static Palette {
    theme.unwrap_or(Theme::Light).palette()
}
