//! The axes' colours stand apart from the compute kinds' and from each
//! other by CIEDE2000 colour difference, in both themes (issue 58: EP's
//! reddish purple was the optimizer step's colour, CP's violet the weight
//! gradient's).
//!
//! CIEDE2000 as given by G. Sharma, W. Wu and E. N. Dalal, "The CIEDE2000
//! color-difference formula: implementation notes, supplementary test data,
//! and mathematical observations", Color Research and Application 30(1),
//! 21-30, 2005: equations (1)-(22), checked below against rows of their
//! Table 1. Colours go to CIELAB from sRGB (IEC 61966-2-1) under D65.

use overlap_core::Axis;
use overlap_view::palette::{Palette, DARK, LIGHT};

/// A colour difference this large reads as a different colour at a glance
/// (1 is a just-noticeable difference; 20 keeps hues apart on thin bars).
const MIN_DISTANCE: f64 = 20.0;

/// A compute colour of CIELAB chroma below this is near grey (the
/// backward pass's near black and near white, the dark theme's slate
/// forward): a chromatic axis colour differs from it by chroma whatever
/// the distance says, so it is excepted.
const GREY_CHROMA: f64 = 10.0;

type Lab = (f64, f64, f64);

fn lab(hex: &str) -> Lab {
    let h = hex.strip_prefix('#').expect("#rrggbb");
    let lin = |i: usize| {
        let v = f64::from(u8::from_str_radix(&h[i..i + 2], 16).expect("hex")) / 255.0;
        if v <= 0.040_45 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let (r, g, b) = (lin(0), lin(2), lin(4));
    let x = 0.412_456_4 * r + 0.357_576_1 * g + 0.180_437_5 * b;
    let y = 0.212_672_9 * r + 0.715_152_2 * g + 0.072_175_0 * b;
    let z = 0.019_333_9 * r + 0.119_192_0 * g + 0.950_304_1 * b;
    let f = |t: f64| {
        let d: f64 = 6.0 / 29.0;
        if t > d.powi(3) {
            t.cbrt()
        } else {
            t / (3.0 * d * d) + 4.0 / 29.0
        }
    };
    let (fx, fy, fz) = (f(x / 0.950_47), f(y), f(z / 1.088_83));
    (116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz))
}

fn chroma(hex: &str) -> f64 {
    let (_, a, b) = lab(hex);
    a.hypot(b)
}

/// CIEDE2000 (Sharma et al. 2005, equations 1-22; kL = kC = kH = 1).
fn ciede2000((l1, a1, b1): Lab, (l2, a2, b2): Lab) -> f64 {
    let c_bar = (a1.hypot(b1) + a2.hypot(b2)) / 2.0;
    let c7 = c_bar.powi(7);
    let g = 0.5 * (1.0 - (c7 / (c7 + 25f64.powi(7))).sqrt());
    let (a1p, a2p) = ((1.0 + g) * a1, (1.0 + g) * a2);
    let (c1p, c2p) = (a1p.hypot(b1), a2p.hypot(b2));
    let hue = |b: f64, ap: f64| {
        if b == 0.0 && ap == 0.0 {
            0.0
        } else {
            b.atan2(ap).to_degrees().rem_euclid(360.0)
        }
    };
    let (h1p, h2p) = (hue(b1, a1p), hue(b2, a2p));
    let dl = l2 - l1;
    let dc = c2p - c1p;
    let dh_deg = if c1p * c2p == 0.0 {
        0.0
    } else if (h2p - h1p).abs() <= 180.0 {
        h2p - h1p
    } else if h2p - h1p > 180.0 {
        h2p - h1p - 360.0
    } else {
        h2p - h1p + 360.0
    };
    let dh = 2.0 * (c1p * c2p).sqrt() * (dh_deg.to_radians() / 2.0).sin();
    let l_bar = (l1 + l2) / 2.0;
    let cp_bar = (c1p + c2p) / 2.0;
    let h_bar = if c1p * c2p == 0.0 {
        h1p + h2p
    } else if (h1p - h2p).abs() <= 180.0 {
        (h1p + h2p) / 2.0
    } else if h1p + h2p < 360.0 {
        (h1p + h2p + 360.0) / 2.0
    } else {
        (h1p + h2p - 360.0) / 2.0
    };
    let cos = |deg: f64| deg.to_radians().cos();
    let t =
        1.0 - 0.17 * cos(h_bar - 30.0) + 0.24 * cos(2.0 * h_bar) + 0.32 * cos(3.0 * h_bar + 6.0)
            - 0.20 * cos(4.0 * h_bar - 63.0);
    let d_theta = 30.0 * (-((h_bar - 275.0) / 25.0).powi(2)).exp();
    let cp7 = cp_bar.powi(7);
    let rc = 2.0 * (cp7 / (cp7 + 25f64.powi(7))).sqrt();
    let sl = 1.0 + 0.015 * (l_bar - 50.0).powi(2) / (20.0 + (l_bar - 50.0).powi(2)).sqrt();
    let sc = 1.0 + 0.045 * cp_bar;
    let sh = 1.0 + 0.015 * cp_bar * t;
    let rt = -(2.0 * d_theta).to_radians().sin() * rc;
    ((dl / sl).powi(2) + (dc / sc).powi(2) + (dh / sh).powi(2) + rt * (dc / sc) * (dh / sh)).sqrt()
}

fn distance(a: &str, b: &str) -> f64 {
    ciede2000(lab(a), lab(b))
}

/// Eight rows of Sharma et al.'s Table 1 (their test data):
/// the formula is theirs to four decimals, hue wrap-round included.
#[test]
fn ciede2000_matches_sharma_wu_dalal_table_1() {
    let rows: [(Lab, Lab, f64); 8] = [
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0011), 7.2195),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((50.0, 2.5, 0.0), (50.0, 3.1736, 0.5854), 1.0),
        (
            (60.2574, -34.0099, 36.2677),
            (60.4626, -34.1751, 39.4387),
            1.2644,
        ),
        (
            (90.8027, -2.0831, 1.441),
            (91.1528, -1.6435, 0.0447),
            1.4441,
        ),
        ((2.0776, 0.0795, -1.135), (0.9033, -0.0636, -0.5514), 0.9082),
    ];
    for (a, b, want) in rows {
        let got = ciede2000(a, b);
        assert!(
            (got - want).abs() < 1e-4,
            "{a:?} {b:?}: {got} against {want}"
        );
        assert!((ciede2000(b, a) - want).abs() < 1e-4, "not symmetric");
    }
}

fn compute(p: &Palette) -> [(&'static str, &'static str); 5] {
    [
        ("forward", p.forward),
        ("recompute", p.recompute),
        ("backward", p.backward),
        ("weight gradient", p.weight_gradient),
        ("optimizer step", p.step),
    ]
}

/// EP and CP, the axes issue 58 found colliding, at 20 or more from every
/// compute kind of chroma 10 or more and from every other axis, in both
/// themes.
#[test]
fn ep_and_cp_stand_apart_from_every_operation_and_axis() {
    for (theme, p) in [("light", &LIGHT), ("dark", &DARK)] {
        for axis in [Axis::Ep, Axis::Cp] {
            let colour = p.axis[axis.index()];
            let mut others: Vec<(&str, &str)> = compute(p)
                .into_iter()
                .filter(|(_, c)| chroma(c) >= GREY_CHROMA)
                .collect();
            others.extend(
                Axis::ALL
                    .iter()
                    .filter(|&&a| a != axis)
                    .map(|&a| (a.label(), p.axis[a.index()])),
            );
            for (what, other) in others {
                let d = distance(colour, other);
                assert!(
                    d >= MIN_DISTANCE,
                    "{theme}: {} {colour} and {what} {other} are {d:.1} apart",
                    axis.label()
                );
            }
        }
    }
}

/// The grey cut-off excepts only what it says: the near-black and
/// near-white backward pass and the dark theme's slate forward.
#[test]
fn only_near_grey_compute_kinds_are_excepted() {
    let excepted: Vec<String> = [("light", &LIGHT), ("dark", &DARK)]
        .into_iter()
        .flat_map(|(theme, p)| {
            compute(p)
                .into_iter()
                .filter(|(_, c)| chroma(c) < GREY_CHROMA)
                .map(move |(what, _)| format!("{theme} {what}"))
        })
        .collect();
    assert_eq!(
        excepted,
        ["light backward", "dark forward", "dark backward"]
    );
}
