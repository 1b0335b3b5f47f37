//! A mixture-of-experts layer on one rank (model.md section 4c): what its
//! router, routed experts and shared experts cost, how many parameters
//! each rank holds, and the all-to-all traffic between the ranks of its
//! expert-parallel group, per (source, destination) pair, for NCCL's
//! all-to-all and for DeepEP.
//!
//! Tokens: each rank routes the tokens it holds, b*s/t with sequence
//! parallelism (which Megatron-LM requires for experts with TP,
//! `validate::check_experts`): the MoE layer's input is the attention's
//! sequence-parallel shard and its router runs on it
//! (megatron/core/transformer/moe/moe_layer.py:636-640). The dispatcher's
//! "TP" is the expert TP group (token_dispatcher.py:85-90, `expt_tp`), not
//! the attention's: with etp 1 no tokens are gathered across TP. Balanced
//! routing sends each rank's T*k token copies evenly over the ep ranks, so
//! each rank also receives T*k copies; with etp > 1 NCCL's path gathers
//! them across the expert TP group after the all-to-all and
//! reduce-scatters the experts' partial outputs before the combine
//! (token_dispatcher.py:381-387 and 741-751, 824-832), and each expert's
//! GEMMs split their ffn width etp ways (experts.py:210-250), so a rank's
//! expert FLOPs are the same. `imbalance` (busiest over mean) stretches the
//! grouped GEMMs, whose pace the busiest expert sets, and not the FLOPs the
//! model counts, and loads the busiest rank's all-to-all traffic
//! (`AllToAllTraffic::at_busiest`).

use crate::collective::LinkRates;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::{Dispatcher, Moe, Transformer};
use crate::workload::cost::efficiency::GemmShape;
use crate::workload::cost::expert_folding::ExpertFolding;
use crate::workload::cost::roofline::{OpCost, Roofline};

/// Bytes per value of the tokens the all-to-alls move (bf16; DeepSeek-V3
/// dispatches in FP8, a precision this model does not run).
pub(crate) const TOKEN_BYTES: f64 = 2.0;

/// What one MoE layer costs on one rank for one micro-batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MoeCost {
    /// LayerNorm, the router GEMM (tokens x h x experts) and its top-k softmax.
    pub router: OpCost,
    /// The routed experts: permutation, grouped gate/up GEMM, SwiGLU,
    /// grouped down GEMM, unpermutation.
    pub experts: OpCost,
    /// The shared experts' SwiGLU on the rank's tokens (zero without any).
    pub shared: OpCost,
    /// The routed experts' activation (SwiGLU's gated product) alone, part
    /// of `experts`: what `moe_act` recomputation runs again.
    pub act: OpCost,
    /// The routed experts' input gradients (and the activation's backward).
    pub experts_dgrad: OpCost,
    /// The routed experts' weight gradients.
    pub experts_wgrad: OpCost,
    /// The shared experts' input gradients and the router's backward.
    pub shared_dgrad: OpCost,
    /// The shared experts' weight gradients.
    pub shared_wgrad: OpCost,
}

/// One all-to-all's traffic from one rank, per link class: how many peers
/// it sends to over that class and the bytes of each (source,
/// destination) pair. A rank receives as much from as many peers (the
/// routing is symmetric in expectation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllToAllTraffic {
    /// Peers reached over NVLink.
    pub nvlink_peers: u32,
    /// Bytes to each NVLink peer.
    pub nvlink_pair_bytes: f64,
    /// Peers reached over the NIC.
    pub nic_peers: u32,
    /// Bytes to each NIC peer.
    pub nic_pair_bytes: f64,
}

impl AllToAllTraffic {
    /// Bytes one rank sends over its NIC in one all-to-all.
    pub fn nic_bytes(&self) -> f64 {
        f64::from(self.nic_peers) * self.nic_pair_bytes
    }

    /// Bytes one rank sends over NVLink in one all-to-all.
    pub fn nvlink_bytes(&self) -> f64 {
        f64::from(self.nvlink_peers) * self.nvlink_pair_bytes
    }

    /// The traffic of the busiest rank under routing `imbalance` (busiest
    /// over mean; model.md 4c: the busiest rank receives `imbalance` times
    /// the mean in the dispatch, and sends it back in the combine). Each
    /// simulated rank stands for the busiest, whose all-to-all the others
    /// wait for. NCCL's all-to-all brings the extra tokens over each of the
    /// rank's pairs, NVLink and NIC alike. DeepEP brings them over NVLink
    /// from the node's forwarders, each of which received them over its
    /// own NIC: the node's NICs share the extra, each carrying
    /// (imbalance - 1) / per_node more.
    pub fn at_busiest(self, imbalance: f64, dispatcher: Dispatcher, per_node: u32) -> Self {
        let nic = match dispatcher {
            Dispatcher::Alltoall => imbalance,
            Dispatcher::Deepep => 1.0 + (imbalance - 1.0) / f64::from(per_node.max(1)),
        };
        Self {
            nvlink_pair_bytes: self.nvlink_pair_bytes * imbalance,
            nic_pair_bytes: self.nic_pair_bytes * nic,
            ..self
        }
    }

    /// The traffic with every pair's bytes times `fraction`.
    pub fn scaled(self, fraction: f64) -> Self {
        Self {
            nvlink_pair_bytes: self.nvlink_pair_bytes * fraction,
            nic_pair_bytes: self.nic_pair_bytes * fraction,
            ..self
        }
    }

    /// The bytes as the links carry them when the library moves them at
    /// `rates` over links of `links`' rates: scaled by links / rates, so
    /// that a flow alone on its link takes the library's time and, beside
    /// other flows, holds the link for as long.
    pub fn at_rates(self, rates: LinkRates, links: LinkRates) -> Self {
        Self {
            nvlink_pair_bytes: self.nvlink_pair_bytes * links.nvlink_bps / rates.nvlink_bps,
            nic_pair_bytes: self.nic_pair_bytes * links.nic_bps / rates.nic_bps,
            ..self
        }
    }
}

/// Where the ranks of an expert-parallel group sit: `per_node` of them in
/// each of `nodes` nodes (EP groups are consecutive ranks of a stage, so
/// they fill whole nodes or share one, `validate::check_experts`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpPlacement {
    /// Ranks of the group in one node.
    pub per_node: u32,
    /// Nodes the group spans.
    pub nodes: u32,
}

impl EpPlacement {
    /// The group of `ep` consecutive ranks on nodes of `gpus_per_node`.
    pub fn of(ep: u32, gpus_per_node: u32) -> Self {
        let per_node = ep.min(gpus_per_node).max(1);
        Self {
            per_node,
            nodes: ep.div_ceil(per_node),
        }
    }
}

/// The ranks one all-to-all spans and how they sit. NCCL's all-to-all
/// runs over the EP group, every etp-th rank of a TP x EP block
/// (token_dispatcher.py:705-710, `ep_group`); DeepEP, Megatron-LM's flex
/// dispatcher, over the whole TP x EP block, each token sent to every
/// expert-TP rank of its experts (token_dispatcher.py:1836-1842 and
/// 1893-1914: `tp_ep_group`, top-k and experts times the expert TP size).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct A2aGroup {
    /// Ranks of the group.
    pub ranks: u32,
    /// Stage indices between consecutive members (`ExpertFolding`).
    pub stride: u32,
    /// Where they sit.
    pub place: EpPlacement,
}

impl A2aGroup {
    /// The group of `m`'s dispatcher under `folding`, on nodes of
    /// `gpus_per_node`.
    pub fn of(m: &Moe, folding: &ExpertFolding, gpus_per_node: u32) -> Self {
        match m.dispatcher {
            Dispatcher::Alltoall => {
                // Every etp-th rank: gpus_per_node / etp of them per node.
                let per_node = folding.ep.min(gpus_per_node / folding.etp).max(1);
                Self {
                    ranks: folding.ep,
                    stride: folding.etp,
                    place: EpPlacement {
                        per_node,
                        nodes: folding.ep.div_ceil(per_node),
                    },
                }
            }
            Dispatcher::Deepep => Self {
                ranks: folding.block(),
                stride: 1,
                place: EpPlacement::of(folding.block(), gpus_per_node),
            },
        }
    }
}

/// One all-to-all's traffic from one rank of `tokens` under `folding`:
/// [`all_to_all_traffic`] over the dispatcher's group ([`A2aGroup`]), with
/// DeepEP's copies reaching every expert-TP rank of each expert.
pub fn expert_all_to_all(
    t: &Transformer,
    m: &Moe,
    folding: &ExpertFolding,
    gpus_per_node: u32,
    tokens: f64,
) -> AllToAllTraffic {
    let group = A2aGroup::of(m, folding, gpus_per_node);
    traffic_of_hidden(t.hidden, m, group.ranks, group.place, folding.etp, tokens)
}

/// Tokens each rank routes per micro-batch: b*s, over t with sequence
/// parallelism.
pub(crate) fn tokens_per_rank(t: &Transformer, tp: u32) -> f64 {
    let tokens = f64::from(t.micro_batch) * f64::from(t.seq);
    if t.sequence_parallel {
        tokens / f64::from(tp)
    } else {
        tokens
    }
}

/// Expected distinct members among `slots` draws from `n` equally likely
/// ones: n (1 - (1 - 1/n)^slots).
fn distinct(n: f64, slots: f64) -> f64 {
    if n <= 1.0 {
        return 1.0;
    }
    n * (1.0 - (1.0 - 1.0 / n).powf(slots))
}

/// Nodes one token reaches, in expectation: its k experts drawn evenly
/// from the group's nodes; under DeepEP's node-limited routing, from the
/// `max_nodes_per_token` (M) nodes its router picked first. DeepSeek-V3
/// section 2.1.2 (node-limited routing, M = 4) as its reference gate runs
/// it (DeepSeek-V3 inference/model.py:584-593): the scores are grouped by
/// node, the `topk_groups` best groups kept, the others masked to -inf,
/// and the top k taken over what is left (DeepEP's benchmark routes so
/// too, tests/legacy/test_internode.py:42-46). So all k experts fall within
/// the M nodes, and drawn evenly over them they reach distinct(M, k) of
/// them (3.6 for M = 4, k = 8), not M; with no more than M nodes in the
/// group the limit does not bind.
pub fn nodes_per_token(m: &Moe, place: EpPlacement) -> f64 {
    let nodes = f64::from(place.nodes);
    let k = f64::from(m.top_k);
    match m.dispatcher {
        Dispatcher::Deepep => distinct(nodes.min(f64::from(m.max_nodes_per_token)), k),
        Dispatcher::Alltoall => distinct(nodes, k),
    }
}

/// The traffic of one all-to-all (dispatch or combine, forward or
/// backward: all four move the same bytes) from one rank of `tokens`.
///
/// NCCL's all-to-all sends each of the rank's token copies (k per token)
/// to the rank of its expert: b*s*h*2 bytes times k, split evenly over the
/// ep ranks, the rank's own share staying local.
///
/// DeepEP (DeepSeek-V3 section 3.2.2): a token crosses InfiniBand once to
/// the same-index GPU of each remote node it reaches, then NVLink to the
/// GPUs of that node holding its experts, each GPU once. Each rank so
/// talks over its NIC to the same-index GPU of every other node of the
/// group, and over NVLink to the other GPUs of its node.
pub fn all_to_all_traffic(
    t: &Transformer,
    m: &Moe,
    ep: u32,
    place: EpPlacement,
    tokens: f64,
) -> AllToAllTraffic {
    traffic_of_hidden(t.hidden, m, ep, place, 1, tokens)
}

/// [`all_to_all_traffic`] of tokens of `hidden` values, with each expert
/// split over `etp` consecutive ranks of the group, which DeepEP's copies
/// all reach; NCCL's group (every etp-th rank) holds one shard of each
/// expert, so `etp` does not change its traffic.
pub(crate) fn traffic_of_hidden(
    hidden: u32,
    m: &Moe,
    ep: u32,
    place: EpPlacement,
    etp: u32,
    tokens: f64,
) -> AllToAllTraffic {
    let h = f64::from(hidden);
    let token_bytes = h * TOKEN_BYTES;
    let k = f64::from(m.top_k);
    let (local, nodes) = (f64::from(place.per_node), f64::from(place.nodes));
    match m.dispatcher {
        Dispatcher::Alltoall => {
            let pair = tokens * k * token_bytes / f64::from(ep);
            AllToAllTraffic {
                nvlink_peers: place.per_node - 1,
                nvlink_pair_bytes: pair,
                nic_peers: ep - place.per_node,
                nic_pair_bytes: pair,
            }
        }
        Dispatcher::Deepep => {
            let reached = nodes_per_token(m, place);
            // Of the nodes a token reaches, its own is one in `nodes`.
            let remote = reached * (nodes - 1.0) / nodes;
            // Inside each node reached, its k / reached experts fall on this
            // many distinct GPUs, one of which receives it (over the NIC, or
            // its own GPU): the others by NVLink. An expert split over etp
            // ranks is etp GPUs, each sent the token.
            let etp = f64::from(etp);
            let gpus = distinct(local / etp, k / reached) * etp;
            let nvlink_bytes = tokens * reached * gpus * (local - 1.0) / local * token_bytes;
            AllToAllTraffic {
                nvlink_peers: place.per_node - 1,
                nvlink_pair_bytes: if local > 1.0 {
                    nvlink_bytes / (local - 1.0)
                } else {
                    0.0
                },
                nic_peers: place.nodes - 1,
                nic_pair_bytes: if nodes > 1.0 {
                    tokens * remote * token_bytes / (nodes - 1.0)
                } else {
                    0.0
                },
            }
        }
    }
}

/// A SwiGLU of inner width `ffn` on `tokens` tokens as `groups` grouped
/// GEMMs (one per expert, each on tokens / groups): gate and up fused,
/// the gated product, down. FLOPs 6 x tokens x h x ffn.
fn swiglu(r: &Roofline, groups: f64, tokens: f64, h: f64, ffn: f64) -> (OpCost, OpCost, OpCost) {
    let each = tokens / groups;
    let up_weights = groups * h * 2.0 * ffn;
    let up = r.batched(
        GemmShape {
            rows: each,
            inner: h,
            cols: 2.0 * ffn,
            count: groups,
        },
        2.0 * (tokens * h + up_weights + tokens * 2.0 * ffn),
    );
    let act = r.memory(2.0 * 3.0 * tokens * ffn);
    let down = r.batched(
        GemmShape {
            rows: each,
            inner: ffn,
            cols: h,
            count: groups,
        },
        2.0 * (tokens * ffn + groups * ffn * h + tokens * h),
    );
    (up, act, down)
}

/// The costs of one MoE layer on one rank (see the module's note).
pub(crate) fn moe_cost(
    t: &Transformer,
    m: &Moe,
    tp: u32,
    folding: &ExpertFolding,
    r: &Roofline,
) -> MoeCost {
    let h = f64::from(t.hidden);
    let tokens = tokens_per_rank(t, tp);
    let experts = f64::from(m.experts);
    let local_experts = experts / f64::from(folding.ep);
    // Each expert's shard on this rank: ffn / etp wide, on the copies its
    // expert-TP group received, gathered (etp times one rank's).
    let etp = f64::from(folding.etp);
    let ffn = f64::from(m.expert_ffn_hidden) / etp;
    // Token copies this rank's experts receive: balanced, then the busiest.
    let routed = tokens * f64::from(m.top_k) * etp;
    let paced = routed * m.imbalance;
    let layernorm = r.memory(4.0 * tokens * h);
    let router_gemm = r.gemm(tokens, h, experts);
    // Softmax and top-k read and write the scores in fp32.
    let top_k = r.memory(8.0 * tokens * experts);
    let router = layernorm.add(router_gemm).add(top_k);
    // Permutation to expert order and back: a read and a write of every copy.
    let permute = r.memory(2.0 * 2.0 * paced * h);
    let (up, act, down) = swiglu(r, local_experts, paced, h, ffn);
    let flops = |c: OpCost, balanced: f64| OpCost {
        flops: balanced,
        ..c
    };
    let balanced_flops = 6.0 * routed * h * ffn;
    let experts_fwd = flops(
        permute.add(up).add(act).add(down).add(permute),
        balanced_flops,
    );
    let act_bwd = r.memory(2.0 * 5.0 * paced * ffn);
    let experts_dgrad = flops(
        permute.add(down).add(act_bwd).add(up).add(permute),
        balanced_flops,
    );
    let experts_wgrad = flops(up.add(down), balanced_flops);
    // Shared experts run outside the expert TP group, whole.
    let shared_ffn = f64::from(m.shared_experts) * f64::from(m.expert_ffn_hidden);
    let (shared, shared_dgrad, shared_wgrad) = if m.shared_experts == 0 {
        (OpCost::default(), OpCost::default(), OpCost::default())
    } else {
        let (up, act, down) = swiglu(r, 1.0, tokens, h, shared_ffn);
        let act_bwd = r.memory(2.0 * 5.0 * tokens * shared_ffn);
        (
            up.add(act).add(down),
            down.add(act_bwd).add(up),
            up.add(down),
        )
    };
    // The router's backward: its GEMM's input and weight gradients.
    let router_bwd = router_gemm.add(router_gemm).add(top_k);
    MoeCost {
        router,
        experts: experts_fwd,
        shared,
        act,
        experts_dgrad,
        experts_wgrad,
        shared_dgrad: shared_dgrad.add(router_bwd),
        shared_wgrad,
    }
}

/// Parameters of one MoE layer's routed experts on one rank: experts / ep
/// SwiGLUs of 3 x h x expert_ffn_hidden each, each split over etp ranks.
pub fn expert_params_per_rank(t: &Transformer, m: &Moe, folding: &ExpertFolding) -> f64 {
    f64::from(m.experts) / f64::from(folding.ep) * expert_params(t, m) / f64::from(folding.etp)
}

/// Bytes of the token copies a rank's expert-TP group gathers after the
/// dispatch (and reduce-scatters before the combine), whole: the etp
/// ranks' received copies, b*s/t*k each, of h values in bf16
/// (token_dispatcher.py:741-751, 824-832: the reduce-scatter runs in the
/// probabilities' dtype, bf16 unless the router's is set to fp32). Zero
/// with etp 1 or DeepEP, whose dispatch reaches every expert-TP rank
/// itself.
pub fn etp_gather_bytes(t: &Transformer, m: &Moe, tp: u32, folding: &ExpertFolding) -> f64 {
    if folding.etp == 1 || m.dispatcher == Dispatcher::Deepep {
        return 0.0;
    }
    let copies = tokens_per_rank(t, tp) * f64::from(m.top_k);
    f64::from(folding.etp) * copies * f64::from(t.hidden) * TOKEN_BYTES
}

/// Parameters of one routed expert.
fn expert_params(t: &Transformer, m: &Moe) -> f64 {
    3.0 * f64::from(t.hidden) * f64::from(m.expert_ffn_hidden)
}

/// Parameters of one MoE layer outside its routed experts, whole: the
/// router (h x experts) and the shared experts' SwiGLUs, which TP splits
/// like the dense MLP they replace.
pub fn moe_dense_params_whole(t: &Transformer, m: &Moe) -> f64 {
    f64::from(t.hidden) * f64::from(m.experts) + f64::from(m.shared_experts) * expert_params(t, m)
}

/// Parameters of an MoE layer's routed experts, whole.
pub fn routed_params_whole(t: &Transformer, m: &Moe) -> f64 {
    f64::from(m.experts) * expert_params(t, m)
}

/// Parameters one token's forward uses in an MoE layer's experts: its k
/// routed experts and the shared ones (the active parameters).
pub fn active_expert_params(t: &Transformer, m: &Moe) -> f64 {
    f64::from(m.top_k + m.shared_experts) * expert_params(t, m)
}

/// Bytes per value of a tensor in FP8 with one fp32 scale per 128 values
/// (DeepSeek-V3 section 3.3.1: 1 x 128 tiles for activations, each with its
/// own scaling factor); DeepEP's tests count FP8 dispatches the same way,
/// `fp8_factor = (1 + 4 / 128) / 2` of the BF16 bytes
/// (deepseek-ai/DeepEP tests/legacy/test_internode.py:239).
pub const FP8_BYTES_PER_VALUE: f64 = 1.0 + 4.0 / 128.0;

/// The wire bytes of one all-to-all over its BF16 bytes ([`all_to_all_traffic`]
/// counts 2 per value). With `fp8_dispatch`, what travels towards the
/// experts goes in FP8 with its scales ([`FP8_BYTES_PER_VALUE`]): the
/// forward dispatch (and its recomputation), and the backward's mirror of
/// the combine, the gradient of the experts' output that the
/// down-projection's backward reads (DeepSeek-V3 section 3.3.2: both are
/// quantised, both combine directions stay BF16; DeepEP's
/// `combine_backward` is a dispatch of FP8 or BF16, README.md:239-243).
/// The dispatch's backward, a combine, stays BF16.
pub fn wire_fraction(m: &Moe, op: OpKind, phase: Phase) -> f64 {
    let towards_experts = match op {
        OpKind::Dispatch => phase != Phase::Backward,
        OpKind::Combine => phase == Phase::Backward,
        _ => false,
    };
    if m.fp8_dispatch && m.dispatcher.carries_fp8() && towards_experts {
        FP8_BYTES_PER_VALUE / TOKEN_BYTES
    } else {
        1.0
    }
}

/// What one MoE layer keeps for its backward per micro-batch on one rank,
/// beyond what its attention keeps, by part, in bytes at 2 per value
/// before any recomputation (full recomputation keeps only the layer's
/// input, `memory::activation_bytes_per_layer`).
///
/// The experts' outputs are not kept: Megatron-LM weighs each routed copy
/// by its router probability inside the activation
/// (megatron/core/transformer/moe/experts.py:943-1017, the weighted SwiGLU
/// of `bias_act_func`), so the down-projection's output goes to the
/// combine, an unweighted unpermute that saves nothing for its backward
/// (token_dispatcher.py:891-899; `unpermute` without `probs`). The
/// probabilities' gradient reads the activation's input instead, kept as
/// `fc1_out`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoutedActivations {
    /// The dispatched token copies, the grouped fc1's input (h each).
    pub dispatched: f64,
    /// The gate and up outputs of each routed copy (2f), the activation's input.
    pub fc1_out: f64,
    /// Their product (f per copy), the grouped fc2's input.
    pub act_out: f64,
    /// The shared experts' gate and up outputs on every token (2f each),
    /// their activation's input.
    pub shared_fc1_out: f64,
    /// The shared experts' activation output on every token (f each), their
    /// down-projection's input.
    pub shared_act_out: f64,
}

impl RoutedActivations {
    /// The parts of one MoE layer's activations on one rank of `tp`. With
    /// etp > 1 the rank's experts run on the gathered copies (etp times its
    /// own), each ffn / etp wide.
    pub fn of(t: &Transformer, m: &Moe, tp: u32, etp: u32) -> Self {
        let h = f64::from(t.hidden);
        let f = f64::from(m.expert_ffn_hidden);
        let tokens = tokens_per_rank(t, tp);
        let copies = tokens * f64::from(m.top_k) * f64::from(etp);
        let f_shard = f / f64::from(etp);
        let shared_width = f * f64::from(m.shared_experts);
        Self {
            dispatched: 2.0 * copies * h,
            fc1_out: 2.0 * copies * 2.0 * f_shard,
            act_out: 2.0 * copies * f_shard,
            shared_fc1_out: 2.0 * tokens * 2.0 * shared_width,
            shared_act_out: 2.0 * tokens * shared_width,
        }
    }

    /// What is kept once the layer's `recompute` modules are recomputed and
    /// its FP8 caches applied:
    /// - `moe` checkpoints the whole layer from its input, which the
    ///   pre-MLP LayerNorm's output already holds: none of these is kept
    ///   (megatron/core/transformer/moe/moe_layer.py:701-716);
    /// - `moe_act` discards the activation's output and recomputes it from
    ///   the fc1 output (experts.py:1019-1032): `act_out` goes;
    /// - `shared_experts` checkpoints the shared experts from their input
    ///   (shared_experts.py:158): both shared parts go;
    /// - `fp8_dispatch_cache` keeps the dispatched copies at 1 + 4/128
    ///   bytes per value (DeepSeek-V3 section 3.3);
    /// - `fp8_swiglu_cache` keeps the activation's inputs, routed and
    ///   shared, at 1 + 4/128 bytes per value (DeepSeek-V3 section 3.3.2,
    ///   "the inputs of the SwiGLU operator in MoE ... stored in FP8";
    ///   Megatron-LM's `activation_func_fp8_input_store` casts the same
    ///   input to e4m3 without scales, fused_bias_swiglu.py:268-281).
    pub fn kept_bytes(&self, m: &Moe) -> f64 {
        if m.recompute.moe {
            return 0.0;
        }
        let fp8 = |bytes: f64, cached: bool| {
            if cached {
                bytes * FP8_BYTES_PER_VALUE / TOKEN_BYTES
            } else {
                bytes
            }
        };
        let dispatched = fp8(self.dispatched, m.fp8_dispatch_cache);
        let fc1_out = fp8(self.fc1_out, m.fp8_swiglu_cache);
        let act_out = if m.recompute.moe_act {
            0.0
        } else {
            self.act_out
        };
        let shared = if m.recompute.shared_experts {
            0.0
        } else {
            fp8(self.shared_fc1_out, m.fp8_swiglu_cache) + self.shared_act_out
        };
        dispatched + fc1_out + act_out + shared
    }
}

/// Bytes one MoE layer keeps for its backward per micro-batch on one rank,
/// beyond what its attention keeps ([`RoutedActivations`], as the
/// scenario recomputes and caches them).
pub fn routed_activation_bytes(t: &Transformer, m: &Moe, tp: u32, etp: u32) -> f64 {
    RoutedActivations::of(t, m, tp, etp).kept_bytes(m)
}

/// Bytes of the all-to-all buffers one rank holds: the dispatch's send and
/// receive buffers of a micro-batch's token copies (the combine reuses
/// them).
pub fn dispatch_buffer_bytes(t: &Transformer, m: &Moe, tp: u32) -> f64 {
    2.0 * tokens_per_rank(t, tp) * f64::from(m.top_k) * f64::from(t.hidden) * TOKEN_BYTES
}
