//! Pipeline schedules: the order in which one stage runs the forward and
//! backward passes of its micro-batches (and, with several chunks per GPU,
//! of its virtual stages). GPipe, 1F1B (PipeDream-Flush), Megatron's
//! interleaved 1F1B, and the zero-bubble family, which splits the backward
//! into B (input gradient, on the critical path) and W (weight gradient,
//! movable): ZB-1p, ZB-2p and ZB-V (Qi et al. 2024, arXiv 2401.10241) and
//! DualPipeV (DeepSeek's DualPipe cut in half, DualPipe README).

pub mod merged_passes;
mod step;
mod v_shape;

pub use step::{Pass, Step};

use crate::model::scenario::{Scenario, Schedule};

impl Schedule {
    /// Whether the schedule runs B and W as separate steps.
    pub fn splits_backward(self) -> bool {
        matches!(
            self,
            Schedule::ZeroBubble1p
                | Schedule::ZeroBubble2p
                | Schedule::ZeroBubbleV
                | Schedule::DualPipeV
        )
    }

    /// Whether the two chunks of each GPU form a V: chunk 0 runs the first
    /// `pp` virtual stages down the pipeline, chunk 1 the next `pp` back up,
    /// so that the first GPU holds the first and the last virtual stage.
    pub fn v_shape(self) -> bool {
        matches!(self, Schedule::ZeroBubbleV | Schedule::DualPipeV)
    }

    /// Every schedule, in the order the controls list them.
    pub const ALL: [Schedule; 7] = [
        Schedule::Gpipe,
        Schedule::OneFOneB,
        Schedule::Interleaved,
        Schedule::ZeroBubble1p,
        Schedule::ZeroBubble2p,
        Schedule::ZeroBubbleV,
        Schedule::DualPipeV,
    ];

    /// The name used in scenario JSON and share links.
    pub const fn name(self) -> &'static str {
        match self {
            Schedule::Gpipe => "gpipe",
            Schedule::OneFOneB => "1f1b",
            Schedule::Interleaved => "interleaved",
            Schedule::ZeroBubble1p => "zb-1p",
            Schedule::ZeroBubble2p => "zb-2p",
            Schedule::ZeroBubbleV => "zb-v",
            Schedule::DualPipeV => "dualpipe-v",
        }
    }

    /// What the page's schedule select shows for it.
    pub const fn label(self) -> &'static str {
        match self {
            Schedule::Gpipe => "GPipe",
            Schedule::OneFOneB => "1F1B",
            Schedule::Interleaved => "Interleaved 1F1B",
            Schedule::ZeroBubble1p => "Zero bubble ZB-1p",
            Schedule::ZeroBubble2p => "Zero bubble ZB-2p",
            Schedule::ZeroBubbleV => "Zero bubble ZB-V",
            Schedule::DualPipeV => "DualPipeV",
        }
    }

    /// The virtual stage (index along the model) that `chunk` of `stage` runs.
    pub fn virtual_stage(self, stage: u32, chunk: u32, stages: u32) -> u32 {
        if self.v_shape() && chunk == 1 {
            2 * stages - 1 - stage
        } else {
            chunk * stages + stage
        }
    }

    /// The stage and chunk that run virtual stage `vs`: the inverse of
    /// [`Schedule::virtual_stage`].
    pub fn stage_and_chunk(self, vs: u32, stages: u32) -> (u32, u32) {
        if self.v_shape() && vs >= stages {
            (2 * stages - 1 - vs, 1)
        } else {
            (vs % stages, vs / stages)
        }
    }
}

/// The program of `stage` out of `stages`, for `micro_batches` micro-batches
/// and `chunks` virtual stages per device. Training runs both passes;
/// inference only forwards.
pub fn stage_program(
    schedule: Schedule,
    stage: u32,
    stages: u32,
    micro_batches: u32,
    chunks: u32,
    train: bool,
) -> Vec<Step> {
    let fwd = |mb, chunk| Step {
        pass: Pass::Forward,
        micro_batch: mb,
        chunk,
    };
    let bwd = |mb, chunk| Step {
        pass: Pass::Backward,
        micro_batch: mb,
        chunk,
    };
    let m = micro_batches;
    if !train {
        // Forward only, micro-batch by micro-batch, in model order.
        return (0..m)
            .flat_map(|mb| {
                let mut order: Vec<u32> = (0..chunks).collect();
                order.sort_by_key(|&c| schedule.virtual_stage(stage, c, stages));
                order.into_iter().map(move |c| fwd(mb, c))
            })
            .collect();
    }
    let program = match schedule {
        Schedule::Gpipe => (0..m)
            .map(|mb| fwd(mb, 0))
            .chain((0..m).map(|mb| bwd(mb, 0)))
            .collect(),
        Schedule::OneFOneB => {
            let warmup = (stages - stage - 1).min(m);
            let mut out = Vec::with_capacity(2 * m as usize);
            out.extend((0..warmup).map(|mb| fwd(mb, 0)));
            for i in 0..(m - warmup) {
                out.push(fwd(warmup + i, 0));
                out.push(bwd(i, 0));
            }
            out.extend((m - warmup..m).map(|mb| bwd(mb, 0)));
            out
        }
        Schedule::Interleaved => interleaved(stage, stages, m, chunks),
        // ZB-H1: 1F1B's warm-up, and stage i holds back its first i W, which
        // then fill the cool-down; every stage keeps at most `stages`
        // micro-batches between F and W, as stage 0 of 1F1B does.
        Schedule::ZeroBubble1p => {
            let warmup = stages - stage - 1;
            zero_bubble(m, warmup, stage)
        }
        // ZB-H2: 2(p - 1 - i) + 1 forwards of warm-up fill the start, and
        // stage i holds back 2i W to fill the end: at most 2p micro-batches
        // between F and W on every stage.
        Schedule::ZeroBubble2p => {
            let warmup = 2 * (stages - stage - 1) + 1;
            zero_bubble(m, warmup, 2 * stage)
        }
        // Fewer micro-batches than the V needs are refused by validation;
        // the cost estimate still builds them, as a plain forward-then-backward.
        Schedule::ZeroBubbleV | Schedule::DualPipeV if m < 2 * stages => (0..2)
            .flat_map(|c| (0..m).map(move |mb| fwd(mb, c)))
            .chain((0..2).rev().flat_map(|c| (0..m).map(move |mb| bwd(mb, c))))
            .collect(),
        Schedule::ZeroBubbleV => v_shape::zero_bubble_v(stage, stages, m),
        Schedule::DualPipeV => v_shape::dualpipe_v(stage, stages, m),
    };
    match schedule {
        // Qi et al.'s implementation clears its held W layer by layer;
        // DeepSeek's DualPipe pops them one micro-batch at a time, first in,
        // first out (`_weight_chunk`), and its programs keep that order.
        Schedule::ZeroBubble1p | Schedule::ZeroBubble2p | Schedule::ZeroBubbleV => {
            hold_last_weight_grads(program, m)
        }
        _ => program,
    }
}

/// Folds each chunk's last held-back W into one [`Pass::HeldWeightGrads`]
/// step where the first of them stood: from the W of the chunk's last
/// micro-batch, or from the first W after which no F or B follows, every W
/// the chunk still holds runs there, layer by layer. This is when the
/// zero-bubble reference implementation clears its weight-gradient store
/// (sail-sg/zero-bubble-pipeline-parallelism, `schedule_w` and
/// `WeightGradStore.clear`). Per chunk the held W are first in, first out,
/// so the first of them is the oldest and the rest follow it in order.
fn hold_last_weight_grads(steps: Vec<Step>, m: u32) -> Vec<Step> {
    let last_non_w = steps
        .iter()
        .rposition(|s| s.pass != Pass::WeightGrad)
        .unwrap_or(0);
    let mut folded: Vec<u32> = Vec::new();
    let mut out = Vec::with_capacity(steps.len());
    for (k, s) in steps.into_iter().enumerate() {
        if s.pass != Pass::WeightGrad {
            out.push(s);
        } else if folded.contains(&s.chunk) {
            // Already run by the chunk's held step.
        } else if s.micro_batch + 1 == m || k > last_non_w {
            folded.push(s.chunk);
            out.push(Step {
                pass: Pass::HeldWeightGrads,
                ..s
            });
        } else {
            out.push(s);
        }
    }
    out
}

/// Micro-batch counts from which a step's cost grows by the same amount per
/// further `unit` micro-batches: (base, unit). The interleaved schedule
/// steps in groups of `stages`; the V schedules reach their steady state
/// from 2 x `stages` on.
pub(crate) fn affine_micro_batches(schedule: Schedule, stages: u32) -> (u32, u32) {
    match schedule {
        Schedule::Interleaved => (stages, stages),
        Schedule::ZeroBubbleV | Schedule::DualPipeV => (2 * stages, 1),
        _ => (1, 1),
    }
}

/// One chunk per GPU, backward split: `warmup` forwards, then F and B in
/// turn, each B followed by the oldest W once `delay` W are held back; the
/// held-back W close the program.
fn zero_bubble(m: u32, warmup: u32, delay: u32) -> Vec<Step> {
    let step = |pass, micro_batch| Step {
        pass,
        micro_batch,
        chunk: 0,
    };
    let warmup = warmup.min(m);
    let mut out = Vec::with_capacity(3 * m as usize);
    out.extend((0..warmup).map(|mb| step(Pass::Forward, mb)));
    let (mut next_f, mut next_w) = (warmup, 0);
    for b in 0..m {
        if next_f < m {
            out.push(step(Pass::Forward, next_f));
            next_f += 1;
        }
        out.push(step(Pass::InputGrad, b));
        if b + 1 - next_w > delay {
            out.push(step(Pass::WeightGrad, next_w));
            next_w += 1;
        }
    }
    out.extend((next_w..m).map(|mb| step(Pass::WeightGrad, mb)));
    out
}

/// Micro-batches whose activations a stage holds at its peak, in units of
/// one micro-batch on the whole stage (all its chunks): a chunk's
/// activations live from its forward to its backward, or to its W when the
/// backward is split, since the weight gradient still reads the layer inputs
/// and the output gradients B computed.
pub fn peak_in_flight(steps: &[Step], chunks: u32) -> f64 {
    let mut alive = vec![0u32; chunks.max(1) as usize];
    let mut peak = 0u32;
    for s in steps {
        let c = (s.chunk as usize).min(alive.len() - 1);
        match s.pass {
            Pass::Forward => {
                alive[c] += 1;
                peak = peak.max(alive.iter().sum());
            }
            Pass::Backward | Pass::WeightGrad => alive[c] = alive[c].saturating_sub(1),
            // Every micro-batch of the chunk still alive waits for these W.
            Pass::HeldWeightGrads => alive[c] = 0,
            Pass::InputGrad => {}
        }
    }
    f64::from(peak) / f64::from(chunks.max(1))
}

/// Bytes of activations a stage holds at its peak when its chunks differ
/// (a pipeline layout's stages): as [`peak_in_flight`], each chunk's
/// micro-batch weighing `per_chunk[c]`, its layers' activations.
pub fn peak_alive_bytes(steps: &[Step], per_chunk: &[f64]) -> f64 {
    let mut alive = vec![0u32; per_chunk.len().max(1)];
    let weight = |c: usize| per_chunk.get(c).copied().unwrap_or(0.0);
    let mut peak: f64 = 0.0;
    for s in steps {
        let c = (s.chunk as usize).min(alive.len() - 1);
        match s.pass {
            Pass::Forward => {
                alive[c] += 1;
                let held: f64 = alive
                    .iter()
                    .enumerate()
                    .map(|(c, &n)| f64::from(n) * weight(c))
                    .sum();
                peak = peak.max(held);
            }
            Pass::Backward | Pass::WeightGrad => alive[c] = alive[c].saturating_sub(1),
            Pass::HeldWeightGrads => alive[c] = 0,
            Pass::InputGrad => {}
        }
    }
    peak
}

/// Megatron-LM's interleaved schedule (Narayanan et al. 2021, section 2.2):
/// virtual micro-batches run in groups of `stages`, cycling over chunks.
fn interleaved(stage: u32, p: u32, m: u32, v: u32) -> Vec<Step> {
    let total = m * v;
    // k-th forward (or backward) of this device: which micro-batch and chunk.
    let at = |k: u32, forward: bool| {
        let group = k / (p * v);
        let in_group = k % (p * v);
        let chunk_f = in_group / p;
        let chunk = if forward { chunk_f } else { v - 1 - chunk_f };
        let mb = group * p + in_group % p;
        Step {
            pass: if forward {
                Pass::Forward
            } else {
                Pass::Backward
            },
            micro_batch: mb,
            chunk,
        }
    };
    let warmup = if m == p {
        total
    } else {
        ((p - stage - 1) * 2 + (v - 1) * p).min(total)
    };
    let mut out = Vec::with_capacity(2 * total as usize);
    out.extend((0..warmup).map(|k| at(k, true)));
    for i in 0..(total - warmup) {
        out.push(at(warmup + i, true));
        out.push(at(i, false));
    }
    out.extend((total - warmup..total).map(|k| at(k, false)));
    out
}

/// Micro-batches after which every stage of the schedule runs its steady
/// phase: 1F1B's and ZB-1p's warm-up of up to `pp - 1` forwards, ZB-2p's
/// of up to `2pp - 1`, and the interleaved and V schedules' fill of
/// `2pp` (see [`stage_program`]). `None` for GPipe: all forwards run before
/// any backward, so the stage that bounds the forward phase (a fixed fill
/// plus its own time per micro-batch) can change at any count, well past
/// a few micro-batches (`tests/steady_state.rs` found such a step).
///
/// `None` for the V schedules (ZB-V, DualPipeV) too: their fill is `2pp`,
/// but their steady phase settles tens of micro-batches later, beyond where
/// three short runs cost less than the step. Measured: on a dense PP 4
/// DualPipeV step (`tests/steady_state.rs`'s small shape, fill 8) three
/// runs one apart agree in every sum only from 30 micro-batches on, and its
/// links' sums move again past 44; on deepseek-v3 (PP 16, fill 32)
/// the steady state is a cycle of 14 micro-batches, set up some 15 past the
/// fill, in which a pipeline send meets the next stage's all-to-all on the
/// NIC a little later each micro-batch until it misses it (docs/validation.md).
/// Their three runs two past the fill never agreed, and the step was then
/// run in full after them; now it is run in full at once.
fn fill_micro_batches(schedule: Schedule, pp: u32) -> Option<u32> {
    match schedule {
        Schedule::Gpipe | Schedule::ZeroBubbleV | Schedule::DualPipeV => None,
        Schedule::OneFOneB | Schedule::ZeroBubble1p => Some(pp),
        Schedule::ZeroBubble2p | Schedule::Interleaved => Some(2 * pp),
    }
}

/// The three micro-batch counts the scenario's figures would be
/// extrapolated from, or `None` when it is simulated in full: not a
/// transformer step in training (inference runs forwards only, as GPipe
/// does before its backwards: see [`fill_micro_batches`]); or too few micro-batches past the fill for the three runs to cost less
/// than the full one (counted in micro-batches). `crate::steady_state`
/// runs them; `cost::cost` counts them.
pub fn steady_counts(s: &Scenario) -> Option<[u32; 3]> {
    counts_at_margin(s, MARGIN_UNITS[0])
}

/// The three short runs' counts `margin` units past the fill, where they
/// cost less than the full run and reach the scenario's count in whole units.
fn counts_at_margin(s: &Scenario, margin: u32) -> Option<[u32; 3]> {
    let (m0, unit) = first_steady_count(s, margin)?;
    let m = s.micro_batches();
    let cheaper = u64::from(m0) * 3 + 3 * u64::from(unit) < u64::from(m);
    (cheaper && (m - m0).is_multiple_of(unit)).then_some([m0, m0 + unit, m0 + 2 * unit])
}

/// Units of micro-batches past the fill the steady state's first short run
/// starts at, then each later try of its one marked run. Past the fill a
/// stage's period settles geometrically, not at once: on 145.6B's shape
/// (TP 8 x PP 8, 1F1B) the first stage's period is 271 us off the steady
/// one at its first steady micro-batch and about ten times closer at each
/// next, so two units leave it 1e-5 of a period off, over what
/// `steady_state` may extrapolate; six more leave it below 1e-11. A step
/// whose marked periods do not repeat at one margin is run again at the
/// next (`steady_state::marked_run_counts`).
pub const MARGIN_UNITS: [u32; 3] = [2, 8, 16];

/// The first count of the steady state's short runs `margin` units past
/// the fill, with the unit; `None` where the schedule has no steady state
/// a few micro-batches past its fill (see [`steady_counts`]).
fn first_steady_count(s: &Scenario, margin: u32) -> Option<(u32, u32)> {
    use crate::model::scenario::{Mode, Workload};
    let train = matches!(&s.workload, Workload::Transformer(t) if t.mode == Mode::Train);
    // The distributed optimizer's parameter gather overlapped with the
    // forward (`overlap.param_gather`) is no exception: each bucket gates
    // only the first forward on its stage that reads it, the first
    // micro-batch of each virtual stage, all within the fill, and every
    // later forward follows those on the one compute stream. However long
    // the gather, it shifts the step by the same time at every count past
    // the fill. `tests/steady_state.rs` checks it with every schedule and
    // switch; it was excluded before as a precaution against a mismatch
    // that was GPipe's (which has no steady state at all).
    if !train {
        return None;
    }
    let (schedule, pp) = (s.parallel.schedule, s.parallel.pp);
    let (_, unit) = affine_micro_batches(schedule, pp);
    let m0 = fill_micro_batches(schedule, pp)?.div_ceil(unit) * unit + margin * unit;
    Some((m0, unit))
}

/// The three short runs' counts at each later margin of `MARGIN_UNITS`
/// where they still cost less than the full run: where the runs at
/// [`steady_counts`] disagree, a step still settling there, the figures
/// try these before the full simulation.
pub fn later_steady_counts(s: &Scenario) -> Vec<[u32; 3]> {
    if steady_counts(s).is_none() {
        return Vec::new();
    }
    MARGIN_UNITS[1..]
        .iter()
        .map_while(|&margin| counts_at_margin(s, margin))
        .collect()
}

/// The counts a marked short run of `s` is made at, in order: the last of
/// [`steady_counts`], then the last count of each later margin's three
/// runs ([`later_steady_counts`]: where they still cost less than the
/// step, so that falling back to them stays within the budget). Empty
/// where the steady state does not apply or its runs mark no periods
/// ([`period_marks`]).
pub fn marked_run_counts(s: &Scenario) -> Vec<u32> {
    let Some([_, _, first]) = steady_counts(s) else {
        return Vec::new();
    };
    if !marks_periods_at(s, first) {
        return Vec::new();
    }
    std::iter::once(first)
        .chain(later_steady_counts(s).into_iter().map(|[_, _, last]| last))
        .filter(|&c| marks_periods_at(s, c))
        .collect()
}

/// Whether a run of `s` at `m` micro-batches marks two periods
/// ([`period_marks`]).
fn marks_periods_at(s: &Scenario, m: u32) -> bool {
    use crate::model::scenario::{Mode, Workload};
    let train = matches!(&s.workload, Workload::Transformer(t) if t.mode == Mode::Train);
    let (schedule, pp) = (s.parallel.schedule, s.parallel.pp);
    train && schedule == Schedule::OneFOneB && pp > 1 && m >= pp + 2
}

/// The micro-batches whose gradients reaching the first stage mark off two
/// whole periods of the steady state in a run of the step (`steady_state`
/// then needs one short run, not three): the last three backwards of the
/// first stage's steady phase, whose every stage is then in its own steady
/// phase (1F1B's first stage is the last to enter it and the first to
/// leave). 1F1B over two or more stages in training only; `None` otherwise,
/// and the three short runs are made.
pub fn period_marks(s: &Scenario) -> Option<[u32; 3]> {
    let (pp, m) = (s.parallel.pp, s.micro_batches());
    marks_periods_at(s, m).then(|| {
        let k = m - pp - 2;
        [k, k + 1, k + 2]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_complete(steps: &[Step], m: u32, v: u32) {
        for pass in [Pass::Forward, Pass::Backward] {
            for c in 0..v {
                let mbs: Vec<u32> = steps
                    .iter()
                    .filter(|s| s.pass == pass && s.chunk == c)
                    .map(|s| s.micro_batch)
                    .collect();
                assert_eq!(mbs, (0..m).collect::<Vec<_>>(), "{pass:?} chunk {c}");
            }
        }
    }

    #[test]
    fn every_schedule_runs_each_pass_once_in_micro_batch_order() {
        for (sched, v) in [
            (Schedule::Gpipe, 1),
            (Schedule::OneFOneB, 1),
            (Schedule::Interleaved, 2),
            (Schedule::Interleaved, 3),
        ] {
            for stage in 0..4 {
                let steps = stage_program(sched, stage, 4, 8, v, true);
                assert_eq!(steps.len(), 16 * v as usize);
                check_complete(&steps, 8, v);
            }
        }
    }

    #[test]
    fn one_f_one_b_warms_up_with_the_stages_below_it() {
        let s = stage_program(Schedule::OneFOneB, 0, 4, 8, 1, true);
        assert!(s[..3].iter().all(|x| x.pass == Pass::Forward));
        assert_eq!(s[3].pass, Pass::Forward);
        assert_eq!(s[4].pass, Pass::Backward);
        let last = stage_program(Schedule::OneFOneB, 3, 4, 8, 1, true);
        assert_eq!(last[1].pass, Pass::Backward);
    }
}
