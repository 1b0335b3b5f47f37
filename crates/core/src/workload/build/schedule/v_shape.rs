//! Schedules with two chunks per GPU in a V: chunk 0 carries virtual stages
//! 0..p down the pipeline, chunk 1 carries p..2p back up, so the first GPU
//! computes both the first layers and the loss. DualPipeV is DeepSeek's
//! DualPipe cut in half (DualPipe README; Sea AI Lab's "cut-in-half" note);
//! ZB-V (Qi et al. 2024) runs the same phases with every backward split
//! into B and W. Both need at least 2p micro-batches.
//!
//! The phases of GPU i of p, with m micro-batches (F0/B0 chunk 0, F1/B1
//! chunk 1, W the oldest held-back weight gradient):
//! 1. 2(p - 1 - i) F0: fill the way down;
//! 2. i + 1 times F0 F1: reach the bottom of the V;
//! 3. p - 1 - i times B1 W F1: the first gradients come back up;
//! 4. m - 2p + i + 1 times F0 B1 F1 B0: the steady state, where DualPipe
//!    overlaps each forward with a backward of the other chunk;
//! 5. p - 1 - i times B1 F1 B0;
//! 6. i + 1 times B1 B0, the second half of them with W held back;
//! 7. p - 1 - i times W B0;
//! 8. the held-back W.

use super::step::{Pass, Step};

/// DeepSeek's DualPipeV: whole backwards in the steady state (there each
/// backward runs together with a forward), B and W split at the ends.
pub(super) fn dualpipe_v(stage: u32, stages: u32, m: u32) -> Vec<Step> {
    v_program(stage, stages, m, false)
}

/// ZB-V: DualPipeV's phases with every backward split, W right after its B
/// in the steady state and held back at the end to fill the cool-down.
pub(super) fn zero_bubble_v(stage: u32, stages: u32, m: u32) -> Vec<Step> {
    v_program(stage, stages, m, true)
}

/// Builds the program; the micro-batch of each F, B and W is the next one
/// of its chunk, so a schedule only says which pass of which chunk runs.
struct Program {
    out: Vec<Step>,
    next_f: [u32; 2],
    next_b: [u32; 2],
    held_w: std::collections::VecDeque<(u32, u32)>,
}

impl Program {
    fn push(&mut self, pass: Pass, micro_batch: u32, chunk: u32) {
        self.out.push(Step {
            pass,
            micro_batch,
            chunk,
        });
    }

    fn f(&mut self, chunk: u32) {
        let mb = self.next_f[chunk as usize];
        self.next_f[chunk as usize] += 1;
        self.push(Pass::Forward, mb, chunk);
    }

    /// A backward: whole, or B with its W held back.
    fn b(&mut self, chunk: u32, hold_w: bool) {
        let mb = self.next_b[chunk as usize];
        self.next_b[chunk as usize] += 1;
        if hold_w {
            self.push(Pass::InputGrad, mb, chunk);
            self.held_w.push_back((mb, chunk));
        } else {
            self.push(Pass::Backward, mb, chunk);
        }
    }

    /// B and then its W at once (a split backward that holds nothing back).
    fn b_then_w(&mut self, chunk: u32) {
        self.b(chunk, true);
        self.w();
    }

    fn w(&mut self) {
        if let Some((mb, chunk)) = self.held_w.pop_front() {
            self.push(Pass::WeightGrad, mb, chunk);
        }
    }
}

fn v_program(i: u32, p: u32, m: u32, split_all: bool) -> Vec<Step> {
    let mut g = Program {
        out: Vec::with_capacity(6 * m as usize),
        next_f: [0; 2],
        next_b: [0; 2],
        held_w: Default::default(),
    };
    // The steady state's backward: whole for DualPipeV, split for ZB-V.
    let steady_b = |g: &mut Program, chunk| {
        if split_all {
            g.b_then_w(chunk);
        } else {
            g.b(chunk, false);
        }
    };
    let below = p - 1 - i;
    for _ in 0..2 * below {
        g.f(0);
    }
    for _ in 0..=i {
        g.f(0);
        g.f(1);
    }
    for _ in 0..below {
        g.b_then_w(1);
        g.f(1);
    }
    // Validation guarantees m >= 2p, so the steady state has at least i + 1 rounds.
    for _ in 0..(m + i + 1).saturating_sub(2 * p) {
        g.f(0);
        steady_b(&mut g, 1);
        g.f(1);
        steady_b(&mut g, 0);
    }
    for _ in 0..below {
        steady_b(&mut g, 1);
        g.f(1);
        steady_b(&mut g, 0);
    }
    // The second half of these backwards holds W back (DualPipe's reference
    // switches at the middle, on the B1 or the B0 by the GPU's parity).
    let rounds = i + 1;
    for k in 0..rounds {
        let late = k > rounds / 2 || (k == rounds / 2 && i % 2 == 1);
        g.b(1, split_all || late);
        let late = k >= rounds / 2;
        g.b(0, split_all || late);
    }
    for _ in 0..below {
        g.w();
        g.b(0, true);
    }
    while !g.held_w.is_empty() {
        g.w();
    }
    g.out
}
