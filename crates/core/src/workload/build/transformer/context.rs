//! The attention core, and with context parallelism its exchange of keys
//! and values between the CP ranks (model.md section 4d): ring attention,
//! each step's transfer under the block before it with CP overlap, or
//! Transformer Engine's all-gather of K/V (Llama 3's), exposed before the
//! attention in the forward and again in the backward, whose K/V
//! gradients are reduce-scattered before QKV's backward. The group's CP
//! transfers run in order on one stream.

use super::Builder;
use crate::collective::Collective;
use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::model::scenario::CpMode;
use crate::workload::cost::roofline::{times, OpCost};
use crate::workload::graph::task::{Meta, TaskId};

impl Builder<'_> {
    /// The attention core's forward, with context parallelism's exchange
    /// of keys and values (model.md 4d).
    pub(super) fn attention_forward(&mut self, meta: Meta) {
        if self.s.parallel.cp == 1 {
            self.compute_all(self.cost.attention, meta);
            return;
        }
        let (block, kv) = (self.cost.attention_block, self.cost.kv_block_bytes);
        let diagonal = self.cost.attention_diagonal;
        match self.s.parallel.cp_mode {
            CpMode::Ring => self.ring_attention(block, diagonal, 0, kv, meta),
            CpMode::Allgather => self.gathered_attention(block, diagonal, kv, meta),
        }
    }

    /// The attention core's backward (with `cost`, what else runs in the
    /// same op). Its recomputed forward counts as recomputation, whichever
    /// backward form runs it.
    pub(super) fn attention_backward(&mut self, cost: OpCost, meta: Meta) {
        if self.s.parallel.cp > 1 {
            let rest = cost.without(self.cost.attention_core_backward);
            // What is left of the core's own op is rounding.
            let rest = if rest.time_s > 1e-9 * cost.time_s {
                rest
            } else {
                OpCost::default()
            };
            self.cp_attention_backward(rest, meta);
        } else {
            self.compute_all(cost, meta);
        }
        for i in 0..self.members.len() {
            let m = self.members[i];
            self.g
                .count_as_recompute(m, self.cost.attention_recompute_flops);
        }
    }

    /// A CP transfer of the group, after each member's latest op and the
    /// group's previous CP transfer (one stream).
    fn cp_comm(&mut self, bytes: f64, meta: Meta) -> TaskId {
        let members = std::mem::take(&mut self.members);
        let (pattern, latency) = self.cp_step;
        let id = self
            .g
            .comm(&members, Axis::Cp, pattern, bytes, latency, meta);
        self.cp_after_compute(&members, id);
        self.members = members;
        id
    }

    /// `id` waits for each member's latest compute op and the group's
    /// previous CP transfer.
    fn cp_after_compute(&mut self, members: &[u32], id: TaskId) {
        for &m in members {
            if let Some(last) = self.g.last_compute(m) {
                self.g.dep(last, id);
            }
        }
        if let Some(previous) = self.last_cp_collective.replace(id) {
            self.g.dep(previous, id);
        }
    }

    /// Ring attention over cp K/V blocks (Megatron-LM's and torchtitan's):
    /// the local block first, then cp - 1 steps, each bringing the next
    /// block from the ring neighbour while passing one on. Step
    /// `diagonal_step` runs the rank's own block (`diagonal`: the causal
    /// mask's diagonal), the others `block` (half of theirs run, causal):
    /// Transformer Engine runs the diagonal first in the forward and last
    /// in the backward (context_parallel.py lines 1797 and 2581). With CP overlap,
    /// step i + 1's transfer runs under block i's attention: it leaves as
    /// soon as step i has arrived and block i - 1 no longer reads its
    /// buffer (double buffering). Without it, each step runs after the
    /// block before it and the block after waits for it. `bytes`: what one
    /// step moves per rank.
    fn ring_attention(
        &mut self,
        block: OpCost,
        diagonal: OpCost,
        diagonal_step: u32,
        bytes: f64,
        meta: Meta,
    ) {
        let cp = self.s.parallel.cp;
        let send = meta.op(OpKind::Send);
        let mut arrived: Option<TaskId> = None;
        for i in 0..cp {
            if self.s.overlap.cp {
                let incoming = arrived;
                if i + 1 < cp {
                    let id = self.cp_comm(bytes, send.chunk(i + 1));
                    // Its window: the block computing while it moves.
                    self.window_next(id);
                    arrived = Some(id);
                }
                if let Some(id) = incoming {
                    self.block_all(id);
                }
            } else if i > 0 {
                let id = self.cp_comm(bytes, send.chunk(i));
                // The window it would have if overlapped: the block before.
                if let Some(last) = self.g.next_compute_index(self.members[0]).checked_sub(1) {
                    self.g.set_window(id, last, last);
                }
                self.block_all(id);
            }
            let op = if i == diagonal_step { diagonal } else { block };
            self.compute_all(op, meta.chunk(i));
        }
    }

    /// All-gather attention (Llama 3), as Transformer Engine's
    /// `AttnFuncWithCPAndKVAllGather` runs it ("KV all-gather between CP
    /// ranks is exposed", transformer_engine/pytorch/attention/
    /// dot_product_attention/context_parallel.py line 3016, at commit
    /// d0067d0): K and V gathered on the compute stream (lines 3215-3216,
    /// `gather_along_first_dim` with `async_op=False`, distributed.py line
    /// 1668), then the rank's two load-balanced query chunks against them
    /// (lines 3254 and 3339-3346). The two chunks run on two streams to
    /// fill each other's waves, not to hide the gather, so `overlap.cp`
    /// changes nothing here. The gather has no window: its data comes out
    /// of this layer's own QKV projection, the op just before, and its
    /// result is needed by the attention just after (model.md 5). TE's two
    /// calls (K, then V) run here as one of both (one call's latency
    /// less). `kv`: one rank's K/V bytes.
    fn gathered_attention(&mut self, block: OpCost, diagonal: OpCost, kv: f64, meta: Meta) {
        let cp = self.s.parallel.cp;
        let gather = self.cp_collective(Collective::AllGather, kv, meta.op(OpKind::AllGather));
        self.block_all(gather);
        self.compute_all(diagonal.add(times(block, cp - 1)), meta);
    }

    /// A collective of the group's CP ranks of `kind` over cp x `bytes`
    /// (each rank's share), after each member's latest op.
    fn cp_collective(&mut self, kind: Collective, bytes: f64, meta: Meta) -> TaskId {
        let members = std::mem::take(&mut self.members);
        let size = bytes * f64::from(self.s.parallel.cp);
        let placed = self
            .cluster
            .cp_collective(&mut self.g, &members, kind, size);
        let id = self.g.placed_comm(&members, Axis::Cp, placed, meta);
        self.cp_after_compute(&members, id);
        self.members = members;
        id
    }

    /// The attention core's backward with context parallelism: the rest
    /// of the op (`rest`: the projection's GEMMs and the kernels before
    /// them), then cp blocks. Ring: the backward passes K/V and their
    /// gradients, twice a forward step's bytes. Allgather, as Transformer
    /// Engine's backward runs it: K/V gathered again (context_parallel.py
    /// lines 3788-3789), the two chunks' backward, then dK and dV
    /// reduce-scattered back (lines 4122-4123, `async_op=False`, on the
    /// compute stream after it waits for the CP stream, line 4099), and
    /// QKV's backward waits: twice the forward's bytes, all exposed, and
    /// like the forward's gather, neither has a window.
    fn cp_attention_backward(&mut self, rest: OpCost, meta: Meta) {
        if rest.time_s > 0.0 {
            self.compute_all(rest, meta);
        }
        let (block, kv) = (self.cost.attention_backward_block, self.cost.kv_block_bytes);
        let diagonal = self.cost.attention_backward_diagonal;
        let cp = self.s.parallel.cp;
        match self.s.parallel.cp_mode {
            CpMode::Ring => self.ring_attention(block, diagonal, cp - 1, 2.0 * kv, meta),
            CpMode::Allgather => {
                let gather = Collective::AllGather;
                let id = self.cp_collective(gather, kv, meta.op(OpKind::AllGather));
                self.block_all(id);
                self.compute_all(diagonal.add(times(block, cp - 1)), meta);
                let kind = Collective::ReduceScatter;
                let id = self.cp_collective(kind, kv, meta.op(OpKind::ReduceScatter));
                self.block_all(id);
            }
        }
    }
}
