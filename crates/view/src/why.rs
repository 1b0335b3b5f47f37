//! Why the step changed, in one sentence, from the two reports alone.
//!
//! Each instant of a GPU's step is compute, idle charged to one axis
//! (exposed) or idle charged to the bubble, once (model.md section 5):
//! step = compute + sum of exposed + bubble, exactly. So the change of the
//! step is the change of those parts (compute, one per axis of
//! `Axis::ALL`, bubble), and the sentence names the parts that moved it,
//! largest first, with the reason the reports give for each:
//!
//! "DP overlap on: pipeline bubble +403.0 ms, waiting on other stages'
//! compute, slowed by the collectives now running under it, while DP
//! exposed −71.3 ms: step +338.0 ms."
//!
//! Every figure of a sentence is written in one unit, the one its largest
//! figure takes, and a figure that rounds to zero carries no sign.

use std::cell::Cell;

use overlap_core::{Axis, Report};

use crate::format;

/// A part of the step whose change is named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The compute stream's busy time.
    Compute,
    /// Idle time charged to an axis's communication.
    Exposed(Axis),
    /// Idle time waiting on another GPU's compute.
    Bubble,
}

/// The parts of the step in a report, ms: compute, each axis's exposed time
/// in `Axis::ALL` order, the bubble. They sum to the step (model.md 5).
pub fn parts(r: &Report) -> Vec<(Part, f64)> {
    let mut out = vec![(Part::Compute, r.compute_ms)];
    out.extend(
        Axis::ALL
            .iter()
            .map(|&a| (Part::Exposed(a), r.axes.get(a).exposed_ms)),
    );
    out.push((Part::Bubble, r.bubble_fraction * r.step_time_ms));
    out
}

/// How each part moved from `before` to `after`, ms, largest move first.
pub fn changes(before: &Report, after: &Report) -> Vec<(Part, f64)> {
    let mut out: Vec<(Part, f64)> = parts(before)
        .iter()
        .zip(parts(after))
        .map(|((p, b), (_, a))| (*p, a - b))
        .collect();
    out.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    out
}

/// A step that moves less than this share of itself has not changed (the
/// figures print 3-4 significant digits: `format::ms`).
const UNCHANGED_SHARE: f64 = 1e-4;

/// A part is named when it moved by at least this share of the step's move
/// (smaller ones are the rounding of the larger) ...
const NAMED_SHARE: f64 = 0.05;

/// ... or by more than this share of the step itself: issue 58 asks every
/// sentence to name every axis that moved that much, even when the moves
/// cancel and the step barely changes.
pub const STEP_SHARE: f64 = 0.01;

/// The parts the sentence names, largest move first.
pub fn named(before: &Report, after: &Report) -> Vec<(Part, f64)> {
    let step = after.step_time_ms - before.step_time_ms;
    let scale = before.step_time_ms.abs().max(after.step_time_ms.abs());
    changes(before, after)
        .into_iter()
        .filter(|(_, d)| d.abs() >= NAMED_SHARE * step.abs() || d.abs() > STEP_SHARE * scale)
        .collect()
}

/// The figures of one sentence, all in the unit of its largest.
struct Unit {
    /// The largest figure of the sentence, ms: it sets unit and decimals.
    largest_ms: f64,
    /// The largest figure written so far: a first writing of the sentence
    /// measures it, a second writes every figure in its unit.
    seen_ms: Cell<f64>,
}

impl Unit {
    fn new(largest_ms: f64) -> Self {
        Unit {
            largest_ms,
            seen_ms: Cell::new(0.0),
        }
    }

    fn ms(&self, v: f64) -> String {
        self.seen_ms.set(self.seen_ms.get().max(v.abs()));
        format::ms_like(v, self.largest_ms)
    }

    /// A signed duration, "+336.0 ms", "−71.0 ms"; one that rounds to zero
    /// is written without a sign.
    fn signed(&self, ms: f64) -> String {
        let text = self.ms(ms.abs());
        if !text.chars().any(|c| c.is_ascii_digit() && c != '0') {
            text
        } else if ms < 0.0 {
            format!("−{text}")
        } else {
            format!("+{text}")
        }
    }
}

/// The communication that ran under compute, summed over the axes, ms.
fn under_compute_ms(r: &Report) -> f64 {
    Axis::ALL
        .iter()
        .map(|&a| r.axes.get(a).under_compute_ms)
        .sum()
}

/// What an axis moves, in a reader's words: the subject of its template.
fn traffic(axis: Axis) -> &'static str {
    crate::axis_words::words(axis).traffic
}

/// The words for one part's move, with its reason where the reports give one.
fn words(part: Part, delta_ms: f64, before: &Report, after: &Report, u: &Unit) -> String {
    // More (or less) communication now runs under compute: its kernels take
    // SMs and HBM bandwidth from the compute beside them (model.md 3).
    let beside = under_compute_ms(after) - under_compute_ms(before);
    match part {
        Part::Compute => {
            if delta_ms > 0.0 && beside > 0.0 {
                format!(
                    "compute {}, slowed by the collectives now running under it (their SMs and HBM traffic)",
                    u.signed(delta_ms)
                )
            } else if delta_ms < 0.0 && beside < 0.0 {
                format!(
                    "compute {} (fewer collectives running under it)",
                    u.signed(delta_ms)
                )
            } else {
                format!("compute {}", u.signed(delta_ms))
            }
        }
        Part::Exposed(axis) => axis_words(axis, delta_ms, before, after, u),
        Part::Bubble => {
            if delta_ms > 0.0 && beside > 0.0 {
                // This GPU waits longer on the others' compute, which the
                // collectives now beside it slow.
                format!(
                    "pipeline bubble {}, waiting on other stages' compute, slowed by the collectives now running under it",
                    u.signed(delta_ms)
                )
            } else {
                format!("pipeline bubble {}", u.signed(delta_ms))
            }
        }
    }
}

/// One axis's template: "EP exposed −108.0 ms (its all-to-alls now run
/// 95.2 ms more under compute)", the reason chosen from how its three parts
/// (under compute, exposed, under another's wait: model.md 6), its window
/// and its contention moved.
fn axis_words(axis: Axis, delta_ms: f64, before: &Report, after: &Report, u: &Unit) -> String {
    let (b, a) = (before.axes.get(axis), after.axes.get(axis));
    let head = format!("{} exposed {}", axis.label(), u.signed(delta_ms));
    // Time it no longer spends under compute, ms.
    let lost_ms = b.under_compute_ms - a.under_compute_ms;
    let serialised = delta_ms > 0.0
        && a.window_ms > 0.5 * b.window_ms
        && lost_ms >= 0.5 * delta_ms
        && (a.comm_ms - b.comm_ms).abs() < delta_ms;
    let shared = a.contention_ms - b.contention_ms;
    if serialised {
        // The room to hide it is still there, yet it runs less (or no
        // longer) under compute: it waits in line with compute.
        let how = if a.under_compute_ms <= 0.05 * b.under_compute_ms {
            "it no longer runs under compute".to_string()
        } else {
            format!("{} less of it runs under compute", u.ms(lost_ms))
        };
        format!("{head} ({how}, though its window is {})", u.ms(a.window_ms))
    } else if delta_ms > 0.0 && shared > 0.5 * delta_ms {
        format!("{head} ({} more lost to sharing links)", u.ms(shared))
    } else if delta_ms < 0.0 && -lost_ms >= -0.5 * delta_ms {
        format!(
            "{head} (its {} now run {} more under compute)",
            traffic(axis),
            u.ms(-lost_ms)
        )
    } else if delta_ms > 0.0 && lost_ms >= 0.5 * delta_ms {
        format!(
            "{head} (its {} now run {} less under compute)",
            traffic(axis),
            u.ms(lost_ms)
        )
    } else {
        head
    }
}

/// Why the step moved from `before` to `after`, in one sentence, after
/// `change` (what the reader changed, e.g. "DP overlap on"); `None` when
/// the step did not move.
pub fn sentence(before: &Report, after: &Report, change: Option<&str>) -> Option<String> {
    let step = after.step_time_ms - before.step_time_ms;
    if step.abs() <= UNCHANGED_SHARE * before.step_time_ms.abs().max(after.step_time_ms) {
        return None;
    }
    let named = named(before, after);
    let (with, against): (Vec<_>, Vec<_>) =
        named.iter().partition(|(_, d)| d.signum() == step.signum());
    let write = |u: &Unit| {
        let list = |items: &[&(Part, f64)]| {
            items
                .iter()
                .map(|(p, d)| words(*p, *d, before, after, u))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // What moved the step first, largest first; what moved the other
        // way after "while". The parts sum to the step, so some part moved
        // with it by at least 1 / (Axis::COUNT + 2) of its move, more than
        // NAMED_SHARE: `with` is never empty, and the sentence never reads
        // "on: , while".
        let mut text = String::new();
        if let Some(c) = change {
            text.push_str(c);
            text.push_str(": ");
        }
        text.push_str(&list(&with));
        if !against.is_empty() {
            text.push_str(", while ");
            text.push_str(&list(&against));
        }
        text.push_str(&format!(": step {}.", u.signed(step)));
        text
    };
    let measure = Unit::new(step.abs());
    write(&measure);
    Some(write(&Unit::new(measure.seen_ms.get())))
}

/// Most changed fields named in a change's words; more are counted.
const CHANGE_NAMED_MAX: usize = 2;

/// What changed between two scenarios, in the page's words: "DP overlap
/// on", "Network bandwidth 50 → 12.5" or "3 settings changed"; `None` when
/// no field of the core's table differs.
pub fn change_label(
    before: &overlap_core::Scenario,
    after: &overlap_core::Scenario,
) -> Option<String> {
    use overlap_core::input::fields::{Field, FIELDS};
    use serde_json::Value;
    let changed: Vec<String> = FIELDS
        .iter()
        .filter_map(|f| {
            let (b, a) = ((f.resolved)(before), (f.resolved)(after));
            (b != a).then(|| match (&b, &a) {
                (_, Some(Value::Bool(on))) => {
                    format!("{} {}", f.label, if *on { "on" } else { "off" })
                }
                _ => {
                    let text = |v: &Option<Value>| v.as_ref().map_or("–".to_string(), Field::text);
                    let unit = if f.unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", f.unit)
                    };
                    format!("{} {} → {}{unit}", f.label, text(&b), text(&a))
                }
            })
        })
        .collect();
    match changed.len() {
        0 => None,
        n if n <= CHANGE_NAMED_MAX => Some(changed.join(", ")),
        n => Some(format!("{n} settings changed")),
    }
}
