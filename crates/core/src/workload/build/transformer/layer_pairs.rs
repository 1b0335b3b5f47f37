//! A forward and a backward of different micro-batches built as one merged
//! pass, layer pair by layer pair, as Megatron-LM's combined 1F1B schedule
//! plan builds them (model.md section 4c) and as DeepSeek-V3's Fig. 4
//! rearranges each of DualPipe's forward-and-backward chunk pairs.
//!
//! The forward's layers run first to last, the backward's last to first;
//! the i-th of each make a pair, min(f, b) pairs in all, then the
//! backward's leftover layers alone, then the forward's
//! (Megatron-LM megatron/core/models/common/model_chunk_schedule_plan.py:
//! 554-594). Each pair runs in fixed phases (the same file, 261-301):
//!
//! ```text
//! comm:    combine_bwd      | dispatch_fwd, dispatch_bwd        | combine_fwd
//! compute: pre_dispatch_fwd | mlp_bwd, mlp_bwd_dw, then mlp_fwd | pre_dispatch_bwd
//! ```
//!
//! `pre_dispatch` is the attention, the layernorm, the shared experts and
//! the router (megatron/core/models/gpt/fine_grained_callables.py:67-130:
//! the shared experts run there when `moe_shared_expert_overlap` is off,
//! which combined 1F1B requires); `mlp` is the routed experts, whose weight
//! gradients (`mlp_bwd_dw`, `delay_wgrad_compute`) run under the
//! backward's dispatch. Each node waits only for the node before it in its
//! own pass (one CUDA event per model chunk, megatron/core/pipeline_parallel
//! /utils.py:336-345), so that the forward's dispatch runs under the
//! backward's experts, and so on. A dense layer has no all-to-all: its
//! forward is built whole where the pair's `pre_dispatch_fwd` runs and its
//! backward whole where `pre_dispatch_bwd` runs (Megatron runs a dense MLP
//! in the `mlp` slot; nothing but the order of compute differs).
//!
//! A pass alone (the leftover layers, or a step with nothing to pair) runs
//! its phases in the same order with nothing beside them: every all-to-all
//! is waited for where it is launched.

use super::ep_stream::EpStream;
use super::Builder;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::Recompute;
use crate::workload::build::schedule::{Pass, Step};
use crate::workload::cost::roofline::OpCost;
use crate::workload::graph::task::Meta;

/// One piece of a merged pass, built in the pair's phase order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Piece {
    /// The forward's receive from the previous virtual stage.
    ForwardHead,
    /// Attention, shared experts and router of a forward layer, which
    /// launch its dispatch (a dense layer: its whole forward).
    ForwardPreDispatch(u32),
    /// The routed experts of a forward layer, which launch its combine.
    ForwardMlp(u32),
    /// The forward's logits or its send.
    ForwardTail,
    /// The backward's receive, or the logits' backward.
    BackwardHead,
    /// The combine's backward of a backward layer, launched on the
    /// gradient the layer after it produced.
    BackwardCombine(u32),
    /// The routed experts' input gradients, which launch the dispatch's
    /// backward, and their weight gradients beside it.
    BackwardMlp(u32),
    /// The shared experts', router's and attention's backward (a dense
    /// layer: its whole backward).
    BackwardPreDispatch(u32),
    /// The backward's send, or the embedding's gradient.
    BackwardTail,
}

impl Piece {
    /// Which pass a piece belongs to: 0 the forward, 1 the backward.
    fn pass(self) -> usize {
        match self {
            Piece::ForwardHead
            | Piece::ForwardPreDispatch(_)
            | Piece::ForwardMlp(_)
            | Piece::ForwardTail => 0,
            _ => 1,
        }
    }
}

/// The pieces of a merged pass over forward layers `forward` (first to
/// last) and backward layers `backward` (last to first), in build order;
/// `moe(layer)` says whether a layer has experts; `logits_last`, whether
/// the forward ends on the output layer, which Megatron runs after the
/// backward's send (model_chunk_schedule_plan.py:596-618).
pub(super) fn pair_pieces(
    forward: &[u32],
    backward: &[u32],
    moe: impl Fn(u32) -> bool,
    logits_last: bool,
) -> Vec<Piece> {
    let mut out = vec![Piece::ForwardHead, Piece::BackwardHead];
    let pairs = forward.len().min(backward.len());
    let forward_alone = |out: &mut Vec<Piece>, l: u32| {
        out.push(Piece::ForwardPreDispatch(l));
        if moe(l) {
            out.push(Piece::ForwardMlp(l));
        }
    };
    let backward_alone = |out: &mut Vec<Piece>, l: u32| {
        if moe(l) {
            out.extend([Piece::BackwardCombine(l), Piece::BackwardMlp(l)]);
        }
        out.push(Piece::BackwardPreDispatch(l));
    };
    // model_chunk_schedule_plan.py:560-574, each pair as 261-301 orders it.
    for (&f, &b) in forward.iter().zip(backward).take(pairs) {
        if moe(b) {
            out.push(Piece::BackwardCombine(b));
        }
        out.push(Piece::ForwardPreDispatch(f));
        if moe(b) {
            out.push(Piece::BackwardMlp(b));
        }
        if moe(f) {
            out.push(Piece::ForwardMlp(f));
        }
        out.push(Piece::BackwardPreDispatch(b));
    }
    // model_chunk_schedule_plan.py:577-594: the backward's leftover layers,
    // then the forward's.
    for &b in &backward[pairs..] {
        backward_alone(&mut out, b);
    }
    for &f in &forward[pairs..] {
        forward_alone(&mut out, f);
    }
    if logits_last {
        out.extend([Piece::BackwardTail, Piece::ForwardTail]);
    } else {
        out.extend([Piece::ForwardTail, Piece::BackwardTail]);
    }
    out
}

impl Builder<'_> {
    /// Whether a forward step and the backward after it are built as one
    /// merged pass (see the module's note).
    pub(super) fn merges(&self, first: &Step, second: &Step) -> bool {
        self.merges_passes
            && first.pass == Pass::Forward
            && matches!(second.pass, Pass::Backward | Pass::InputGrad)
            && (first.micro_batch, first.chunk) != (second.micro_batch, second.chunk)
    }

    /// A forward step and a backward step as one merged pass, built piece
    /// by piece in the pairs' phase order, each pass waiting only for its
    /// own all-to-alls. Returns the FLOPs (model, executed) each added on
    /// each member, for the steady state's unit.
    pub(super) fn merged(
        &mut self,
        replica: u32,
        stage: u32,
        f: Step,
        b: Step,
    ) -> [Vec<(f64, f64)>; 2] {
        let pp = self.cluster.layout.pp;
        let schedule = self.s.parallel.schedule;
        let last_vs = self.virtual_stages_total() - 1;
        let vs = [
            schedule.virtual_stage(stage, f.chunk, pp),
            schedule.virtual_stage(stage, b.chunk, pp),
        ];
        let forward: Vec<u32> = self.layers_of(vs[0]).collect();
        let backward: Vec<u32> = self.layers_of(vs[1]).rev().collect();
        let pieces = pair_pieces(
            &forward,
            &backward,
            |l| self.t.is_moe_layer(l),
            vs[0] == last_vs,
        );
        let whole = b.pass == Pass::Backward;
        let mut streams = [EpStream::default(), EpStream::default()];
        let mut added: [Vec<(f64, f64)>; 2] = [
            vec![(0.0, 0.0); self.members.len()],
            vec![(0.0, 0.0); self.members.len()],
        ];
        for piece in pieces {
            if self.g.over_cap() {
                return added;
            }
            let pass = piece.pass();
            std::mem::swap(&mut self.ep_stream, &mut streams[pass]);
            let before: Vec<(f64, f64)> = self
                .members
                .iter()
                .map(|&m| self.g.flops[m as usize])
                .collect();
            let (mb, vs) = ([f.micro_batch, b.micro_batch][pass], vs[pass]);
            self.piece(replica, vs, last_vs, mb, whole, piece);
            for (k, (model, executed)) in before.into_iter().enumerate() {
                let now = self.g.flops[self.members[k] as usize];
                added[pass][k].0 += now.0 - model;
                added[pass][k].1 += now.1 - executed;
            }
            std::mem::swap(&mut self.ep_stream, &mut streams[pass]);
        }
        added
    }

    /// One piece of a merged pass (`Piece`), of micro-batch `mb` on virtual
    /// stage `vs`; `whole` is whether the backward computes its weight
    /// gradients (else they wait for the schedule's W).
    fn piece(&mut self, replica: u32, vs: u32, last_vs: u32, mb: u32, whole: bool, piece: Piece) {
        let moe_meta =
            |layer: u32, kind: OpKind, phase: Phase| Meta::new(kind, phase).mb(mb).layer(layer);
        match piece {
            Piece::ForwardHead => {
                if vs > 0 {
                    self.receive(replica, vs - 1, mb, Pass::Forward, Phase::Forward);
                }
            }
            Piece::ForwardPreDispatch(layer) => {
                self.ep_wait();
                self.before_layer(layer, Phase::Forward);
                self.layer_forward(layer, mb, Phase::Forward);
                if self.t.is_moe_layer(layer) {
                    let cost = self.pair_cost();
                    let meta = moe_meta(layer, OpKind::SharedExperts, Phase::Forward);
                    if cost.shared != OpCost::default() {
                        self.compute_all(cost.shared, meta);
                    }
                    self.compute_all(cost.router, meta.op(OpKind::Router));
                    self.ep_launch(meta.op(OpKind::Dispatch));
                }
            }
            Piece::ForwardMlp(layer) => {
                self.ep_wait();
                let cost = self.pair_cost();
                let meta = moe_meta(layer, OpKind::Experts, Phase::Forward);
                self.compute_all(cost.experts, meta);
                self.ep_launch(meta.op(OpKind::Combine));
            }
            Piece::ForwardTail => self.forward_tail(replica, vs, last_vs, mb),
            Piece::BackwardHead => self.backward_head(replica, vs, last_vs, mb),
            Piece::BackwardCombine(layer) => {
                self.ep_wait();
                self.backward_layer_opens(layer, mb);
                let meta = moe_meta(layer, OpKind::Combine, Phase::Backward);
                self.ep_launch(meta);
            }
            Piece::BackwardMlp(layer) => {
                self.ep_wait();
                let cost = self.pair_cost();
                let meta = moe_meta(layer, OpKind::ExpertsDgrad, Phase::Backward);
                self.compute_all(cost.experts_dgrad, meta);
                self.ep_launch(meta.op(OpKind::Dispatch));
                if whole {
                    self.compute_all(cost.experts_wgrad, meta.op(OpKind::ExpertsWgrad));
                }
            }
            Piece::BackwardPreDispatch(layer) => {
                self.ep_wait();
                if self.t.is_moe_layer(layer) {
                    let cost = self.pair_cost();
                    let meta = moe_meta(layer, OpKind::SharedExpertsBackward, Phase::Backward);
                    self.compute_all(cost.shared_dgrad, meta);
                    if whole && cost.shared_wgrad != OpCost::default() {
                        self.compute_all(cost.shared_wgrad, meta.op(OpKind::ExpertsWgrad));
                    }
                } else {
                    self.backward_layer_opens(layer, mb);
                }
                if whole {
                    self.layer_backward(layer, mb);
                    self.layer_grads_done(layer, mb);
                } else {
                    self.layer_input_grad(layer, mb);
                }
            }
            Piece::BackwardTail => self.backward_tail(replica, vs, mb, whole),
        }
    }

    /// What opens a layer's backward: sharded DP's hook, and with full
    /// recomputation the layer's forward again (its all-to-alls waited
    /// for), or the modules `recompute_modules` names.
    fn backward_layer_opens(&mut self, layer: u32, mb: u32) {
        self.before_layer(layer, Phase::Backward);
        if self.t.recompute == Recompute::Full {
            self.forward_layer(layer, mb, Phase::Recompute);
            self.ep_wait();
        }
        self.recompute_modules(layer, mb);
    }

    fn pair_cost(&self) -> crate::workload::cost::moe::MoeCost {
        self.moe_cost.expect("an MoE layer has its costs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_moe_layers_pair_in_megatrons_phases() {
        use Piece::*;
        let got = pair_pieces(&[0, 1], &[1, 0], |_| true, false);
        assert_eq!(
            got,
            vec![
                ForwardHead,
                BackwardHead,
                BackwardCombine(1),
                ForwardPreDispatch(0),
                BackwardMlp(1),
                ForwardMlp(0),
                BackwardPreDispatch(1),
                BackwardCombine(0),
                ForwardPreDispatch(1),
                BackwardMlp(0),
                ForwardMlp(1),
                BackwardPreDispatch(0),
                ForwardTail,
                BackwardTail,
            ]
        );
    }

    #[test]
    fn leftover_backward_layers_run_before_leftover_forward_layers() {
        use Piece::*;
        // Three backward layers against one forward: one pair, then two alone.
        let got = pair_pieces(&[4], &[2, 1, 0], |l| l != 1, true);
        assert_eq!(
            got,
            vec![
                ForwardHead,
                BackwardHead,
                BackwardCombine(2),
                ForwardPreDispatch(4),
                BackwardMlp(2),
                ForwardMlp(4),
                BackwardPreDispatch(2),
                BackwardPreDispatch(1),
                BackwardCombine(0),
                BackwardMlp(0),
                BackwardPreDispatch(0),
                BackwardTail,
                ForwardTail,
            ]
        );
    }
}
