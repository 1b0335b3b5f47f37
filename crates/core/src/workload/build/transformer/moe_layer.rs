//! The layers of a step cut at their expert all-to-alls (model.md section
//! 4c): a dense layer is one segment; an MoE layer's forward is two (the
//! attention and the router, which launches the dispatch; the experts,
//! which launch the combine) and its backward three (the shared experts'
//! backward, which launches the combine's mirror; the experts' input
//! gradients, which launch the dispatch's mirror; the attention's
//! backward). Each segment first waits for the all-to-all its own pass
//! launched last (`EpStream`).
//!
//! With `overlap.ep` on, what needs no all-to-all runs under it: the shared
//! experts under the dispatch (and their weight gradients under the
//! combine's mirror), the experts' weight gradients under the dispatch's
//! mirror, delayed as Megatron-LM's `--delay-wgrad-compute` delays them. In
//! 1F1B and interleaved schedules a forward and the backward after it are
//! then built as one merged pass (Megatron-LM's 1F1B all-to-all overlap,
//! `--overlap-moe-expert-parallel-comm`), and in DualPipeV each forward and
//! backward chunk pair (DeepSeek's `_forward_backward_chunk`): their
//! segments alternate, so that each one's all-to-all runs under the other's
//! compute. Off, each all-to-all blocks the compute stream where it is
//! launched; its window (the compute before the op that needs its result:
//! the shared experts, the weight gradients) is still reported.

use super::Builder;
use crate::collective::{CallShape, Collective};
use crate::model::axis::Axis;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::Dispatcher;
use crate::workload::build::schedule::Pass;
use crate::workload::cost::roofline::OpCost;
use crate::workload::graph::task::{Meta, TaskId};

impl Builder<'_> {
    /// Segments of layer `layer`'s forward.
    fn forward_segments(&self, layer: u32) -> u32 {
        if self.t.is_moe_layer(layer) {
            2
        } else {
            1
        }
    }

    /// Segments of layer `layer`'s backward (whole or B).
    fn backward_segments(&self, layer: u32) -> u32 {
        if self.t.is_moe_layer(layer) {
            3
        } else {
            1
        }
    }

    /// A layer's whole forward, segment after segment.
    pub(super) fn forward_layer(&mut self, layer: u32, mb: u32, phase: Phase) {
        for seg in 0..self.forward_segments(layer) {
            self.forward_segment(layer, mb, phase, seg);
        }
    }

    /// A layer's whole backward (`whole`) or its B, segment after segment,
    /// with its gradients' hand-off.
    pub(super) fn backward_layer(&mut self, layer: u32, mb: u32, whole: bool) {
        for seg in 0..self.backward_segments(layer) {
            self.backward_segment(layer, mb, whole, seg);
        }
    }

    fn forward_segment(&mut self, layer: u32, mb: u32, phase: Phase, seg: u32) {
        self.ep_wait();
        let dense = !self.t.is_moe_layer(layer);
        let meta = Meta::new(OpKind::Router, phase).mb(mb).layer(layer);
        match seg {
            0 => {
                self.layer_forward(layer, mb, phase);
                if dense {
                    return;
                }
                let cost = self.moe_cost();
                self.compute_all(cost.router, meta);
                self.ep_launch(meta.op(OpKind::Dispatch));
                let beside = self.ep_options.shared_expert;
                self.beside(cost.shared, meta.op(OpKind::SharedExperts), beside);
            }
            _ => {
                let cost = self.moe_cost();
                self.etp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
                self.compute_all(cost.experts, meta.op(OpKind::Experts));
                self.etp_blocking(Collective::ReduceScatter, meta.op(OpKind::ReduceScatter));
                self.ep_launch(meta.op(OpKind::Combine));
            }
        }
    }

    fn backward_segment(&mut self, layer: u32, mb: u32, whole: bool, seg: u32) {
        self.ep_wait();
        let moe = self.t.is_moe_layer(layer);
        let meta = Meta::new(OpKind::SharedExpertsBackward, Phase::Backward)
            .mb(mb)
            .layer(layer);
        match (moe, seg) {
            (true, 0) => {
                let cost = self.moe_cost();
                if cost.shared_dgrad != OpCost::default() {
                    self.compute_all(cost.shared_dgrad, meta);
                }
                self.ep_launch(meta.op(OpKind::Combine));
                if whole {
                    let beside = self.ep_options.shared_expert;
                    self.beside(cost.shared_wgrad, meta.op(OpKind::ExpertsWgrad), beside);
                }
            }
            (true, 1) => {
                let cost = self.moe_cost();
                // The mirrors of the forward's reduce-scatter and gather.
                self.etp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
                self.compute_all(cost.experts_dgrad, meta.op(OpKind::ExpertsDgrad));
                self.etp_blocking(Collective::ReduceScatter, meta.op(OpKind::ReduceScatter));
                self.ep_launch(meta.op(OpKind::Dispatch));
                if whole {
                    let beside = self.ep_options.dispatch_wgrad;
                    self.beside(cost.experts_wgrad, meta.op(OpKind::ExpertsWgrad), beside);
                }
            }
            _ if whole => {
                self.layer_backward(layer, mb);
                self.layer_grads_done(layer, mb);
            }
            _ => self.layer_input_grad(layer, mb),
        }
    }

    /// An MoE layer's W: the routed and shared experts' weight gradients.
    pub(super) fn experts_weight_grad(&mut self, meta: Meta) {
        let cost = self.moe_cost();
        self.compute_all(
            cost.experts_wgrad.add(cost.shared_wgrad),
            meta.op(OpKind::ExpertsWgrad),
        );
    }

    fn moe_cost(&self) -> crate::workload::cost::moe::MoeCost {
        self.moe_cost.expect("an MoE layer has its costs")
    }

    /// Compute that needs none of the all-to-alls in flight: with the EP
    /// overlap option that moves it (`overlap`) it runs under them; without,
    /// after them.
    fn beside(&mut self, cost: OpCost, meta: Meta, overlap: bool) {
        if cost == OpCost::default() {
            return;
        }
        if !overlap {
            self.ep_block();
        }
        self.compute_all(cost, meta);
    }

    /// The next compute op of the pass needs the all-to-alls it launched:
    /// it waits for those in flight, and their windows, and those of the
    /// blocking ones, close.
    pub(super) fn ep_wait(&mut self) {
        self.ep_block();
        for (id, from) in std::mem::take(&mut self.ep_stream.blocking) {
            self.close_ep_window(id, from);
        }
    }

    /// The next compute op waits for the all-to-alls in flight (it may not
    /// run beside them), whose windows close there.
    fn ep_block(&mut self) {
        let pending = std::mem::take(&mut self.ep_stream.pending);
        if pending.is_empty() {
            return;
        }
        for (id, from) in pending {
            self.close_ep_window(id, from);
            self.block_all(id);
        }
    }

    /// The pass's pending all-to-alls are waited for by `task` (a pipeline
    /// send of their output), not by the compute stream.
    pub(super) fn ep_feed(&mut self, task: TaskId) {
        for &(id, _) in &self.ep_stream.pending {
            self.g.dep(id, task);
        }
    }

    /// Forgets the pending all-to-alls once a send carries them (the send
    /// needs their output: their windows close, the blocking ones' too).
    pub(super) fn ep_fed(&mut self) {
        let blocking = std::mem::take(&mut self.ep_stream.blocking);
        for (id, from) in std::mem::take(&mut self.ep_stream.pending)
            .into_iter()
            .chain(blocking)
        {
            self.close_ep_window(id, from);
        }
    }

    /// An all-to-all's window: its GPU's compute from its launch (compute
    /// index `from`) until the op that needs it.
    fn close_ep_window(&mut self, id: TaskId, from: u32) {
        let gpu = self.g.tasks[id as usize].gpu;
        let next = self.g.next_compute_index(gpu);
        if next > from {
            self.g.set_window(id, from, next - 1);
        }
    }

    /// The expert-TP group's gather of the dispatched token copies (or
    /// reduce-scatter of the experts' partial outputs), NCCL's path with
    /// etp > 1 (token_dispatcher.py:741-751 and 824-832): one collective
    /// per group of etp consecutive members, inside their TP group on
    /// NVLink, after each member's latest op; the compute stream waits for
    /// it, as Megatron-LM runs it in `dispatch_postprocess` and
    /// `combine_preprocess` on the compute stream. Combined 1F1B does not
    /// move them: its schedule plan runs the expert part as one compute
    /// node (`mlp`, model_chunk_schedule_plan.py:163, on `comp_stream`),
    /// whose forward (fine_grained_callables.py:178-190) calls
    /// `routed_experts_compute`, which runs `dispatch_postprocess` before
    /// the experts and `combine_preprocess` after them (moe_layer.py:547-569);
    /// only the all-to-alls are nodes of `comm_stream` (:165-166). So they
    /// block here with every EP option. Nothing with etp 1.
    fn etp_blocking(&mut self, kind: Collective, meta: Meta) {
        let size = self.etp_gather_bytes;
        if size <= 0.0 {
            return;
        }
        let etp = self.folding.etp;
        let call = self.cluster.node_call(Axis::Ep, kind, etp, size);
        let meta = meta.call(&call);
        // The reduced simulation's one GPU stands for its group, its own
        // links for the ring's.
        let width = (etp as usize).min(self.members.len());
        let groups: Vec<Vec<u32>> = self.members.chunks(width).map(<[u32]>::to_vec).collect();
        for group in groups {
            let pattern = self.cluster.nvlink_ring(&mut self.g, &group);
            let id = self.g.comm(
                &group,
                Axis::Ep,
                pattern,
                call.wire_bytes,
                call.latency_s,
                meta,
            );
            for &m in &group {
                if let Some(last) = self.g.last_compute(m) {
                    self.g.dep(last, id);
                }
                self.g.block_compute_on(m, id);
            }
        }
    }

    /// Each member's share of an all-to-all of the EP group, after its
    /// latest compute op (and whatever that stream's next op awaits): one
    /// task per link class it crosses, each a transfer per (source,
    /// destination) pair. Blocking without EP overlap.
    pub(super) fn ep_launch(&mut self, meta: Meta) {
        let Some(traffic) = self.ep_traffic else {
            return;
        };
        let m = self.t.moe.as_ref().expect("an MoE layer");
        let traffic = traffic.scaled(crate::workload::cost::moe::wire_fraction(
            m, meta.op, meta.phase,
        ));
        let group = crate::workload::cost::moe::A2aGroup::of(
            m,
            &self.folding,
            self.s.hardware.gpus_per_node,
        );
        let (ranks, place) = (group.ranks, group.place);
        let deepep = m.dispatcher == Dispatcher::Deepep;
        // The SMs and copies its library's call holds (NCCL's grouped
        // sends, or the SMs DeepEP is given) and the kernel a trace names;
        // the bytes move as the flows below.
        let shape = CallShape {
            kind: Collective::AllToAll,
            ranks,
            per_node: place.per_node,
            size_bytes: traffic.nic_bytes() + traffic.nvlink_bytes(),
        };
        let meta = meta.call(&self.cluster.call(Axis::Ep, shape));
        // The library's achievable rates on each link class (DeepEP's
        // fitted to its own table, `collective::deepep`).
        let (rates, links) = self.cluster.all_to_all_rates(Axis::Ep, shape);
        let traffic = traffic.at_rates(rates, links);
        let (stage, replica) = self.group_at;
        let parts = [
            (false, traffic.nvlink_peers, traffic.nvlink_pair_bytes),
            (true, traffic.nic_peers, traffic.nic_pair_bytes),
        ];
        for k in 0..self.members.len() {
            let gpu = self.members[k];
            // What the all-to-all waits for, taken before its own parts
            // block the GPU: its NVLink and network parts are one NCCL
            // call's grouped sends, which run side by side, not in turn.
            let waiting: Vec<TaskId> = self.g.blockers_of(gpu).to_vec();
            for (across, pairs, bytes) in parts {
                if pairs == 0 || bytes <= 0.0 {
                    continue;
                }
                let tp_rank = self.g.gpus[gpu as usize].tp_rank;
                let at = self.cluster.layout.stage_index(replica, tp_rank);
                let ranks = if deepep {
                    self.folding.tp_ep_group(at)
                } else {
                    self.folding.ep_group(at)
                };
                let peers = self.cluster.ep_peers(
                    (stage, replica, tp_rank),
                    &ranks,
                    across,
                    deepep && across,
                );
                let pattern = self
                    .cluster
                    .ep_pattern(&mut self.g, gpu, pairs, &peers, across);
                let latency = if across {
                    self.cluster.network_latency_s()
                } else {
                    self.cluster.nvlink_latency_s()
                };
                let id = self.g.comm(&[gpu], Axis::Ep, pattern, bytes, latency, meta);
                if let Some(last) = self.g.last_compute(gpu) {
                    self.g.dep(last, id);
                }
                for &b in &waiting {
                    self.g.dep(b, id);
                }
                let launched_at = self.g.next_compute_index(gpu);
                if self.s.overlap.ep.is_on() {
                    self.ep_stream.pending.push((id, launched_at));
                } else {
                    self.g.block_compute_on(gpu, id);
                    self.ep_stream.blocking.push((id, launched_at));
                }
            }
        }
    }

    /// After a forward's last layer: the logits on the last virtual stage,
    /// else the send of its output (which waits for the last combine).
    pub(super) fn forward_tail(&mut self, replica: u32, vs: u32, last_vs: u32, mb: u32) {
        if vs == last_vs {
            self.ep_wait();
            let meta = Meta::new(OpKind::Logits, Phase::Forward).mb(mb);
            self.compute_all(self.cost.logits, meta);
        } else if self.send_with_next {
            self.held_send = Some((replica, vs, mb));
        } else {
            self.send(replica, vs, mb, Pass::Forward);
        }
    }
}
