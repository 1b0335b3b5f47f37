//! Colours. Shapes of the display list name a [`Role`]; a [`Palette`] gives
//! each role its colour, so the canvas and the SVG writer paint the same
//! colours from one table. One colour per parallelism axis, the same on the
//! canvas, in the figures and in the legend (the CSS variables `--tp`,
//! `--pp`, `--dp` carry the same values; the playhead and its veil are CSS
//! only). Okabe-Ito hues, distinguishable with the common forms of colour
//! blindness; the dark theme lightens the blue so it stays visible.

use overlap_core::timeline::{Axis, Phase};

/// What a colour is for: shapes carry roles, never colour strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The canvas behind everything.
    Background,
    /// The empty track of a lane.
    Lane,
    /// Labels that must stand out (GPU names, headings).
    Text,
    /// Secondary labels, ticks and the capacity line.
    Muted,
    /// Vertical grid lines at the ticks.
    Grid,
    /// A parallelism axis: its communication bars, brackets and traffic.
    Axis(Axis),
    /// A compute bar of this pass.
    Phase(Phase),
    /// A weight-gradient (W) compute bar of a split backward: a shade of the
    /// backward's colour, so that F, B and W read apart in one lane.
    WeightGradient,
    /// The stripes and outline of an exposed (hatched) span.
    ExposedStripe,
    /// Text on a communication bar.
    OnComm,
}

/// The colours of one theme, as CSS colour strings.
#[derive(Debug, PartialEq, Eq)]
pub struct Palette {
    /// By `Axis::index`: TP, PP, DP.
    pub axis: [&'static str; 3],
    /// [`Role::Background`].
    pub background: &'static str,
    /// [`Role::Lane`].
    pub lane: &'static str,
    /// [`Role::Text`].
    pub text: &'static str,
    /// [`Role::Muted`].
    pub muted: &'static str,
    /// [`Role::Grid`].
    pub grid: &'static str,
    /// Forward compute.
    pub forward: &'static str,
    /// Recomputed forward.
    pub recompute: &'static str,
    /// Backward compute.
    pub backward: &'static str,
    /// [`Role::WeightGradient`].
    pub weight_gradient: &'static str,
    /// The optimizer step.
    pub step: &'static str,
    /// [`Role::ExposedStripe`].
    pub exposed_stripe: &'static str,
    /// [`Role::OnComm`].
    pub on_comm: &'static str,
}

/// The light theme.
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
    weight_gradient: "#3a4350",
    step: "#CC79A7",
    exposed_stripe: "rgba(0,0,0,0.55)",
    on_comm: "#ffffff",
};

/// The dark theme.
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
    weight_gradient: "#d9e0e8",
    step: "#CC79A7",
    exposed_stripe: "rgba(255,255,255,0.7)",
    on_comm: "#ffffff",
};

impl Palette {
    /// The colour of a role in this theme.
    pub fn colour(&self, role: Role) -> &'static str {
        match role {
            Role::Background => self.background,
            Role::Lane => self.lane,
            Role::Text => self.text,
            Role::Muted => self.muted,
            Role::Grid => self.grid,
            Role::Axis(axis) => self.axis[axis.index()],
            Role::Phase(phase) => self.phase(phase),
            Role::WeightGradient => self.weight_gradient,
            Role::ExposedStripe => self.exposed_stripe,
            Role::OnComm => self.on_comm,
        }
    }

    /// The colour of a compute bar of `phase`.
    pub fn phase(&self, phase: Phase) -> &'static str {
        match phase {
            Phase::Forward => self.forward,
            Phase::Recompute => self.recompute,
            Phase::Backward => self.backward,
            Phase::Step => self.step,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The legend and the figures colour the axes with the style sheet's
    /// `--tp`, `--pp`, `--dp`: they must be the canvas's colours.
    #[test]
    fn the_style_sheet_axis_colours_are_the_palettes() {
        let css = include_str!("../../../www/style.css");
        let (light, dark) = css
            .split_once("prefers-color-scheme: dark")
            .expect("the style sheet has a dark theme");
        for axis in Axis::ALL {
            let var = format!("--{}: {};", axis.name(), LIGHT.axis[axis.index()]);
            assert!(light.contains(&var), "light theme lacks {var}");
            if DARK.axis[axis.index()] != LIGHT.axis[axis.index()] {
                let var = format!("--{}: {};", axis.name(), DARK.axis[axis.index()]);
                assert!(dark.contains(&var), "dark theme lacks {var}");
            }
        }
    }
}
