//! The two pipeline layouts the tests build (`parallel.pipeline_layout`,
//! model.md 4): the zero-bubble paper's ZB-V at 30 layers on 16 GPUs, and
//! DeepSeek-V3's 61 layers on PP 8 x VP 4 as Megatron runs them.

/// The zero-bubble paper's 6.2B model (Qi et al. 2024, published.md
/// section 5: 30 layers, hidden 4096, 32 heads, seq 1024, micro-batch 3,
/// vocabulary 51200 as that section says) in ZB-V on 16 GPUs: 32 chunks,
/// the embedding and the output layer each a chunk of its own at the two
/// ends of the V (both on GPU 0), one layer in each of the 30 between
/// (model.md 4, "Pipeline layout"). `micro_batches` per pipeline, at least
/// 2 x pp = 32 for ZB-V.
pub fn zbv_30_layers_on_16_gpus(hidden: u32, micro_batches: u32) -> String {
    let layout: Vec<String> = std::iter::once("E".to_string())
        .chain((0..30).map(|_| "t".to_string()))
        .chain(std::iter::once("L".to_string()))
        .collect();
    format!(
        r#"{{"hardware":{{"preset":"dgx-a100","nodes":2}},
        "workload":{{"layers":30,"hidden":{hidden},"heads":32,"seq":1024,"vocab":51200,
            "micro_batch":3,"global_batch":{},"attention":"materialized"}},
        "parallel":{{"tp":1,"pp":16,"dp":1,"schedule":"zb-v","virtual_stages":2,
            "pipeline_layout":{}}},
        "overlap":{{"tp":false,"pp":true,"dp":true}}}}"#,
        3 * micro_batches,
        serde_json::to_string(&layout).unwrap()
    )
}

/// Megatron's DeepSeek-V3 layout on PP 8 x VP 4, `"Et|(tt|)*30mL"`
/// (yanring/Megatron-MoE-ModelZoo, best-practice/DeepSeekV3/README.md,
/// "Use flexible PP layout"; the same string in NVIDIA-NeMo/Megatron-Bridge,
/// scripts/performance/configs/deepseek/deepseek_workload_base_configs.py,
/// `DEEPSEEK_V3_PRETRAIN_CONFIG_H100_V1`: TP 2, PP 8, VP 4, EP 64 on 1,024
/// H100):
/// the embedding and the first layer, 30 virtual stages of two layers,
/// then the MTP layer and the loss. MTP is not modelled, so the last entry
/// is the loss alone. As list entries: `["E t", "t t" x 30, "L"]`.
pub fn deepseek_v3_layout() -> Vec<String> {
    std::iter::once("E t".to_string())
        .chain((0..30).map(|_| "t t".to_string()))
        .chain(std::iter::once("L".to_string()))
        .collect()
}

/// The `deepseek-v3` preset's model (61 layers, the first 3 dense, 256
/// experts top-8 with one shared) in Megatron's DeepSeek-V3 H100 layout:
/// TP 2, PP 8 interleaved over 4 virtual stages, EP 64, the distributed
/// optimizer; `nodes` of 8 GPUs (128 for the recipe's 1,024), DP what they
/// leave, `micro_batches` per pipeline (a multiple of pp 8).
pub fn deepseek_v3_on_pp8_vp4(nodes: u32, micro_batches: u32, ep_overlap: bool) -> String {
    let dp = nodes * 8 / (2 * 8);
    format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":{nodes},"nvlink_gbps":200,"nic_gbps":50,"sms":132}},
        "workload":{{"layers":61,"hidden":7168,"heads":128,"kv_heads":8,"head_dim":128,"ffn_hidden":18432,
            "mlp":"swiglu","tied_embeddings":false,"seq":4096,"vocab":129280,"attention":"flash",
            "micro_batch":1,"global_batch":{},"recompute":"selective","sequence_parallel":true,
            "moe":{{"experts":256,"top_k":8,"expert_ffn_hidden":2048,"shared_experts":1,
                "dense_layers":3,"dispatcher":"deepep","max_nodes_per_token":4}}}},
        "parallel":{{"tp":2,"pp":8,"dp":{dp},"ep":{},"schedule":"interleaved","virtual_stages":4,
            "dp_sharding":"optimizer","pipeline_layout":{}}},
        "overlap":{{"tp":true,"pp":true,"dp":true,"ep":{ep_overlap},"grad_bytes":4}}}}"#,
        micro_batches * dp,
        64.min(2 * dp),
        serde_json::to_string(&deepseek_v3_layout()).unwrap()
    )
}
