//! What an axis's card says in words, visible without hover (a phone has
//! none): what its window is, what contention is, and why the axis is
//! exposed, computed from the report's figures alone.
//!
//! The three parts of an axis's communication (model.md 6) are named one
//! way everywhere: under compute (hidden), exposed (the compute stream
//! stood idle charged to it) and under another's wait (the stream stood
//! idle charged to another axis or to the bubble).

use overlap_core::{Axis, Report};

use crate::format;

/// What a window is, for every axis (model.md 5).
pub const WINDOW: &str =
    "Window: the compute that ran while this axis's collectives could legally \
run, from each one's data being ready until its result is first needed.";

/// What contention is, for every axis.
pub const CONTENTION: &str = "Contention: how much longer its collectives took than alone, \
because other axes' traffic shared the same links.";

/// The compute each axis can hide its communication behind: the thesis,
/// per axis (model.md 4 and 5), from the axis's words.
pub fn window_of(axis: Axis) -> &'static str {
    crate::axis_words::words(axis).window
}

/// The axes in the order the controls list their switches: those the
/// scenario has (`has`) first, so that the switch that matters on a preset
/// is near the top, then the rest, each group in `Axis::ALL` order.
pub fn axes_in_order(has: impl Fn(Axis) -> bool) -> Vec<Axis> {
    let (mut first, rest): (Vec<Axis>, Vec<Axis>) = Axis::ALL.into_iter().partition(|&a| has(a));
    first.extend(rest);
    first
}

/// The share of the traffic below which a part is not worth a clause.
const NEGLIGIBLE_SHARE: f64 = 0.01;

/// Why the axis is exposed as it is, in one or two sentences computed
/// from `r`'s figures on the GPU the step is read on; `None` for an axis
/// the report does not carry or that moves nothing.
pub fn reading(axis: Axis, r: &Report) -> Option<String> {
    let a = r.axes.reported(axis)?;
    if a.comm_ms <= 0.0 {
        return None;
    }
    let ms = |v: f64| format::ms_like(v, a.comm_ms.max(a.window_ms));
    let small = |v: f64| v <= NEGLIGIBLE_SHARE * a.comm_ms;
    let parts = format!(
        "Of its {} of traffic, {} ran under compute ({} hidden), {} was exposed",
        ms(a.comm_ms),
        ms(a.under_compute_ms),
        format::pct(a.hidden),
        ms(a.exposed_ms)
    );
    let parts = if small(a.under_idle_ms) {
        format!("{parts}.")
    } else {
        format!(
            "{parts} and {} ran under another's wait (compute stood idle for another axis or the bubble).",
            ms(a.under_idle_ms)
        )
    };
    let why = if small(a.exposed_ms) {
        "Nothing worth counting is exposed.".to_string()
    } else if a.window_ms < a.comm_ms {
        format!(
            "Its window, {}, is shorter than its traffic: at least {} of it cannot hide under compute.",
            ms(a.window_ms),
            ms(a.comm_ms - a.window_ms)
        )
    } else if a.contention_ms >= a.exposed_ms / 2.0 {
        format!(
            "Its window, {}, is longer than its traffic, yet it is exposed: its collectives took {} \
             longer than alone, serialised behind other axes' traffic on the same links.",
            ms(a.window_ms),
            ms(a.contention_ms)
        )
    } else {
        let contention = if small(a.contention_ms) {
            "there is no contention".to_string()
        } else {
            format!("contention adds only {}", ms(a.contention_ms))
        };
        format!(
            "Its window, {}, is longer than its traffic, yet it is exposed, and {contention}: the \
             window is not where the traffic is. Some of its collectives (those whose data is ready \
             last) have less compute within reach than they take, and the compute within reach of \
             the others cannot move to them.",
            ms(a.window_ms),
        )
    };
    Some(format!("{parts} {why}"))
}

/// Which axes shared which link with `axis`, and the delay it took: for an
/// axis whose contention is more than a negligible part of its traffic
/// (none is shown where it is zero). "Contention: its collectives took
/// 0.84 ms longer than alone. It moved data at once with EP for 12.3% of
/// NVLink's busy time, and with DP for 4.0% of the network's busy time."
pub fn contention_note(axis: Axis, r: &Report) -> Option<String> {
    let a = r.axes.reported(axis)?;
    if a.comm_ms <= 0.0 || a.contention_ms <= NEGLIGIBLE_SHARE * a.comm_ms {
        return None;
    }
    let head = format!(
        "Contention: its collectives took {} longer than alone.",
        format::ms_like(a.contention_ms, a.comm_ms)
    );
    let mut clauses = Vec::new();
    for (name, link) in [
        ("NVLink", &r.links.nvlink),
        ("the network", &r.links.network),
    ] {
        let mut with: Vec<(Axis, f64)> = link
            .shared_by
            .iter()
            .filter_map(|(pair, share)| {
                let (x, y) = pair.split_once('+')?;
                let (x, y) = (Axis::from_name(x)?, Axis::from_name(y)?);
                let other = match (x == axis, y == axis) {
                    (true, false) => y,
                    (false, true) => x,
                    _ => return None,
                };
                (*share > 0.0).then_some((other, *share))
            })
            .collect();
        with.sort_by(|p, q| q.1.total_cmp(&p.1));
        if with.is_empty() {
            continue;
        }
        let list: Vec<String> = with
            .iter()
            .enumerate()
            .map(|(i, (o, share))| {
                if i == 0 {
                    format!(
                        "{} for {} of {name}'s busy time",
                        o.label(),
                        format::pct(*share)
                    )
                } else {
                    format!("{} for {}", o.label(), format::pct(*share))
                }
            })
            .collect();
        clauses.push(format!("with {}", list.join(" and ")));
    }
    Some(if clauses.is_empty() {
        format!(
            "{head} No other axis moved data on its links at once: its own transfers, or the GPU \
             memory they share with compute, slowed it."
        )
    } else {
        format!("{head} It moved data at once {}.", clauses.join(", and "))
    })
}

/// Where the axis weighs most, when it moves measurably more there than
/// on the GPU the step is read on (model.md 6): "On GPU 3, where TP moves
/// most: 12.1 ms of traffic, 80.2% hidden under compute, 1.3 ms exposed."
pub fn heaviest_note(axis: Axis, r: &Report) -> Option<String> {
    let a = r.axes.reported(axis)?;
    let h = &a.heaviest;
    if h.comm_ms <= a.comm_ms * (1.0 + NEGLIGIBLE_SHARE) {
        return None;
    }
    let ms = |v: f64| format::ms_like(v, h.comm_ms);
    Some(format!(
        "On GPU {}, where {} moves most: {} of traffic, {} hidden under compute, {} exposed.",
        h.gpu,
        axis.label(),
        ms(h.comm_ms),
        format::pct(h.hidden),
        ms(h.exposed_ms)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::report::AxisReport;

    fn with(axis: Axis, a: AxisReport) -> Report {
        let mut r = Report::default();
        *r.axes.get_mut(axis) = a;
        r
    }

    /// Contention is shown where it is non-zero, with the axes it met on
    /// each link as the report's `shared_by` gives them, and nowhere else.
    #[test]
    fn contention_names_the_axes_that_share_each_link_where_it_is_non_zero() {
        let mut shown = 0;
        for preset in [
            "didactic",
            "contention",
            "moe-didactic",
            "long-context-ring",
        ] {
            let scenario = overlap_core::presets::scenario(preset).unwrap();
            let r = overlap_core::simulate(&scenario).report;
            for axis in Axis::ALL {
                let Some(a) = r.axes.reported(axis) else {
                    continue;
                };
                let note = contention_note(axis, &r);
                if a.contention_ms <= NEGLIGIBLE_SHARE * a.comm_ms {
                    assert!(note.is_none(), "{preset} {}: {note:?}", axis.label());
                    continue;
                }
                shown += 1;
                let note = note.unwrap();
                assert!(
                    note.starts_with("Contention: its collectives took "),
                    "{note}"
                );
                for (name, link) in [
                    ("NVLink", &r.links.nvlink),
                    ("the network", &r.links.network),
                ] {
                    for (pair, share) in &link.shared_by {
                        let (x, y) = pair.split_once('+').unwrap();
                        let other = if x == axis.name() {
                            y
                        } else if y == axis.name() {
                            x
                        } else {
                            continue;
                        };
                        let other = Axis::from_name(other).unwrap();
                        assert!(
                            note.contains(&format!(
                                "{} for {}",
                                other.label(),
                                format::pct(*share)
                            )) && note.contains(&format!("{name}'s busy time")),
                            "{preset} {}: {note} lacks {pair} on {name}",
                            axis.label()
                        );
                    }
                }
            }
        }
        assert!(
            shown >= 1,
            "no preset shows contention: the test saw nothing"
        );
    }

    #[test]
    fn contention_reads_link_by_link() {
        let mut r = with(
            Axis::Dp,
            AxisReport {
                comm_ms: 10.0,
                contention_ms: 2.0,
                ..AxisReport::default()
            },
        );
        r.links.network.shared_by.insert("dp+ep".into(), 0.25);
        r.links.network.shared_by.insert("tp+dp".into(), 0.05);
        r.links.nvlink.shared_by.insert("tp+pp".into(), 0.5);
        let s = contention_note(Axis::Dp, &r).unwrap();
        assert_eq!(
            s,
            "Contention: its collectives took 2.00 ms longer than alone. It moved data at once \
             with EP for 25.0% of the network's busy time and TP for 5.0%."
        );
        r.links.network.shared_by.clear();
        let s = contention_note(Axis::Dp, &r).unwrap();
        assert!(
            s.contains("No other axis moved data on its links at once"),
            "{s}"
        );
        r.axes.get_mut(Axis::Dp).contention_ms = 0.0;
        assert!(contention_note(Axis::Dp, &r).is_none());
    }

    #[test]
    fn a_short_window_is_named_with_the_traffic_that_cannot_hide() {
        let r = with(
            Axis::Tp,
            AxisReport {
                comm_ms: 10.0,
                exposed_ms: 6.0,
                under_compute_ms: 4.0,
                hidden: 0.4,
                window_ms: 4.0,
                ..AxisReport::default()
            },
        );
        let s = reading(Axis::Tp, &r).unwrap();
        assert!(s.contains("shorter than its traffic"), "{s}");
        assert!(s.contains("6.00 ms of it cannot hide"), "{s}");
        assert!(!s.contains("another's wait"), "{s}");
    }

    #[test]
    fn a_long_window_left_exposed_is_explained_by_the_run() {
        let queued = AxisReport {
            comm_ms: 6.7,
            exposed_ms: 5.4,
            under_compute_ms: 1.3,
            hidden: 0.19,
            window_ms: 7.98,
            contention_ms: 0.1,
            ..AxisReport::default()
        };
        let s = reading(Axis::Dp, &with(Axis::Dp, queued.clone())).unwrap();
        assert!(s.contains("the window is not where the traffic is"), "{s}");
        assert!(s.contains("adds only 0.10 ms"), "{s}");
        let alone = AxisReport {
            contention_ms: 0.0,
            ..queued.clone()
        };
        let s = reading(Axis::Dp, &with(Axis::Dp, alone)).unwrap();
        assert!(s.contains("and there is no contention:"), "{s}");
        let contended = AxisReport {
            contention_ms: 4.0,
            ..queued
        };
        let s = reading(Axis::Dp, &with(Axis::Dp, contended)).unwrap();
        assert!(s.contains("serialised behind other axes"), "{s}");
    }

    #[test]
    fn the_heaviest_gpu_is_named_only_where_it_moves_more() {
        let mut a = AxisReport {
            comm_ms: 10.0,
            ..AxisReport::default()
        };
        a.heaviest.comm_ms = 10.0;
        assert_eq!(heaviest_note(Axis::Ep, &with(Axis::Ep, a.clone())), None);
        a.heaviest = overlap_core::report::HeaviestGpu {
            gpu: 24,
            comm_ms: 30.0,
            under_compute_ms: 27.0,
            exposed_ms: 3.0,
            hidden: 0.9,
            ..Default::default()
        };
        let s = heaviest_note(Axis::Ep, &with(Axis::Ep, a)).unwrap();
        assert!(s.starts_with("On GPU 24, where EP moves most"), "{s}");
        assert!(s.contains("90.0% hidden"), "{s}");
    }

    #[test]
    fn the_scenarios_own_axes_come_first() {
        let order = axes_in_order(|a| matches!(a, Axis::Dp | Axis::Ep));
        assert_eq!(
            order,
            vec![Axis::Dp, Axis::Ep, Axis::Tp, Axis::Pp, Axis::Cp]
        );
        assert_eq!(axes_in_order(|_| true), Axis::ALL.to_vec());
    }

    #[test]
    fn every_axis_has_its_window_and_nothing_is_said_of_silence() {
        for axis in Axis::ALL {
            assert!(!window_of(axis).is_empty());
            assert_eq!(reading(axis, &Report::default()), None);
        }
    }
}
