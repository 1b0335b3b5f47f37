//! Merged passes: how EP overlap reorders a stage's program so that one
//! micro-batch's forward runs beside another's backward (Megatron-LM's
//! combined 1F1B, DeepSeek's DualPipe chunk pairs), and which EP overlap
//! options a scenario runs. The builder pairs the passes
//! (`transformer::layer_pairs`); the memory report counts the forwards the
//! reordered program keeps in flight.

use crate::model::ep_overlap::{EpOptions, EpOverlap};
use crate::model::scenario::{Mode, Recompute, Scenario, Schedule, Workload};

use super::{Pass, Step};

/// The EP overlap options a scenario runs: `overlap.ep`'s list as given,
/// or for `true` the schedule's natural form. That is combined 1F1B where
/// Megatron-LM runs it (no pipeline, or interleaved 1F1B: Megatron asserts
/// virtual stages when pp > 1 and refuses full recomputation,
/// megatron/core/transformer/transformer_config.py:3007-3011 and
/// 3021-3023); elsewhere (1F1B without virtual stages, GPipe, the
/// zero-bubble schedules) the two options that need no pairing, the shared
/// experts beside the all-to-alls and the experts' weight gradients under
/// the dispatch's backward. DualPipeV runs DualPipe's chunk pairs and,
/// in the chunks its program runs alone (warm-up and cool-down), those two
/// options: Megatron's refusal of them beside combined 1F1B is a check of
/// its own code, which DeepSeek's DualPipe does not share.
pub fn ep_form(s: &Scenario) -> EpOptions {
    let natural = || {
        if s.parallel.schedule == Schedule::DualPipeV {
            return EpOptions {
                shared_expert: true,
                dispatch_wgrad: true,
                combined_1f1b: true,
            };
        }
        let pairs = (s.parallel.pp == 1 || s.parallel.schedule == Schedule::Interleaved)
            && !matches!(&s.workload, Workload::Transformer(t) if t.recompute == Recompute::Full);
        EpOptions {
            shared_expert: !pairs,
            dispatch_wgrad: !pairs,
            combined_1f1b: pairs,
        }
    };
    match s.overlap.ep {
        EpOverlap::Off => EpOptions::default(),
        EpOverlap::Natural => natural(),
        EpOverlap::Options(o) => o,
    }
}

/// Whether the builder merges a forward with the backward after it
/// (`transformer::layer_pairs`): combined 1F1B (or DualPipe's pairs) on a
/// training step whose experts span ranks, with 1F1B, interleaved 1F1B or
/// DualPipeV, and neither CoCoNet's fused collectives nor its sliced
/// boundary, whose bookkeeping follows one pass at a time.
pub fn merges_passes(s: &Scenario) -> bool {
    let Workload::Transformer(t) = &s.workload else {
        return false;
    };
    ep_form(s).combined_1f1b
        && t.moe.is_some()
        && s.parallel.ep > 1
        && t.mode == Mode::Train
        && !(s.overlap.fuse && s.parallel.tp > 1)
        && s.sliced_boundary_pieces(t).is_none()
        && matches!(
            s.parallel.schedule,
            Schedule::OneFOneB | Schedule::Interleaved | Schedule::DualPipeV
        )
}

/// The program of stage `stage` in the order its merged passes need: each
/// backward one forward later, so that the forward of micro-batch n + 1
/// runs beside the backward of n. Without a pipeline that is Megatron-LM's
/// combined 1F1B (megatron/core/pipeline_parallel/combined_1f1b.py:60-64:
/// the first forward alone, then each forward with the previous backward,
/// the last backward alone); on interleaved 1F1B, its one warm-up
/// micro-batch more (megatron/core/pipeline_parallel/schedules.py:964-970).
/// 1F1B with a pipeline and no virtual stages never merges (Megatron
/// refuses it, `ep_form`). DualPipeV's program pairs them already.
/// Unchanged unless passes merge.
pub fn merged_order(s: &Scenario, program: Vec<Step>) -> Vec<Step> {
    let extra = match s.parallel.schedule {
        Schedule::OneFOneB | Schedule::Interleaved => 1,
        _ => 0,
    };
    if extra == 0 || !merges_passes(s) {
        return program;
    }
    let mut out = Vec::with_capacity(program.len());
    // Backwards held back, each with the forward count that releases it.
    let mut delayed = std::collections::VecDeque::new();
    let mut forwards = 0;
    for step in program {
        if step.pass == Pass::Forward {
            out.push(step);
            forwards += 1;
            while delayed.front().is_some_and(|&(_, at)| at <= forwards) {
                out.extend(delayed.pop_front().map(|(b, _)| b));
            }
        } else {
            delayed.push_back((step, forwards + extra));
        }
    }
    out.extend(delayed.into_iter().map(|(b, _)| b));
    out
}
