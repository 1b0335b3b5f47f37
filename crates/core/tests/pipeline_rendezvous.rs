//! Pipeline sends rendezvous with their receives (model.md 4,
//! `workload/build/transformer/pipeline.rs`): a send larger than NCCL's
//! staging buffer moves only once its receiver has posted the receive where
//! Megatron-LM's schedule calls it; interleaved 1F1B without PP overlap
//! sends an iteration's forward output with its backward's. Read from the
//! timeline: sends against the receiver's and the sender's compute.

use overlap_core::scenario::{Scenario, Schedule, Workload};
use overlap_core::timeline::{Axis, Interval, OpKind, Phase, Timeline};
use overlap_core::{presets, simulate};

/// The didactic preset (TP 4 x PP 2 x DP 2, activations sent as 1/4
/// slices gathered on arrival: 4 MiB a send) with every overlap off.
fn scenario(schedule: Schedule, micro_batches: u32, seq: u32) -> Scenario {
    let mut s = presets::scenario("didactic").unwrap();
    s.parallel.schedule = schedule;
    s.parallel.virtual_stages = if schedule == Schedule::Interleaved {
        2
    } else {
        1
    };
    s.overlap.tp = false;
    s.overlap.pp = false;
    s.overlap.dp = false;
    if let Workload::Transformer(t) = &mut s.workload {
        t.global_batch = micro_batches * t.micro_batch * s.parallel.dp;
        t.seq = seq;
    }
    s
}

/// The first GPU of `stage` (TP rank 0 of the first replica).
fn gpu_of(timeline: &Timeline, stage: u32) -> usize {
    timeline
        .gpus
        .iter()
        .position(|g| g.stage == stage && g.dp_rank == 0 && g.tp_rank == 0)
        .unwrap()
}

/// The forward sends from stage 0 to stage 1, in micro-batch order.
fn forward_sends(timeline: &Timeline) -> Vec<Interval> {
    let sender = gpu_of(timeline, 0);
    let mut sends: Vec<Interval> = timeline.gpus[sender].comm[Axis::Pp.index()]
        .iter()
        .filter(|i| i.op == OpKind::Send && i.phase == Phase::Forward && i.owner == sender as u32)
        .cloned()
        .collect();
    sends.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    sends
}

/// Where stage 1 posts the receive of micro-batch `mb`'s forward input: the
/// end of its compute op before that forward's first.
fn posted_at(timeline: &Timeline, mb: u32) -> Option<f64> {
    let ops = &timeline.gpus[gpu_of(timeline, 1)].compute;
    let first = ops
        .iter()
        .position(|i| i.phase == Phase::Forward && i.micro_batch == mb && i.chunk == 0)?;
    first.checked_sub(1).map(|p| ops[p].end_s)
}

const EPS_S: f64 = 1e-12;

/// `send` starts no earlier than `t_s`, when `what` happened.
fn assert_leaves_after(send: &Interval, t_s: f64, what: &str) {
    assert!(
        send.start_s >= t_s - EPS_S,
        "the send of mb {} started at {} s, before {what} at {t_s} s",
        send.micro_batch,
        send.start_s
    );
}

#[test]
fn a_send_beyond_the_staging_buffer_starts_once_the_receiver_has_posted() {
    let sim = simulate(&scenario(Schedule::OneFOneB, 6, 2048));
    let sends = forward_sends(&sim.timeline);
    assert_eq!(sends.len(), 6);
    assert!(
        sends[0].bytes > 2.0 * 1024.0 * 1024.0,
        "{} B",
        sends[0].bytes
    );
    let mut waited = 0;
    for send in &sends {
        if let Some(posted) = posted_at(&sim.timeline, send.micro_batch) {
            assert_leaves_after(send, posted, "its receive was posted");
            waited += 1;
        }
    }
    // Every send but the first, which stage 1 posts before any compute.
    assert_eq!(waited, 5);
}

#[test]
fn a_send_within_the_staging_buffer_leaves_before_the_receiver_posts() {
    // 64 tokens: 64 x 4096 x 2 B / 4 = 128 KiB a send, within the 2 MiB that
    // two network channels of 8 slots of 128 KiB stage.
    let sim = simulate(&scenario(Schedule::OneFOneB, 6, 64));
    let sends = forward_sends(&sim.timeline);
    assert!(
        sends[0].bytes < 2.0 * 1024.0 * 1024.0,
        "{} B",
        sends[0].bytes
    );
    let early = sends
        .iter()
        .filter(|s| posted_at(&sim.timeline, s.micro_batch).is_some_and(|p| s.start_s < p - EPS_S))
        .count();
    assert!(early > 0, "no send left before its receive was posted");
}

#[test]
fn interleaved_sends_a_steady_forward_with_the_backward_after_it() {
    let sim = simulate(&scenario(Schedule::Interleaved, 8, 2048));
    let ops = &sim.timeline.gpus[gpu_of(&sim.timeline, 0)].compute;
    // The sender's steps: runs of compute ops of one pass and micro-batch
    // (a compute op does not name its chunk), with where each ends.
    let mut steps: Vec<(Phase, u32, f64)> = Vec::new();
    for op in ops
        .iter()
        .filter(|i| matches!(i.phase, Phase::Forward | Phase::Backward))
    {
        match steps.last_mut() {
            Some(last) if (last.0, last.1) == (op.phase, op.micro_batch) => last.2 = op.end_s,
            _ => steps.push((op.phase, op.micro_batch, op.end_s)),
        }
    }
    // Stage 0 holds virtual stages 0 and 2: every forward of it sends, in
    // program order.
    let sends = forward_sends(&sim.timeline);
    let forwards: Vec<usize> = (0..steps.len())
        .filter(|&k| steps[k].0 == Phase::Forward)
        .collect();
    assert_eq!(forwards.len(), sends.len());
    let mut paired = 0;
    for (send, &k) in sends.iter().zip(&forwards) {
        assert_eq!(send.micro_batch, steps[k].1);
        // A steady iteration: the output leaves after the backward beside
        // it. A warmup forward sends at once (its receiver may hold it).
        if let Some(&(Phase::Backward, mb, backward_end)) = steps.get(k + 1) {
            assert_leaves_after(
                send,
                backward_end,
                &format!("the backward of mb {mb} beside it ended"),
            );
            paired += 1;
        }
    }
    // 16 forwards (8 micro-batches x 2 chunks), 4 of them warmup.
    assert_eq!(paired, 12);
}

/// Megatron-LM's schedules with the rendezvous, in every phase shape (fewer
/// micro-batches than stages, all of them warmup, a steady state) and with
/// PP overlap on and off, run to the end: the engine checks in debug builds
/// (which the tests are) that every task ran, so a send waiting on a
/// receive that waits on it would fail here.
#[test]
fn megatrons_schedules_never_wait_on_themselves() {
    for schedule in [Schedule::Gpipe, Schedule::OneFOneB, Schedule::Interleaved] {
        for micro_batches in [1, 2, 3, 4, 8] {
            for pp_overlap in [false, true] {
                let mut s = scenario(schedule, micro_batches, 2048);
                s.overlap.pp = pp_overlap;
                if schedule == Schedule::Interleaved && micro_batches % s.parallel.pp != 0 {
                    continue;
                }
                let sim = simulate(&s);
                assert!(sim.report.step_time_ms > 0.0);
                let sends = forward_sends(&sim.timeline);
                assert_eq!(
                    sends.len() as u32,
                    micro_batches * s.parallel.virtual_stages,
                    "{schedule:?}, {micro_batches} micro-batches, PP overlap {pp_overlap}"
                );
            }
        }
    }
}

/// The same with the expert axis's merged passes (a forward and a backward
/// built as one, `merged_passes`) inside interleaved 1F1B without PP
/// overlap: Qwen3-235B as shipped (PP 8 x VP 4, EP overlap on), its PP
/// overlap switched off, runs to the end.
#[test]
fn merged_expert_passes_in_an_interleaved_pipeline_never_wait_on_themselves() {
    let mut s = presets::scenario("qwen3-235b").unwrap();
    assert_eq!(s.parallel.schedule, Schedule::Interleaved);
    s.overlap.pp = false;
    let report = overlap_core::simulate_report(&s).unwrap().report;
    assert!(report.step_time_ms > 0.0);
}
