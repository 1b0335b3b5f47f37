//! Which palette the page paints with: the widget's fixed theme or the
//! user's light/dark preference. The colours are `overlap_view::palette`'s.

use overlap_view::palette::{Palette, DARK, LIGHT};

/// The palette for `el`: a widget fixes its theme with the CSS
/// `color-scheme` (`light` or `dark`); otherwise the user's preference.
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
