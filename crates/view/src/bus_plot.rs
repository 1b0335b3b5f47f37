//! Bus bandwidth against message size on a log axis, nccl-tests' way, with
//! published figures beside the simulated curves.

use overlap_core::sweep::BusPoint;
use overlap_core::timeline::{Axis, Phase};

use crate::display_list::{Align, Rect, Shape, FONT_PX};
use crate::format;
use crate::palette::Role;
use crate::plot::{
    blank, bytes_tick, hline, log_ticks, polyline, value_axis, Mark, Plot, Scale, Swatch,
    AXIS_LABEL_PX,
};

/// One collective's curve for [`bus_plot`].
#[derive(Clone, Debug, PartialEq)]
pub struct BusCurve {
    /// Its name ("all_reduce").
    pub name: String,
    /// nccl-tests' sizes, simulated.
    pub points: Vec<BusPoint>,
}

/// A published bus bandwidth (published.md section 8) to draw beside the curves.
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    /// The buffer, bytes.
    pub bytes: f64,
    /// Bus bandwidth, GB/s.
    pub bus_gbps: f64,
    /// What was measured and where it was published.
    pub source: &'static str,
}

/// MiB.
const MIB: f64 = 1024.0 * 1024.0;

/// The public nccl-tests figures of published.md section 8 for an AllReduce
/// over `nodes` nodes of the hardware preset `preset` (with `nic_gbps` per
/// GPU), empty when none were published for that system. Each is drawn at
/// the size its source names, or at 4 GiB (nccl-tests' `-e 4G`) where the
/// source says "large sizes".
pub fn published_all_reduce(preset: &str, nodes: u32, nic_gbps: f64) -> Vec<Published> {
    use overlap_core::HardwarePreset::{DgxA100, DgxH100};
    match (overlap_core::HardwarePreset::from_name(preset), nodes) {
        (Some(DgxH100), 1) => vec![
            Published {
                bytes: 4096.0 * MIB,
                bus_gbps: 368.8,
                source: "Ring, NVLS off: 368.8 (nccl-tests issue 309)",
            },
            Published {
                bytes: 512.0 * MIB,
                bus_gbps: 480.0,
                source: "NVLS past 256 MB: about 480 (nccl-tests issue 212)",
            },
        ],
        (Some(DgxA100), 1) => vec![
            Published {
                bytes: 4096.0 * MIB,
                bus_gbps: 200.0,
                source: "8 x A100: 200 (nccl-tests issue 149)",
            },
            Published {
                bytes: 4096.0 * MIB,
                bus_gbps: 230.0,
                source: "8 x A100: 230 (nccl-tests issue 178)",
            },
        ],
        // Four HDR NICs for eight GPUs: 12.5 GB/s per GPU.
        (Some(DgxA100), 3) if (nic_gbps - 12.5).abs() < 1e-9 => vec![Published {
            bytes: 4096.0 * MIB,
            bus_gbps: 96.0,
            source: "3 DGX A100, 4 HDR NICs each: 96 at best (nccl-tests issue 119)",
        }],
        _ => Vec::new(),
    }
}

/// The role of the `i`-th collective's curve.
fn curve_role(i: usize) -> Role {
    match i {
        0 => Role::Axis(Axis::Tp),
        1 => Role::Axis(Axis::Pp),
        2 => Role::Axis(Axis::Dp),
        _ => Role::Phase(Phase::Step),
    }
}

/// Bus bandwidth against message size: each curve on a log x axis (bytes)
/// and linear y axis (GB/s), where NCCL's algorithm or protocol changes a
/// tick and its name; published figures as outlined squares with their
/// source; and each of `marks` (bytes, text) as a dashed vertical line:
/// "your TP chunks are 3 MiB each: here". `group` names the GPUs the
/// curves are measured on ("TP's group: 4 GPUs in 1 node"). Each curve's
/// points are its marks.
pub fn bus_plot(
    curves: &[BusCurve],
    published: &[Published],
    marks_at: &[(f64, String)],
    group: Option<&str>,
    width: f64,
    height: f64,
) -> Plot {
    let (mut list, mut legend) = blank(width, height);
    if let Some(g) = group {
        legend.note(&mut list, &format!("measured on {g}"));
    }
    let (x0, x1) = (legend.left, legend.right);
    let bottom = height - AXIS_LABEL_PX - 6.0 - 14.0 * published.len() as f64;
    for (i, curve) in curves.iter().enumerate() {
        // The choice at the smallest size goes in the legend; each switch
        // after it is written on the curve.
        let label = match curve.points.first() {
            Some(p) => format!(
                "{} ({}/{} at {})",
                curve.name,
                p.algorithm,
                p.protocol,
                bytes_tick(p.bytes)
            ),
            None => curve.name.clone(),
        };
        legend.item(&mut list, curve_role(i), Swatch::Fill, &label);
    }
    if published.is_empty() {
        legend.note(&mut list, "no published nccl-tests figures for this system");
    } else {
        legend.item(
            &mut list,
            Role::Text,
            Swatch::Square,
            "nccl-tests, published",
        );
    }
    let top = legend.top() + 8.0;
    let all = curves.iter().flat_map(|c| c.points.iter());
    let (lo, hi) = all.clone().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.bytes), hi.max(p.bytes))
    });
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (8.0, 4096.0 * MIB)
    };
    let xs = Scale {
        lo,
        hi,
        log: true,
        px0: x0 + 4.0,
        px1: x1 - 4.0,
    };
    let top_gbps = all
        .map(|p| p.bus_gbps)
        .chain(published.iter().map(|p| p.bus_gbps))
        .fold(0.0, f64::max);
    let ys = value_axis(
        &mut list,
        (top_gbps.max(1.0), 5.0),
        (bottom, top),
        (x0, x1),
        "bus bandwidth, GB/s",
    );
    // Powers of two, at most ten of them labelled: 8 B, 128 B, 2 KiB, ...
    for t in log_ticks(lo, hi, 2.0, 10) {
        let x = xs.at(t);
        list.shapes.push(Shape::Line {
            from: (x, top),
            to: (x, bottom),
            stroke: Role::Grid,
            dashed: false,
        });
        list.text(Role::Muted, x, bottom + 12.0, Align::Middle, bytes_tick(t));
    }
    list.text(
        Role::Text,
        (x0 + x1) / 2.0,
        bottom + 12.0 + FONT_PX + 6.0,
        Align::Middle,
        "message size (log scale)",
    );
    hline(&mut list, x0, x1, bottom, Role::Muted, false);

    let mut marks = Vec::new();
    for (i, curve) in curves.iter().enumerate() {
        let role = curve_role(i);
        let pts: Vec<(f64, f64)> = curve
            .points
            .iter()
            .map(|p| (xs.at(p.bytes), ys.at(p.bus_gbps)))
            .collect();
        polyline(&mut list, &pts, role, false, 6.0);
        let mut previous: Option<(&str, &str)> = None;
        for (k, (p, &(x, y))) in curve.points.iter().zip(&pts).enumerate() {
            list.rect(role, x - 2.0, y - 2.0, 4.0, 4.0);
            marks.push(Mark {
                index: k,
                rect: Rect {
                    x: x - 4.0,
                    y: y - 4.0,
                    w: 8.0,
                    h: 8.0,
                },
                value: format::raw(p.bytes),
            });
            let now = (p.algorithm.as_str(), p.protocol.as_str());
            if previous.is_some_and(|p| p != now) {
                // Where NCCL switches: the new choice, written above the point.
                list.shapes.push(Shape::Line {
                    from: (x, y - 4.0),
                    to: (x, y - 12.0),
                    stroke: role,
                    dashed: false,
                });
                list.text(
                    role,
                    x + 2.0,
                    y - 18.0 - 12.0 * i as f64,
                    Align::Start,
                    format!("{}/{}", now.0, now.1),
                );
            }
            previous = Some(now);
        }
    }
    // Published figures: outlined squares, numbered, their sources listed below.
    for (n, p) in published.iter().enumerate() {
        let (x, y) = (xs.at(p.bytes), ys.at(p.bus_gbps));
        list.shapes.push(Shape::Outline {
            rect: Rect {
                x: x - 4.0,
                y: y - 4.0,
                w: 8.0,
                h: 8.0,
            },
            stroke: Role::Text,
            width: 1.5,
        });
        list.text(
            Role::Text,
            x,
            y - 13.0,
            Align::Middle,
            format!("[{}]", n + 1),
        );
        list.text(
            Role::Muted,
            x0,
            height - 10.0 - 14.0 * (published.len() - 1 - n) as f64,
            Align::Start,
            format!("[{}] published: {}", n + 1, p.source),
        );
    }
    for (k, (bytes, text)) in marks_at.iter().enumerate() {
        let (bytes, text) = (*bytes, text.clone());
        let x = xs.at(bytes.clamp(lo, hi));
        list.shapes.push(Shape::Line {
            from: (x, top),
            to: (x, bottom),
            stroke: Role::Text,
            dashed: true,
        });
        let align = if x > (x0 + x1) / 2.0 {
            Align::End
        } else {
            Align::Start
        };
        let tx = if align == Align::End {
            x - 4.0
        } else {
            x + 4.0
        };
        list.text(Role::Text, tx, top + 6.0 + 14.0 * k as f64, align, text);
    }
    Plot { list, marks }
}

/// "your TP chunks are 3 MiB each: here", for the bus plot's mark.
pub fn tp_mark_text(bytes: f64, chunks: u32) -> String {
    let what = if chunks > 1 {
        "your TP chunks are"
    } else {
        "your TP collectives are"
    };
    format!("{what} {} each: here", bytes_tick(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;

    #[test]
    fn the_bus_plot_has_a_log_axis_switch_labels_published_points_and_the_mark() {
        let input = presets::find("didactic").unwrap().input();
        let mut hw = input.hardware.clone();
        hw.preset = Some(overlap_core::HardwarePreset::DgxH100);
        hw.nodes = Some(1);
        let points =
            overlap_core::sweep::bus_curve(&hw, overlap_core::scenario::CollectiveOp::AllReduce)
                .unwrap();
        let curve = BusCurve {
            name: "all_reduce".into(),
            points,
        };
        let published = published_all_reduce("dgx-h100", 1, 0.0);
        let plot = bus_plot(
            &[curve],
            &published,
            &[(3.0 * MIB, tp_mark_text(3.0 * MIB, 4))],
            Some("TP's group: 8 GPUs in 1 node"),
            720.0,
            400.0,
        );
        let texts: Vec<&str> = plot.list.texts().collect();
        // nccl-tests issue 309's switch on one H100 node, both named.
        assert!(
            texts.contains(&"all_reduce (Ring/LL at 8 B)") && texts.contains(&"NVLS/Simple"),
            "{texts:?}"
        );
        assert!(texts.contains(&"your TP chunks are 3 MiB each: here"));
        assert!(
            texts.contains(&"measured on TP's group: 8 GPUs in 1 node"),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t.contains("nccl-tests issue 212")));
        // Powers of two spaced evenly: each doubling the same width.
        let xs: Vec<f64> = plot.marks.iter().map(|m| m.rect.x).collect();
        assert_eq!(xs.len(), 30);
        let d0 = xs[1] - xs[0];
        assert!(xs.windows(2).all(|w| ((w[1] - w[0]) - d0).abs() < 1e-6));
        assert!(
            texts.contains(&"32 B") && texts.contains(&"1 KiB"),
            "{texts:?}"
        );
        assert!(published_all_reduce("dgx-h100", 2, 0.0).is_empty());
    }
}
