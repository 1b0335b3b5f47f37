//! How the table's rows read a resolved scenario: the workload's variant
//! a field belongs to, and why a field changes nothing in a scenario (the
//! page says it beside the control; `tests/inert_fields.rs` checks that it
//! indeed changes nothing). Reads the model only.

use crate::model::scenario::{
    CollectiveBench, CpMode, Dispatcher, DpSharding, MatmulAllreduce, Moe, Precision, Scenario,
    TpMode, Transformer, Workload, WorkloadKind,
};

pub(crate) fn transformer(s: &Scenario) -> Option<&Transformer> {
    match &s.workload {
        Workload::Transformer(t) => Some(t),
        Workload::MatmulAllreduce(_) | Workload::Collective(_) => None,
    }
}

pub(crate) fn matmul(s: &Scenario) -> Option<&MatmulAllreduce> {
    match &s.workload {
        Workload::MatmulAllreduce(m) => Some(m),
        Workload::Transformer(_) | Workload::Collective(_) => None,
    }
}

pub(crate) fn bench(s: &Scenario) -> Option<&CollectiveBench> {
    match &s.workload {
        Workload::Collective(c) => Some(c),
        Workload::Transformer(_) | Workload::MatmulAllreduce(_) => None,
    }
}

/// Why an axis's overlap switch changes nothing: the axis has one GPU,
/// so it moves nothing (the tied embedding's all-reduce between the first
/// and last stage, on the DP lane, runs after the backward either way).
fn degree_one(axis: &str, degree: u32, what: &str) -> Option<String> {
    (degree == 1)
        .then(|| format!("Changes nothing here: with {axis} 1 there is no {what} to overlap."))
}

pub(crate) fn tp_overlap_inert(s: &Scenario) -> Option<String> {
    degree_one("TP", s.parallel.tp, "TP collective")
}

pub(crate) fn pp_overlap_inert(s: &Scenario) -> Option<String> {
    degree_one("PP", s.parallel.pp, "pipeline send")
}

/// DP reduces over its replicas and the CP ranks (model.md 4d).
pub(crate) fn dp_overlap_inert(s: &Scenario) -> Option<String> {
    (s.parallel.cp == 1)
        .then(|| degree_one("DP", s.parallel.dp, "gradient reduction"))
        .flatten()
}

/// Why `overlap.cp` changes nothing: with CP 1 nothing moves; with the
/// all-gather form Transformer Engine exposes the gathers (context.rs).
pub(crate) fn cp_overlap_inert(s: &Scenario) -> Option<String> {
    degree_one("CP", s.parallel.cp, "K/V exchange").or_else(|| {
        (s.parallel.cp_mode == CpMode::Allgather).then(|| {
            "Changes nothing here: Transformer Engine's all-gather form exposes its K/V gathers and the reduce-scatter of their gradients (only ring attention hides its steps under attention).".to_string()
        })
    })
}

/// Why `parallel.cp` changes nothing: only a transformer has a sequence to split.
pub(crate) fn cp_inert(s: &Scenario) -> Option<String> {
    transformer(s).is_none().then(|| {
        "Changes nothing here: only a transformer has a sequence for context parallelism to split."
            .to_string()
    })
}

/// Why `parallel.cp_mode` changes nothing: with CP 1 no K/V moves, ring or gather.
pub(crate) fn cp_mode_inert(s: &Scenario) -> Option<String> {
    (s.parallel.cp == 1).then(|| {
        "Changes nothing here: with CP 1 each GPU holds the whole sequence, so no keys and values move, by ring or by gather."
            .to_string()
    })
}

/// Why `overlap.fp8_all_gather` changes nothing: it is FSDP's parameter
/// gather in fp8, so it needs FSDP and fp8 linear layers.
pub(crate) fn fp8_all_gather_inert(s: &Scenario) -> Option<String> {
    if s.parallel.dp_sharding != DpSharding::Full {
        Some("Changes nothing here: only FSDP (dp_sharding \"full\") gathers parameters before each layer.".to_string())
    } else if s.precision() != Precision::Fp8 {
        Some(
            "Changes nothing in bf16: only fp8 linear layers have fp8 weights to gather."
                .to_string(),
        )
    } else if s.parallel.dp_group() == 1 {
        Some("Changes nothing here: with one DP rank there is nothing to gather.".to_string())
    } else {
        None
    }
}

/// Why `parallel.scatter_gather` changes nothing: it splits a stage's
/// send over its TP ranks, so it needs a pipeline and a TP group.
pub(crate) fn scatter_gather_inert(s: &Scenario) -> Option<String> {
    if s.parallel.pp == 1 {
        Some("Changes nothing here: with PP 1 there is no pipeline send to scatter.".to_string())
    } else if s.parallel.tp == 1 {
        Some("Changes nothing here: with TP 1 each send leaves one GPU whole; there is nothing to scatter over.".to_string())
    } else {
        None
    }
}

/// Why a parallel degree changes nothing for the collective workload: it
/// runs one collective over every GPU of the hardware.
pub(crate) fn collective_layout_inert(s: &Scenario) -> Option<String> {
    bench(s).map(|_| {
        "Changes nothing here: the collective workload runs one collective over every GPU of the hardware."
            .to_string()
    })
}

/// Why the pipeline schedule and its virtual stages change nothing: with
/// PP 1 every schedule runs as 1F1B on one chunk (`fill::filled`).
pub(crate) fn schedule_inert(s: &Scenario) -> Option<String> {
    (s.parallel.pp == 1).then(|| {
        "Changes nothing here: with PP 1 there is no pipeline, so every schedule runs as 1F1B (one forward, then its backward, per micro-batch) on one chunk.".to_string()
    })
}

/// The mixture of experts of a transformer scenario, if it has one.
pub(crate) fn moe(s: &Scenario) -> Option<&Moe> {
    transformer(s).and_then(|t| t.moe.as_ref())
}

/// Why a field of `workload.moe` changes nothing: the model is dense.
pub(crate) fn moe_inert(s: &Scenario) -> Option<String> {
    transformer(s)
        .filter(|t| t.moe.is_none())
        .map(|_| "Changes nothing here: the model has no experts (it is dense).".to_string())
}

/// Why a DeepEP knob changes nothing: the model is dense, or NCCL's
/// all-to-all dispatches.
pub(crate) fn deepep_inert(s: &Scenario) -> Option<String> {
    moe_inert(s).or_else(|| {
        moe(s)
            .filter(|m| m.dispatcher != Dispatcher::Deepep)
            .map(|_| {
                "Changes nothing here: only DeepEP's dispatcher limits nodes and holds its own SMs."
                    .to_string()
            })
    })
}

/// Why `fp8_dispatch` changes nothing: the model is dense, or its
/// dispatcher does not carry FP8 (`Dispatcher::carries_fp8`; Megatron-LM's
/// DeepEP path sends BF16 too, fused_a2a.py:402, and its NCCL-EP backend,
/// transformer_config.py:997-1009, is not modelled).
pub(crate) fn fp8_dispatch_inert(s: &Scenario) -> Option<String> {
    moe_inert(s).or_else(|| {
        moe(s).filter(|m| !m.dispatcher.carries_fp8()).map(|_| {
            "Changes nothing here: NCCL's all-to-all dispatcher sends BF16; FP8 on the wire \
                 needs DeepEP (dispatcher \"deepep\")."
                .to_string()
        })
    })
}

/// Why `overlap.ep` changes nothing: no experts, or all of them on each
/// GPU; or combined 1F1B with one micro-batch, which has no other
/// micro-batch's pass to pair with (model.md section 4c).
pub(crate) fn ep_overlap_inert(s: &Scenario) -> Option<String> {
    moe_inert(s)
        .or_else(|| degree_one("EP", s.parallel.ep, "all-to-all"))
        .or_else(|| ep_nothing_to_pair(s))
}

/// Why combined 1F1B hides nothing, when it does not: with one micro-batch
/// per pipeline there is no other micro-batch's forward or backward to run
/// beside each all-to-all, and the options that would hide it without a
/// pair are off (Megatron-LM refuses them beside combined 1F1B).
pub fn ep_nothing_to_pair(s: &Scenario) -> Option<String> {
    let form = crate::workload::build::schedule::merged_passes::ep_form(s);
    let alone = form.combined_1f1b && !form.shared_expert && !form.dispatch_wgrad;
    (alone && transformer(s).is_some() && s.micro_batches() == 1).then(|| {
        "Changes nothing here: combined 1F1B runs one micro-batch's forward beside another's backward, \
         and with one micro-batch per pipeline there is nothing to pair: every all-to-all waits where it \
         is launched."
            .to_string()
    })
}

/// A field that changes something in every scenario it applies to.
pub(crate) fn never_inert(_: &Scenario) -> Option<String> {
    None
}

/// Why `overlap.bucket_mb` changes nothing, when it does not: with no DP
/// replicas there is no gradient reduction to split (the tied embedding's
/// all-reduce is one call whatever the size).
pub(crate) fn bucket_mb_inert(s: &Scenario) -> Option<String> {
    (s.parallel.dp_group() == 1).then(|| {
        "Changes nothing here: with DP 1 there are no gradients to reduce in buckets.".to_string()
    })
}

/// Why `overlap.tp_chunks` changes nothing, when it does not: the GEMMs
/// are split only under TP overlap, for a TP group, and not with sequence
/// parallelism, whose TP overlap decomposes each collective into the
/// group's ring steps instead (`workload::build::transformer`, Async TP).
pub(crate) fn tp_chunks_inert(s: &Scenario) -> Option<String> {
    let tp = s.parallel.tp;
    if let Some(why) = tp_overlap_inert(s) {
        Some(why)
    } else if !s.overlap.tp {
        Some("Changes nothing while TP overlap is off: each GEMM then runs whole before its collective.".to_string())
    } else if transformer(s).is_some_and(|t| t.sequence_parallel)
        && s.overlap.tp_mode == TpMode::Async
    {
        Some(format!(
            "Changes nothing with sequence parallelism and Async TP: TP overlap splits each collective into \
             its {tp} ring steps under the GEMM, not into chunks."
        ))
    } else if transformer(s).is_some() && s.overlap.tp_mode == TpMode::Megatron {
        Some("Changes nothing with Megatron's TP overlap: it runs each GEMM whole.".to_string())
    } else {
        None
    }
}

/// Why `overlap.tp_mode` changes nothing, when it does not: it chooses how
/// TP overlap runs, so it needs a TP group of a transformer with TP overlap
/// on (the MatMul + AllReduce micro-benchmark is CoCoNet's chunks).
pub(crate) fn tp_mode_inert(s: &Scenario) -> Option<String> {
    if let Some(why) = tp_overlap_inert(s) {
        Some(why)
    } else if transformer(s).is_none() {
        Some(
            "Changes nothing for the MatMul + AllReduce benchmark: it is CoCoNet's chunked GEMM."
                .to_string(),
        )
    } else if !s.overlap.tp {
        Some("Changes nothing while TP overlap is off: each collective then runs in the compute stream's order.".to_string())
    } else {
        None
    }
}

pub(crate) fn workload_kind(s: &Scenario) -> WorkloadKind {
    match s.workload {
        Workload::Transformer(_) => WorkloadKind::Transformer,
        Workload::MatmulAllreduce(_) => WorkloadKind::MatmulAllreduce,
        Workload::Collective(_) => WorkloadKind::Collective,
    }
}
