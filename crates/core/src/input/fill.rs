//! Between the input and the model: the scenario an input describes, every
//! field as given or from its default (the table's fill), and a resolved
//! scenario written back as complete input.

use crate::input::kind::DefaultFrom;
use crate::input::table::{ScenarioInput, FIELDS};
use crate::model::hardware::Hardware;
use crate::model::scenario::{
    CollectiveBench, MatmulAllreduce, Scenario, Transformer, Workload, WorkloadKind,
};

/// The scenario the input describes, every missing field filled in from
/// the hardware preset and the defaults; nothing checked yet.
pub fn filled(input: &ScenarioInput) -> Scenario {
    // The fill's rules are the table's; here each value finds its place in
    // the model.
    let v = input.fill();
    let (h, w, p, o) = (v.hardware, v.workload, v.parallel, v.overlap);
    let workload = match w.kind {
        WorkloadKind::Transformer => Workload::Transformer(Transformer {
            mode: w.mode,
            layers: w.layers,
            hidden: w.hidden,
            heads: w.heads,
            seq: w.seq,
            vocab: w.vocab,
            micro_batch: w.micro_batch,
            global_batch: w.global_batch,
            recompute: w.recompute,
            sequence_parallel: w.sequence_parallel,
            kv_heads: w.kv_heads,
            ffn_hidden: w.ffn_hidden,
            mlp: w.mlp,
            tied_embeddings: w.tied_embeddings,
            attention: w.attention,
            precision: w.precision,
            head_dim: w.head_dim,
            // `experts` makes the model a mixture of experts.
            moe: w.moe.experts.map(|experts| w.moe.with_experts(experts)),
        }),
        WorkloadKind::MatmulAllreduce => Workload::MatmulAllreduce(MatmulAllreduce {
            m: w.m,
            n: w.n,
            k: w.k,
        }),
        WorkloadKind::Collective => Workload::Collective(CollectiveBench {
            collective: w.collective,
            bytes: w.bytes,
        }),
    };
    Scenario {
        hardware_preset: h.preset,
        hardware: Hardware {
            nodes: h.nodes,
            gpus_per_node: h.gpus_per_node,
            peak_tflops: h.peak_tflops,
            hbm_gbps: h.hbm_gbps,
            nvlink_gbps: h.nvlink_gbps,
            nic_gbps: h.nic_gbps,
            oversubscription: h.oversubscription,
            nvlink_latency_us: h.nvlink_latency_us,
            network_latency_us: h.network_latency_us,
            sms: h.sms,
            max_connections: h.max_connections,
            hbm_gb: h.hbm_gb,
            // Not a field: fp8 is refused where the datasheet has none.
            fp8_tflops: h.preset.hardware().fp8_tflops,
        },
        workload,
        // Field for field, by the table's `into`.
        parallel: p.into(),
        overlap: o.into(),
        sm_tax: v.sm_tax,
        interference: v.interference,
    }
}

/// A resolved scenario written back as complete input: every field that
/// applies to it is set, except a [`DefaultFrom::Derived`] field whose value
/// is what its rule gives, which stays absent so that it keeps following
/// the fields it derives from (a link that changes `heads` does not also
/// pin `kv_heads`).
pub fn complete_input(s: &Scenario) -> ScenarioInput {
    let mut input = ScenarioInput::default();
    for f in FIELDS {
        if let Some(v) = (f.resolved)(s) {
            (f.set)(&mut input, Some(&v)).expect("a resolved value has its field's type");
        }
    }
    // A dense model's `workload.moe` fields state only what they would
    // default to: written back, they would say nothing.
    if input.workload.moe.experts.is_none() {
        input.workload.moe = Default::default();
    }
    for f in FIELDS
        .iter()
        .filter(|f| matches!(f.default, DefaultFrom::Derived(_)))
    {
        let mut without = input.clone();
        (f.set)(&mut without, None).expect("a field can be cleared");
        if (f.resolved)(&filled(&without)) == (f.resolved)(s) {
            input = without;
        }
    }
    input
}
