//! Colours. One colour per parallelism axis, the same on the canvas, in the
//! figures and in the legend (the CSS variables `--tp`, `--pp`, `--dp` carry
//! the same values; the playhead and its veil are CSS only). Okabe-Ito hues,
//! distinguishable with the common forms of colour blindness; the dark theme
//! lightens the blue so it stays visible.

use overlap_core::timeline::Phase;

pub struct Palette {
    pub axis: [&'static str; 3],
    pub background: &'static str,
    pub lane: &'static str,
    pub text: &'static str,
    pub muted: &'static str,
    pub grid: &'static str,
    pub forward: &'static str,
    pub recompute: &'static str,
    pub backward: &'static str,
    pub step: &'static str,
    pub exposed_stripe: &'static str,
}

pub const LIGHT: Palette = Palette {
    axis: ["#0072B2", "#E69F00", "#009E73"],
    background: "#ffffff",
    lane: "#f3f4f6",
    text: "#1f2328",
    muted: "#5b636e",
    grid: "#d8dce2",
    forward: "#9aa5b4",
    recompute: "#c3cad4",
    backward: "#5f6b7a",
    step: "#CC79A7",
    exposed_stripe: "rgba(0,0,0,0.55)",
};

pub const DARK: Palette = Palette {
    axis: ["#56B4E9", "#E69F00", "#2FBF8F"],
    background: "#15181d",
    lane: "#1e232a",
    text: "#e6e8eb",
    muted: "#9aa3ad",
    grid: "#323842",
    forward: "#7d8896",
    recompute: "#4d5663",
    backward: "#aeb8c4",
    step: "#CC79A7",
    exposed_stripe: "rgba(255,255,255,0.7)",
};

impl Palette {
    pub fn phase(&self, phase: Phase) -> &'static str {
        match phase {
            Phase::Forward => self.forward,
            Phase::Recompute => self.recompute,
            Phase::Backward => self.backward,
            Phase::Step => self.step,
        }
    }
}

/// The palette for `el`: a widget fixes its theme with the CSS
/// `color-scheme` (`light` or `dark`); otherwise the user's preference.
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

pub fn current() -> &'static Palette {
    if crate::dom::prefers("(prefers-color-scheme: dark)") {
        &DARK
    } else {
        &LIGHT
    }
}
