//! One entry of a stage's program: which pass of which chunk of which
//! micro-batch it runs.

/// What one entry of a stage's program computes for one chunk of one micro-batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The forward pass.
    Forward,
    /// The whole backward: input and weight gradients one after the other.
    Backward,
    /// B: the input gradient alone, which the previous stage waits for.
    InputGrad,
    /// W: the weight gradient alone, after its B; nothing waits for it but
    /// the gradient reduction.
    WeightGrad,
    /// In ZB-1p, ZB-2p and ZB-V, the W still held back once the chunk has
    /// no B left to run: those of micro-batches `micro_batch..` (all that
    /// remain), run layer by layer, each layer's weight gradient over every
    /// held micro-batch before the next layer's. A layer's gradient is then final, and its DP bucket can
    /// be reduced, while the W of the layers below it still run: the
    /// zero-bubble reference implementation (sail-sg, `WeightGradStore.clear`)
    /// runs the held W this way and launches each parameter's reduction as
    /// soon as its last W is done.
    HeldWeightGrads,
}

/// One entry of a stage's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Which pass of the chunk runs.
    pub pass: Pass,
    /// The micro-batch, 0-based.
    pub micro_batch: u32,
    /// Model chunk on this device, 0..chunks (virtual stage index on the device).
    pub chunk: u32,
}

impl Step {
    /// The micro-batches the step computes, of `micro_batches` in the step:
    /// one, or for [`Pass::HeldWeightGrads`] every one from its own on.
    pub fn micro_batches(&self, micro_batches: u32) -> std::ops::Range<u32> {
        match self.pass {
            Pass::HeldWeightGrads => self.micro_batch..micro_batches.max(self.micro_batch + 1),
            _ => self.micro_batch..self.micro_batch + 1,
        }
    }
}
