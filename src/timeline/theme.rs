//! Which palette the page paints with: the widget's fixed theme, a link's
//! `theme=light|dark`, or the user's light/dark preference. The colours are
//! `overlap_view::palette`'s.

use std::cell::Cell;

use overlap_view::palette::{Palette, Theme, DARK, LIGHT};

thread_local! {
    /// Counts the changes that may change a canvas's palette (a theme
    /// applied, the user's preference flipped, a widget's theme attribute),
    /// so that a canvas reads its computed style again only after one:
    /// reading it forces the page's style in the middle of a frame.
    static GENERATION: Cell<u64> = const { Cell::new(0) };
}

/// The number of palette changes so far (see [`restyled`]).
pub fn generation() -> u64 {
    GENERATION.with(Cell::get)
}

/// Notes that the palette of a canvas may have changed: the next paint
/// reads it again with [`for_element`].
pub fn restyled() {
    GENERATION.with(|g| g.set(g.get() + 1));
}

/// The palette for `el`: a widget fixes its theme with the CSS
/// `color-scheme` (`light` or `dark`), and so does a link's theme (through
/// `data-theme` on the page, see [`apply`]); otherwise the user's preference.
pub fn for_element(el: &web_sys::Element) -> &'static Palette {
    let scheme = crate::dom::window()
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
    if crate::dom::prefers("(prefers-color-scheme: dark)") {
        &DARK
    } else {
        &LIGHT
    }
}

/// Fixes the page's theme (the style sheet's `:root[data-theme=…]` blocks),
/// or lets it follow the user's preference again with `None`.
pub fn apply(theme: Option<Theme>) {
    restyled();
    let Some(root) = crate::dom::document().and_then(|d| d.document_element()) else {
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
