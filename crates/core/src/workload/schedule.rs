//! Pipeline schedules: the order in which one stage runs the forward and
//! backward passes of its micro-batches (and, interleaved, of its virtual
//! stages). GPipe, 1F1B (PipeDream-Flush) and Megatron's interleaved 1F1B.

use crate::model::scenario::Schedule;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    Forward,
    Backward,
}

/// One entry of a stage's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub pass: Pass,
    pub micro_batch: u32,
    /// Virtual stage (model chunk) on this device, 0..virtual_stages.
    pub chunk: u32,
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
        // Forward only, micro-batch by micro-batch, chunk by chunk.
        return (0..m)
            .flat_map(|mb| (0..chunks).map(move |c| fwd(mb, c)))
            .collect();
    }
    match schedule {
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
    }
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
