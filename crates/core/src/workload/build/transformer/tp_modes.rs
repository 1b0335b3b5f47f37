//! Tensor parallelism's collectives around a layer's GEMMs, in each way TP
//! overlaps (`tp_form`; model.md section 4): blocking; a row-parallel GEMM
//! in chunks, each chunk's reduction under the next chunk (CoCoNet); the
//! backward's reductions launched beside the weight-gradient GEMM
//! (Megatron's); and with sequence parallelism each AllGather and
//! ReduceScatter decomposed into copy-engine ring steps under the GEMM's
//! pieces (PyTorch Async TP). The group's collectives run in order on one
//! stream.

use super::Builder;
use crate::collective::nccl::CollectiveCall;
use crate::collective::Collective;
use crate::collective::Engine;
use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::workload::cost::roofline::{OpCost, SplitGemm};
use crate::workload::graph::task::{Meta, TaskId};

impl Builder<'_> {
    /// A collective of the TP group, after each member's latest op.
    fn tp_collective(&mut self, kind: Collective, size_bytes: f64, meta: Meta) -> TaskId {
        let call = self.cluster.node_call(Axis::Tp, kind, self.tp, size_bytes);
        self.tp_call(&call, meta)
    }

    /// The TP group's collective running `call`, after each member's latest op.
    fn tp_call(&mut self, call: &CollectiveCall, meta: Meta) -> TaskId {
        let id = self.tp_call_without_window(call, meta);
        // The window it would have if overlapped, until an overlapping
        // schedule names another: the GEMM that produced its data.
        if let Some(last) = self.g.next_compute_index(self.members[0]).checked_sub(1) {
            self.g.set_window(id, last, last);
        }
        id
    }

    /// The TP group's collective running `call`, after each member's latest
    /// op, with no window: nothing could run beside it.
    pub(super) fn tp_call_without_window(&mut self, call: &CollectiveCall, meta: Meta) -> TaskId {
        let members = std::mem::take(&mut self.members);
        let id = self.g.comm(
            &members,
            Axis::Tp,
            self.tp_pattern,
            call.wire_bytes,
            call.latency_s,
            meta.call(call),
        );
        for &m in &members {
            if let Some(last) = self.g.last_compute(m) {
                self.g.dep(last, id);
            }
        }
        if let Some(previous) = self.last_tp_collective.replace(id) {
            self.g.dep(previous, id);
        }
        self.members = members;
        id
    }

    /// A blocking collective: the compute stream waits for it.
    pub(super) fn tp_blocking(&mut self, kind: Collective, meta: Meta) {
        let id = self.tp_collective(kind, self.tp_bytes(kind), meta);
        self.block_all(id);
    }

    /// Bytes a whole TP collective of `kind` moves: an all-gather at its
    /// own width (fp8 with tensorwise scaling), the rest the activation.
    fn tp_bytes(&self, kind: Collective) -> f64 {
        match kind {
            Collective::AllGather => self.cost.tp_gather_bytes,
            _ => self.cost.activation_bytes,
        }
    }

    /// The op a TP collective of `kind` is shown as.
    fn collective_op(kind: Collective) -> OpKind {
        match kind {
            Collective::AllReduce => OpKind::AllReduce,
            Collective::ReduceScatter => OpKind::ReduceScatter,
            Collective::AllGather => OpKind::AllGather,
            Collective::SendRecv => OpKind::Send,
            Collective::AllToAll => OpKind::Dispatch,
        }
    }

    /// A row-parallel GEMM and the reduction of its output. With TP overlap
    /// the GEMM runs in chunks and chunk i's collective runs while chunk i+1
    /// computes (CoCoNet); the next op waits for all of them.
    pub(super) fn row_parallel(&mut self, gemm: SplitGemm, meta: Meta) {
        if self.tp == 1 {
            self.compute_all(gemm.chunk(&self.roof, 1), meta);
            return;
        }
        if self.decomposed {
            if let Some(id) = self.decomposed_scatter(gemm, meta) {
                self.block_all(id);
            }
            return;
        }
        let kind = if self.t.sequence_parallel {
            Collective::ReduceScatter
        } else {
            Collective::AllReduce
        };
        let chunks = self.chunks;
        let cost = gemm.chunk(&self.roof, chunks);
        if meta.op == OpKind::MlpDown && self.boundary_layer == Some(meta.layer) {
            // The sliced boundary's ReduceScatter reduces this output.
            for i in 0..chunks {
                self.compute_all(cost, meta.chunk(i));
            }
            return;
        }
        let size = self.cost.activation_bytes / f64::from(chunks);
        let fused_bytes = if self.fused.carries(meta.op, meta.layer) {
            self.cost.bias_dropout_add.memory_s * self.roof.hbm_bps / f64::from(chunks)
        } else {
            0.0
        };
        // Chunks as they are launched (model.md 2b): separate NCCL calls, each
        // at its own size with its own latency and protocol; or, with
        // `overlap.fuse`, one fused kernel (CoCoNet's), chosen at the whole
        // size, whose further chunks add one ring step each.
        let one_kernel = self.fused.on;
        let call = if one_kernel {
            self.cluster
                .node_call(Axis::Tp, kind, self.tp, self.cost.activation_bytes)
                .piece(chunks)
        } else {
            self.cluster.node_call(Axis::Tp, kind, self.tp, size)
        };
        let mut collectives = Vec::with_capacity(chunks as usize);
        for i in 0..chunks {
            self.compute_all(cost, meta.chunk(i));
            let id = self.tp_call(&call, meta.op(Self::collective_op(kind)).chunk(i));
            crate::workload::build::fusion::carry(&mut self.g, id, fused_bytes);
            if one_kernel && i > 0 {
                self.g.tasks[id as usize].set_latency_s(self.cluster.pipelined_chunk_latency_s());
            }
            if i + 1 < chunks {
                self.window_next(id);
            }
            collectives.push(id);
        }
        for id in collectives {
            self.block_all(id);
        }
    }

    /// Backward of a column-parallel GEMM: the input gradient is reduced
    /// across the TP group. With TP overlap that reduction runs under the
    /// weight-gradient GEMM, and with sequence parallelism the re-gathered
    /// input runs under the input-gradient GEMM (Korthikanti et al. 2022).
    pub(super) fn column_parallel_backward(
        &mut self,
        dgrad: OpCost,
        wgrad: OpCost,
        dmeta: Meta,
        wmeta: Meta,
    ) {
        if self.tp == 1 {
            self.compute_all(dgrad, dmeta);
            self.compute_all(wgrad, wmeta);
            return;
        }
        let sp = self.t.sequence_parallel;
        let size = self.cost.activation_bytes;
        let gather = sp.then(|| {
            let bytes = self.tp_bytes(Collective::AllGather);
            let id = self.tp_collective(Collective::AllGather, bytes, dmeta.op(OpKind::AllGather));
            if self.tp_on {
                self.window_next(id);
            } else {
                self.block_all(id);
            }
            id
        });
        self.compute_all(dgrad, dmeta);
        if let (Some(id), true) = (gather, self.tp_on) {
            self.block_all(id);
        }
        let kind = if sp {
            Collective::ReduceScatter
        } else {
            Collective::AllReduce
        };
        let id = self.tp_collective(kind, size, dmeta.op(Self::collective_op(kind)));
        if self.tp_on {
            self.window_next(id);
            self.compute_all(wgrad, wmeta);
            self.block_all(id);
        } else {
            self.block_all(id);
            self.compute_all(wgrad, wmeta);
        }
    }

    /// A column-parallel GEMM's input gradient and its reduction across the
    /// TP group, which the next op waits for: in a split backward no weight
    /// gradient follows to hide it.
    pub(super) fn input_grad_reduced(&mut self, dgrad: OpCost, meta: Meta) {
        self.compute_all(dgrad, meta);
        if self.tp == 1 {
            return;
        }
        let kind = if self.t.sequence_parallel {
            Collective::ReduceScatter
        } else {
            Collective::AllReduce
        };
        self.tp_blocking(kind, meta.op(Self::collective_op(kind)));
    }

    /// With sequence parallelism and TP overlap, the AllGather before a
    /// column-parallel GEMM in its decomposed form (PyTorch Async TP,
    /// Transformer Engine's userbuffers; model.md section 4).
    pub(super) fn gathered_column_parallel(&mut self, pre: OpCost, gemm: SplitGemm, meta: Meta) {
        let chunk = gemm.chunk(&self.roof, self.tp);
        self.decomposed_gather(pre, chunk, meta);
    }

    /// One step of a decomposed TP collective: every rank of the group
    /// passes one sequence slice (1/t of the activation, at the width of
    /// `kind`'s whole collective) to its ring neighbour, point to point.
    fn ring_step(&mut self, kind: Collective, meta: Meta) -> TaskId {
        let size = self.tp_bytes(kind) / f64::from(self.tp);
        let id = self.tp_collective(Collective::SendRecv, size, meta);
        let library = self.cluster.library(Axis::Tp, Collective::SendRecv);
        if library.engine() == Engine::CopyEngines {
            self.g.on_copy_engines(id);
        }
        id
    }

    /// A decomposed AllGather feeding a GEMM: after `pre` (the kernels that
    /// produce the local slice), the GEMM runs in t pieces, the first on the
    /// local slice, and the t - 1 ring steps bring the other slices, each
    /// moving under the GEMM on the piece before it. `chunk` is one piece.
    pub(super) fn decomposed_gather(&mut self, pre: OpCost, chunk: OpCost, meta: Meta) {
        if pre != OpCost::default() {
            self.compute_all(pre, meta);
        }
        let first = self.g.next_compute_index(self.members[0]);
        let steps: Vec<TaskId> = (0..self.tp - 1)
            .map(|i| {
                let id = self.ring_step(Collective::AllGather, meta.op(OpKind::AllGather).chunk(i));
                self.g.set_window(id, first + i, first + i);
                id
            })
            .collect();
        for i in 0..self.tp {
            if i > 0 {
                self.block_all(steps[i as usize - 1]);
            }
            self.compute_all(chunk, meta.chunk(i));
        }
    }

    /// A decomposed ReduceScatter after a GEMM: the GEMM runs in t pieces,
    /// one per destination slice; after each but the last, its partial sum
    /// moves one ring step (added to the neighbour's) while the next piece
    /// computes. Returns the last step, which the output's consumer awaits.
    fn decomposed_scatter(&mut self, gemm: SplitGemm, meta: Meta) -> Option<TaskId> {
        let chunk = gemm.chunk(&self.roof, self.tp);
        let mut last = None;
        for i in 0..self.tp {
            self.compute_all(chunk, meta.chunk(i));
            if i + 1 < self.tp {
                let id = self.ring_step(
                    Collective::ReduceScatter,
                    meta.op(OpKind::ReduceScatter).chunk(i),
                );
                self.window_next(id);
                last = Some(id);
            }
        }
        last
    }

    /// Backward of a column-parallel GEMM in the decomposed form: the input
    /// gradient's GEMM with its ReduceScatter decomposed, then the weight
    /// gradient's GEMM fed by the decomposed AllGather of the layer's input
    /// (sharded by sequence parallelism). The next op awaits the scatter.
    pub(super) fn decomposed_column_backward(
        &mut self,
        pre: OpCost,
        forward: SplitGemm,
        dmeta: Meta,
        wmeta: Meta,
    ) {
        if pre != OpCost::default() {
            self.compute_all(pre, dmeta);
        }
        let scatter = self.decomposed_scatter(forward.input_grad(), dmeta);
        let wgrad = forward.weight_grad_chunk(&self.roof, self.tp);
        self.decomposed_gather(OpCost::default(), wgrad, wmeta);
        if let Some(id) = scatter {
            self.block_all(id);
        }
    }

    /// A row-parallel GEMM's output gradient, gathered across the sequence
    /// in ring steps under the pieces of that GEMM's input gradient (Async TP).
    pub(super) fn output_grad_gathered(&mut self, gemm: SplitGemm, meta: Meta) {
        self.decomposed_gather(
            self.cost.backward_pre,
            gemm.input_grad().chunk(&self.roof, self.tp),
            meta,
        );
    }

    /// A column-parallel GEMM's input gradient in a split backward, its
    /// ReduceScatter decomposed under its pieces; the next op awaits the
    /// last ring step, since no weight gradient follows to hide it.
    pub(super) fn input_grad_scattered(&mut self, pre: OpCost, forward: SplitGemm, meta: Meta) {
        if pre != OpCost::default() {
            self.compute_all(pre, meta);
        }
        if let Some(id) = self.decomposed_scatter(forward.input_grad(), meta) {
            self.block_all(id);
        }
    }
}
