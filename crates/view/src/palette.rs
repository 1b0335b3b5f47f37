//! Colours. Shapes of the display list name a [`Role`]; a [`Palette`] gives
//! each role its colour, so the canvas and the SVG writer paint the same
//! colours from one table. One colour per parallelism axis, the same on the
//! canvas, in the figures and in the legend (the CSS variables `--tp`,
//! `--pp`, ... are written from this table into www/style.css by
//! tests/css_palette.rs; the playhead and its veil are CSS only). TP, PP and DP take Okabe-Ito
//! hues, distinguishable with the common forms of colour blindness; the
//! dark theme lightens the blue so it stays visible. EP and CP are chosen
//! by CIEDE2000 distance from everything else drawn beside them.
//!
//! Contrast (WCAG 2.x, relative luminance): every label on a bar reads at
//! 4.5:1 or more, and every bar stands 3:1 or more from its lane and from
//! the backward pass, which is the one compute kind that sits next to all
//! others (F B F B in 1F1B, B W in the zero-bubble schedules, R B with
//! recomputation, B then the optimizer step). The other compute kinds
//! (forward, recompute, weight gradient, step) share one band of luminance
//! and are told apart by hue; the light theme darkens the orange and green
//! of Okabe-Ito so that white labels read on them. The tests below compute
//! every ratio from this table.

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
    /// Text on a compute bar.
    OnCompute,
    /// A measured communication kernel whose axis the trace does not say.
    UnknownComm,
}

/// A theme a link can fix (`theme=light` or `theme=dark`), for the page,
/// embeds and exports; without one the page follows the reader's system
/// and exports are light.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Theme {
    /// Dark text on white.
    Light,
    /// Light text on near-black.
    Dark,
}

impl Theme {
    /// Both, in the order the page lists them.
    pub const ALL: [Theme; 2] = [Theme::Light, Theme::Dark];

    /// The link's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// The theme of this name, if any.
    pub fn from_name(name: &str) -> Option<Theme> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Its colours.
    pub fn palette(self) -> &'static Palette {
        match self {
            Theme::Light => &LIGHT,
            Theme::Dark => &DARK,
        }
    }
}

/// The colours of one theme, as CSS colour strings.
#[derive(Debug, PartialEq, Eq)]
pub struct Palette {
    /// By `Axis::index`: TP, PP, DP, EP, CP.
    pub axis: [&'static str; Axis::COUNT],
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
    /// [`Role::OnCompute`].
    pub on_compute: &'static str,
    /// [`Role::UnknownComm`].
    pub unknown_comm: &'static str,
}

/// The light theme.
pub const LIGHT: Palette = Palette {
    // EP: an olive green; CP: a deep violet. Both are chosen at a
    // CIEDE2000 distance of 20 or more from every compute kind and every
    // other axis (issue 58: the reddish purple EP had was the optimizer
    // step's colour, the violet CP had the weight gradient's), which the
    // Okabe-Ito hues left no room for at the others' luminance: they stand
    // apart by lightness as well (tests/palette_distance.rs).
    axis: ["#0072B2", "#B35C00", "#007A5A", "#687E14", "#5C00DC"],
    background: "#ffffff",
    lane: "#f3f4f6",
    text: "#1f2328",
    muted: "#5b636e",
    grid: "#d8dce2",
    forward: "#66768c",
    recompute: "#7d6b55",
    backward: "#101317",
    weight_gradient: "#76619a",
    step: "#A8457E",
    exposed_stripe: "rgba(0,0,0,0.55)",
    on_comm: "#ffffff",
    on_compute: "#ffffff",
    // A red apart from the axes' and the compute kinds' hues (the optimizer
    // step's magenta among them), and Okabe-Ito's yellow darkened: both
    // 3:1 from the lane.
    unknown_comm: "#C0282D",
};

/// The dark theme.
pub const DARK: Palette = Palette {
    // EP: a lime; CP: a pale orchid (the same test as the light theme's).
    axis: ["#56B4E9", "#E69F00", "#2FBF8F", "#DCFE08", "#FEC8F0"],
    background: "#15181d",
    lane: "#1e232a",
    text: "#e6e8eb",
    muted: "#9aa3ad",
    grid: "#323842",
    forward: "#7d8896",
    recompute: "#9a8a72",
    backward: "#ffffff",
    weight_gradient: "#9c88c0",
    step: "#C7709F",
    exposed_stripe: "rgba(255,255,255,0.7)",
    on_comm: "#15181d",
    on_compute: "#15181d",
    // The same red lightened, and Okabe-Ito's yellow: 3:1 from the lane.
    unknown_comm: "#FF6B6B",
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
            Role::OnCompute => self.on_compute,
            Role::UnknownComm => self.unknown_comm,
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

/// The relative luminance of a `#rrggbb` colour (WCAG 2.x), 0 (black) to
/// 1 (white); `None` for any other form (the translucent stripes).
pub fn relative_luminance(colour: &str) -> Option<f64> {
    let hex = colour.strip_prefix('#').filter(|h| h.len() == 6)?;
    let channel = |i: usize| -> Option<f64> {
        let v = f64::from(u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()?) / 255.0;
        Some(if v <= 0.040_45 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        })
    };
    Some(0.2126 * channel(0)? + 0.7152 * channel(2)? + 0.0722 * channel(4)?)
}

/// The contrast ratio of two `#rrggbb` colours (WCAG 2.x), 1 to 21.
pub fn contrast_ratio(a: &str, b: &str) -> Option<f64> {
    let (la, lb) = (relative_luminance(a)?, relative_luminance(b)?);
    Some((la.max(lb) + 0.05) / (la.min(lb) + 0.05))
}

#[cfg(test)]
mod contrast_tests {
    use super::*;

    const THEMES: [(&str, &Palette); 2] = [("light", &LIGHT), ("dark", &DARK)];

    fn ratio(a: &str, b: &str) -> f64 {
        contrast_ratio(a, b).unwrap_or_else(|| panic!("{a} or {b} is not #rrggbb"))
    }

    /// The compute kinds, with their names for messages.
    fn compute(p: &Palette) -> [(&'static str, &'static str); 5] {
        [
            ("forward", p.forward),
            ("recompute", p.recompute),
            ("backward", p.backward),
            ("weight gradient", p.weight_gradient),
            ("step", p.step),
        ]
    }

    fn axes(p: &Palette) -> [(&'static str, &'static str); Axis::COUNT] {
        Axis::ALL.map(|a| (a.label(), p.axis[a.index()]))
    }

    fn hue_deg(colour: &str) -> f64 {
        let hex = &colour[1..];
        let c = |i: usize| f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap()) / 255.0;
        let (r, g, b) = (c(0), c(2), c(4));
        let (max, min) = (r.max(g).max(b), r.min(g).min(b));
        let d = max - min;
        if d == 0.0 {
            return 0.0;
        }
        let h = if max == r {
            ((g - b) / d).rem_euclid(6.0)
        } else if max == g {
            (b - r) / d + 2.0
        } else {
            (r - g) / d + 4.0
        };
        h * 60.0
    }

    #[test]
    fn luminance_follows_wcag() {
        assert_eq!(relative_luminance("#000000"), Some(0.0));
        assert!((relative_luminance("#ffffff").unwrap() - 1.0).abs() < 1e-12);
        assert!((ratio("#000000", "#ffffff") - 21.0).abs() < 1e-9);
        // WCAG's own example: #777777 on white is just under 4.5:1.
        assert!((ratio("#777777", "#ffffff") - 4.48).abs() < 0.01);
        assert_eq!(relative_luminance("rgba(0,0,0,0.5)"), None);
    }

    /// WCAG 1.4.3: labels on bars at 4.5:1 or more.
    #[test]
    fn labels_on_bars_read_at_4_5_to_1() {
        for (theme, p) in THEMES {
            for (kind, bar) in compute(p) {
                let r = ratio(p.on_compute, bar);
                assert!(r >= 4.5, "{theme}: label on {kind} is {r:.2}:1");
            }
            for (axis, bar) in axes(p) {
                let r = ratio(p.on_comm, bar);
                assert!(r >= 4.5, "{theme}: label on {axis} is {r:.2}:1");
            }
        }
    }

    /// Text drawn on the background (the gutter left of the lanes and the
    /// axis strip): GPU names, ticks, link names and the lane labels in
    /// their axis colour.
    #[test]
    fn text_on_the_background_reads_at_4_5_to_1() {
        for (theme, p) in THEMES {
            let mut texts = vec![("text", p.text), ("muted", p.muted)];
            texts.extend(axes(p));
            for (what, colour) in texts {
                let r = ratio(colour, p.background);
                assert!(r >= 4.5, "{theme}: {what} on the background is {r:.2}:1");
            }
        }
    }

    /// WCAG 1.4.11: every bar against its lane, the window brackets against
    /// the background, and the backward pass against every compute kind it
    /// touches, at 3:1 or more.
    #[test]
    fn touching_colours_differ_by_3_to_1() {
        for (theme, p) in THEMES {
            let mut bars = compute(p).to_vec();
            bars.extend(axes(p));
            bars.push(("unknown axis", p.unknown_comm));
            for (kind, bar) in &bars {
                let r = ratio(bar, p.lane);
                assert!(r >= 3.0, "{theme}: {kind} against its lane is {r:.2}:1");
            }
            for (axis, colour) in axes(p) {
                let r = ratio(colour, p.background);
                assert!(
                    r >= 3.0,
                    "{theme}: {axis} bracket on the background is {r:.2}:1"
                );
            }
            for (kind, bar) in compute(p) {
                if bar != p.backward {
                    let r = ratio(bar, p.backward);
                    assert!(r >= 3.0, "{theme}: {kind} against backward is {r:.2}:1");
                }
            }
        }
    }

    /// Forward, recompute, weight gradient and step share a band of
    /// luminance (each must be 3:1 from both the lane and the backward, which
    /// leaves no room for a third level); they differ by hue, at least 40°.
    #[test]
    fn forward_recompute_weight_gradient_and_step_differ_by_hue() {
        for (theme, p) in THEMES {
            let kinds: Vec<_> = compute(p)
                .into_iter()
                .filter(|(_, c)| *c != p.backward)
                .collect();
            for (i, (a, ca)) in kinds.iter().enumerate() {
                for (b, cb) in &kinds[i + 1..] {
                    let d = (hue_deg(ca) - hue_deg(cb)).abs();
                    let d = d.min(360.0 - d);
                    assert!(d >= 40.0, "{theme}: {a} and {b} are {d:.0}° apart");
                }
            }
        }
    }

    /// A measured collective of an unknown axis sits beside compute and
    /// the axes' collectives in the measured-vs-simulated view: its red is
    /// 30° or more from every other hue there.
    #[test]
    fn the_unknown_axis_differs_by_hue_from_the_axes_and_compute() {
        for (theme, p) in THEMES {
            let mut others = compute(p).to_vec();
            others.extend(axes(p));
            for (what, colour) in others {
                if colour == p.backward {
                    continue;
                }
                let d = (hue_deg(p.unknown_comm) - hue_deg(colour)).abs();
                let d = d.min(360.0 - d);
                assert!(
                    d >= 30.0,
                    "{theme}: unknown axis and {what} are {d:.0}° apart"
                );
            }
        }
    }

    /// Known gap: in a link lane the axes' bandwidths are stacked, so TP, PP,
    /// DP, EP and CP touch there. Colours that all stand 3:1 from the lane
    /// cannot also stand 3:1 from each other (with the lane that is four
    /// levels, a 27:1 range of the 21:1 there is); TP, PP and DP differ by
    /// their Okabe-Ito hue instead, at one luminance. EP and CP differ by
    /// lightness and hue together, which a hue angle alone misjudges (the
    /// dark lime is 21° of HSV hue from the orange, yet 31 of CIEDE2000
    /// away): their distances are tests/palette_distance.rs.
    /// Pinned so that a change of the axis colours is seen here.
    #[test]
    fn stacked_axis_colours_differ_by_hue_not_luminance() {
        let first_three = [Axis::Tp, Axis::Pp, Axis::Dp].map(Axis::index);
        for (theme, p, max) in [("light", &LIGHT, 1.15), ("dark", &DARK, 1.05)] {
            for i in 0..Axis::COUNT {
                for j in i + 1..Axis::COUNT {
                    let r = ratio(p.axis[i], p.axis[j]);
                    let pinned = first_three.contains(&i) && first_three.contains(&j);
                    assert!(!pinned || r < max, "{theme}: axes {i} and {j} at {r:.2}:1");
                    let d = (hue_deg(p.axis[i]) - hue_deg(p.axis[j])).abs();
                    assert!(
                        !pinned || d.min(360.0 - d) >= 30.0,
                        "{theme}: axes {i} and {j} hues"
                    );
                }
            }
        }
    }
}
