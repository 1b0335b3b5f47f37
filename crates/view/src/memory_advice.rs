//! The fullest GPU's memory as the page shows it: the four parts of the
//! report's `memory_gb` as one stacked bar against the GPU's capacity, and,
//! when they do not fit, one plain warning that names the biggest part and
//! what would shrink it. Every number in the warning is computed here from
//! the report's figures and the scenario; the page only renders it.

use overlap_core::memory::{activation_bytes_per_layer, dp_shards};
use overlap_core::output::metric::MemoryFigure;
use overlap_core::report::MemoryGb;
use overlap_core::scenario::{Recompute, Workload};
use overlap_core::Scenario;

use crate::format;

/// The four parts of the bar, bottom of the stack first, as the report lists them.
pub const PARTS: [MemoryFigure; 4] = [
    MemoryFigure::Weights,
    MemoryFigure::Gradients,
    MemoryFigure::Optimizer,
    MemoryFigure::Activations,
];

/// A part's name inside a sentence ("the optimizer states").
pub fn part_name(part: MemoryFigure) -> &'static str {
    match part {
        MemoryFigure::Weights => "weights",
        MemoryFigure::Gradients => "gradients",
        MemoryFigure::Optimizer => "optimizer states",
        MemoryFigure::Activations => "activations",
        MemoryFigure::Total => "total",
        MemoryFigure::Capacity => "GPU memory",
    }
}

/// A part's size in the report, GB.
pub fn part_gb(m: &MemoryGb, part: MemoryFigure) -> f64 {
    part.of(m)
}

/// One segment of the stacked bar, in fractions of the bar's full length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Which part.
    pub part: MemoryFigure,
    /// Where it starts, 0..1 of the bar.
    pub start: f64,
    /// How long it is, 0..1 of the bar.
    pub width: f64,
}

/// The bar's scale: the larger of the total and the capacity, so that an
/// overflowing stack reaches past the capacity mark and a fitting one stops
/// short of it.
pub fn scale_gb(m: &MemoryGb) -> f64 {
    m.total.max(m.capacity).max(1e-12)
}

/// The four segments, stacked left to right, and the capacity mark's
/// position (0..1), on the scale of [`scale_gb`].
pub fn segments(m: &MemoryGb) -> ([Segment; 4], f64) {
    let scale = scale_gb(m);
    let mut start = 0.0;
    let segs = PARTS.map(|part| {
        let width = part_gb(m, part).max(0.0) / scale;
        let seg = Segment { part, start, width };
        start += width;
        seg
    });
    (segs, (m.capacity / scale).min(1.0))
}

/// The part that takes the most memory (the first of equals, in report order).
pub fn biggest(m: &MemoryGb) -> MemoryFigure {
    PARTS
        .into_iter()
        .fold(None::<(MemoryFigure, f64)>, |best, part| {
            let gb = part_gb(m, part);
            match best {
                Some((_, b)) if b >= gb => best,
                _ => Some((part, gb)),
            }
        })
        .map_or(MemoryFigure::Weights, |(p, _)| p)
}

/// Which of the training state the data-parallel replicas already shard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sharded {
    /// Optimizer states split across the replicas (distributed optimizer, ZeRO-1).
    pub optimizer: bool,
    /// Gradients split too (ZeRO-2).
    pub gradients: bool,
    /// Weights split too (FSDP, ZeRO-3).
    pub weights: bool,
}

/// What the scenario's `dp_sharding` already shards, read from the core's
/// own count (`overlap_core::memory::dp_shards`): the distributed optimizer
/// its optimizer states only (it keeps the whole gradient buffer), FSDP all
/// three, its gradients not while they accumulate unsynchronised.
pub fn sharded(s: &Scenario) -> Sharded {
    let (weights, gradients, optimizer) = dp_shards(s);
    Sharded {
        optimizer: optimizer > 1.0,
        gradients: gradients > 1.0,
        weights: weights > 1.0,
    }
}

/// The warning for a configuration that does not fit, or `None` when it does.
pub fn advice(m: &MemoryGb, s: &Scenario) -> Option<String> {
    advice_with(m, s, sharded(s))
}

/// [`advice`], with what the replicas already shard given.
pub fn advice_with(m: &MemoryGb, s: &Scenario, sharded: Sharded) -> Option<String> {
    if m.fits {
        return None;
    }
    let part = biggest(m);
    let gb = part_gb(m, part);
    let share = gb / m.total.max(1e-12);
    let head = format!(
        "Does not fit: the fullest GPU needs {} against its {} ({} over). The biggest part is the {}, {} ({} of the total).",
        format::gb(m.total),
        format::gb(m.capacity),
        format::gb(m.total - m.capacity),
        part_name(part),
        format::gb(gb),
        format::pct(share),
    );
    Some(format!("{head} {}", remedy(m, s, sharded, part)))
}

/// What would shrink `part`, with the figure it would come to.
fn remedy(m: &MemoryGb, s: &Scenario, sharded: Sharded, part: MemoryFigure) -> String {
    // The ranks that reduce each gradient, and so share its shards: the DP
    // replicas times the CP ranks (`Parallel::dp_group`).
    let dp = s.parallel.dp_group();
    let ranks = if s.parallel.cp > 1 {
        format!("{dp} data-parallel and context-parallel ranks")
    } else {
        format!("{dp} data-parallel replicas")
    };
    let gb = part_gb(m, part);
    let more_tp_pp = "More TP or PP also shrinks it: each splits the parameters over more GPUs.";
    let cut = |what: String, after: f64| {
        format!(
            "{what} would cut it to {}, {}.",
            format::gb(after),
            landing(m, gb, after)
        )
    };
    let shard = |what: &str| {
        cut(
            format!("Sharding it across the {ranks} ({what})"),
            gb / f64::from(dp),
        )
    };
    match part {
        MemoryFigure::Optimizer if dp > 1 && !sharded.optimizer => {
            format!(
                "{} {more_tp_pp}",
                shard("dp_sharding \"optimizer\": the distributed optimizer, ZeRO-1")
            )
        }
        // The scenario has no ZeRO-2: gradients shard with the weights.
        MemoryFigure::Gradients if dp > 1 && !sharded.gradients => {
            format!(
                "{} {more_tp_pp}",
                shard("dp_sharding \"full\": FSDP, ZeRO-3, with the weights")
            )
        }
        MemoryFigure::Weights if dp > 1 && !sharded.weights => {
            format!(
                "{} {more_tp_pp}",
                shard("dp_sharding \"full\": FSDP, ZeRO-3")
            )
        }
        MemoryFigure::Optimizer | MemoryFigure::Gradients | MemoryFigure::Weights => {
            let why = if dp > 1 {
                format!("the {ranks} already shard it")
            } else {
                "with one data-parallel replica and one context-parallel rank there is nothing to shard it across"
                    .to_string()
            };
            format!("More TP or PP shrinks it: each splits the parameters over more GPUs ({why}).")
        }
        MemoryFigure::Activations => activations_remedy(m, s, gb),
        MemoryFigure::Total | MemoryFigure::Capacity => String::new(),
    }
}

fn activations_remedy(m: &MemoryGb, s: &Scenario, gb: f64) -> String {
    let others = "more TP with sequence parallelism, more PP, or a schedule that keeps fewer micro-batches in flight";
    let Workload::Transformer(t) = &s.workload else {
        return "A smaller GEMM shrinks them.".to_string();
    };
    if t.recompute == Recompute::Full {
        return format!("They are already recomputed in full; {others} shrinks them.");
    }
    // Full recomputation keeps each layer's input only: the same micro-batches
    // in flight, at the per-layer size of Korthikanti et al.'s formula.
    let now = activation_bytes_per_layer(t, s.parallel.tp);
    let mut full = t.clone();
    full.recompute = Recompute::Full;
    let after = gb * activation_bytes_per_layer(&full, s.parallel.tp) / now.max(1e-12);
    format!(
        "Recomputing them in full (recompute \"full\", which keeps only each layer's input) would cut them to {}, \
         {}; so would {others}.",
        format::gb(after),
        landing(m, gb, after)
    )
}

/// Where the total lands when a part of `part_gb` is cut to `after_gb`:
/// "a total of X (which fits)" or "(still over)".
fn landing(m: &MemoryGb, part_gb: f64, after_gb: f64) -> String {
    let total = m.total - part_gb + after_gb;
    let verdict = if total <= m.capacity {
        "which fits"
    } else {
        "still over"
    };
    format!("a total of {} ({verdict})", format::gb(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;
    use overlap_core::scenario::DpSharding;

    fn scenario_with(edit: impl FnOnce(&mut Scenario)) -> Scenario {
        let mut s = presets::scenario("megatron-1t").expect("the preset resolves");
        edit(&mut s);
        s
    }

    #[test]
    fn segments_stack_the_four_parts_on_the_larger_of_total_and_capacity() {
        let m = MemoryGb::from_parts(10.0, 10.0, 60.0, 20.0, 80.0);
        let (segs, cap) = segments(&m);
        assert_eq!(segs.map(|s| s.part), PARTS);
        assert!((segs[3].start + segs[3].width - 1.0).abs() < 1e-12);
        assert!((segs[2].start - 0.2).abs() < 1e-12 && (segs[2].width - 0.6).abs() < 1e-12);
        assert!((cap - 0.8).abs() < 1e-12);
        // A fitting stack stops short of the capacity mark, at the end of the bar.
        let (segs, cap) = segments(&MemoryGb::from_parts(10.0, 5.0, 5.0, 20.0, 80.0));
        assert!((segs[3].start + segs[3].width - 0.5).abs() < 1e-12);
        assert_eq!(cap, 1.0);
    }

    #[test]
    fn a_configuration_that_fits_gets_no_warning() {
        let s = scenario_with(|_| {});
        assert_eq!(
            advice(&MemoryGb::from_parts(10.0, 5.0, 5.0, 20.0, 80.0), &s),
            None
        );
    }

    #[test]
    fn unsharded_optimizer_states_are_named_with_their_sharded_size() {
        let s = scenario_with(|s| s.parallel.dp = 6);
        let m = MemoryGb::from_parts(10.0, 10.0, 60.0, 20.0, 80.0);
        assert_eq!(biggest(&m), MemoryFigure::Optimizer);
        let text = advice(&m, &s).expect("over capacity");
        assert!(
            text.starts_with(
                "Does not fit: the fullest GPU needs 100.0 GB against its 80.0 GB (20.0 GB over)."
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "The biggest part is the optimizer states, 60.0 GB (60.0% of the total)."
            ),
            "{text}"
        );
        // 60 / 6 = 10 GB; 100 - 60 + 10 = 50 GB, under 80.
        assert!(text.contains("across the 6 data-parallel replicas (dp_sharding \"optimizer\": the distributed optimizer, ZeRO-1) would cut it to 10.0 GB, a total of 50.0 GB (which fits)."), "{text}");
        assert!(text.contains("More TP or PP"), "{text}");
    }

    #[test]
    fn without_replicas_to_shard_across_more_tp_or_pp_is_the_advice() {
        let s = scenario_with(|s| s.parallel.dp = 1);
        let text =
            advice(&MemoryGb::from_parts(10.0, 10.0, 60.0, 20.0, 80.0), &s).expect("over capacity");
        assert!(text.contains("More TP or PP shrinks it"), "{text}");
        assert!(text.contains("nothing to shard it across"), "{text}");
        let sharded = Sharded {
            optimizer: true,
            gradients: false,
            weights: false,
        };
        let s = scenario_with(|s| s.parallel.dp = 4);
        let text = advice_with(
            &MemoryGb::from_parts(10.0, 10.0, 60.0, 20.0, 80.0),
            &s,
            sharded,
        )
        .expect("over");
        assert!(
            text.contains("the 4 data-parallel replicas already shard it"),
            "{text}"
        );
    }

    #[test]
    fn weights_and_gradients_name_their_own_sharding() {
        let s = scenario_with(|s| s.parallel.dp = 2);
        let text = advice(&MemoryGb::from_parts(70.0, 20.0, 0.0, 0.0, 80.0), &s).expect("over");
        assert!(
            text.contains("biggest part is the weights")
                && text.contains("FSDP, ZeRO-3")
                && text.contains("35.0 GB"),
            "{text}"
        );
        let text = advice(&MemoryGb::from_parts(20.0, 70.0, 0.0, 0.0, 80.0), &s).expect("over");
        assert!(
            text.contains("biggest part is the gradients")
                && text.contains("dp_sharding \"full\": FSDP, ZeRO-3, with the weights")
                && text.contains("35.0 GB"),
            "{text}"
        );
    }

    #[test]
    fn the_scenarios_own_sharding_is_read_and_cp_ranks_share_the_shards() {
        // The distributed optimizer already shards the optimizer states:
        // the advice does not offer it again.
        let s = scenario_with(|s| {
            s.parallel.dp = 4;
            s.parallel.dp_sharding = DpSharding::Optimizer;
        });
        let m = MemoryGb::from_parts(10.0, 10.0, 60.0, 20.0, 80.0);
        let text = advice(&m, &s).expect("over");
        assert!(
            text.contains("the 4 data-parallel replicas already shard it"),
            "{text}"
        );
        // FSDP shards the gradients too.
        let s = scenario_with(|s| {
            s.parallel.dp = 4;
            s.parallel.dp_sharding = DpSharding::Full;
        });
        let text = advice(&MemoryGb::from_parts(10.0, 70.0, 0.0, 20.0, 80.0), &s).expect("over");
        assert!(text.contains("already shard it"), "{text}");
        // One replica with CP 4: four ranks reduce each gradient, and shard it.
        let s = scenario_with(|s| {
            s.parallel.dp = 1;
            s.parallel.cp = 4;
        });
        let text = advice(&m, &s).expect("over");
        assert!(
            text.contains(
                "across the 4 data-parallel and context-parallel ranks (dp_sharding \"optimizer\""
            ) && text.contains("15.0 GB"),
            "{text}"
        );
    }

    #[test]
    fn activations_name_full_recomputation_with_korthikantis_ratio() {
        let s = scenario_with(|s| {
            if let Workload::Transformer(t) = &mut s.workload {
                t.recompute = Recompute::Selective;
                t.sequence_parallel = false;
            }
        });
        let Workload::Transformer(t) = &s.workload else {
            unreachable!()
        };
        // Selective without SP keeps sbh(10 + 24/t) per layer; full keeps 2sbh.
        let tp = f64::from(s.parallel.tp);
        let ratio = 2.0 / (10.0 + 24.0 / tp);
        assert!(t.seq > 0);
        let m = MemoryGb::from_parts(10.0, 5.0, 5.0, 100.0, 80.0);
        let text = advice(&m, &s).expect("over");
        assert!(
            text.contains("biggest part is the activations, 100.0 GB"),
            "{text}"
        );
        let after = 100.0 * ratio;
        assert!(
            text.contains(&format!("would cut them to {}", format::gb(after))),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "a total of {} (which fits)",
                format::gb(20.0 + after)
            )),
            "{text}"
        );
        let s = scenario_with(|s| {
            if let Workload::Transformer(t) = &mut s.workload {
                t.recompute = Recompute::Full;
            }
        });
        let text = advice(&m, &s).expect("over");
        assert!(
            text.contains("already recomputed in full") && text.contains("more PP"),
            "{text}"
        );
    }

    /// The 1T preset's own figures: the warning, if any, speaks of the report.
    #[test]
    fn the_warning_follows_the_report_of_a_real_scenario() {
        let s = scenario_with(|s| s.parallel.dp = 6);
        let m = overlap_core::memory::memory_gb(&s);
        match advice(&m, &s) {
            None => assert!(m.fits),
            Some(text) => {
                assert!(!m.fits);
                assert!(text.contains(&format::gb(m.total)), "{text}");
                assert!(text.contains(part_name(biggest(&m))), "{text}");
            }
        }
    }
}
