//! Scenario presets: the didactic default, the contention showcase and every
//! case of ../shared/validation/published.md. Each is scenario JSON, so that
//! users see and edit the same fields a share link carries.

use crate::input::parse::{ScenarioError, ScenarioInput};

/// The figures the published cases state. Presets sit below the output
/// layer, so this is its own type; `published::metric` maps each onto the
/// report's `output::metric::Metric`, whose name and unit the page and the
/// CLI show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublishedMetric {
    /// The speedup of overlap on over off (CoCoNet).
    Speedup,
    /// Executed FLOPs per GPU per second (Megatron-LM's throughput tables).
    HardwareTflopsPerGpu,
    /// The step time in seconds (Korthikanti et al., zero bubble).
    StepTimeS,
}

/// One published figure a preset reproduces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PublishedFigure {
    /// Which figure.
    pub metric: PublishedMetric,
    /// The paper's value, in the metric's unit.
    pub value: f64,
    /// Where it is published.
    pub source: &'static str,
}

/// A named scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    /// Stable name used in share links (`preset=`).
    pub id: &'static str,
    /// Its name in the preset picker.
    pub title: &'static str,
    /// One or two sentences a student reads next to the timeline.
    pub description: &'static str,
    /// The scenario, as scenario JSON.
    pub json: &'static str,
    /// The published figure it reproduces, if it is a validation case.
    pub published: Option<PublishedFigure>,
}

impl Preset {
    /// The preset's scenario input.
    pub fn input(&self) -> ScenarioInput {
        ScenarioInput::from_json(self.json).expect("presets are valid JSON (tested)")
    }
}

/// The preset a page or link without one opens.
pub const DEFAULT_ID: &str = "didactic";

// Megatron-LM weak scaling (Narayanan et al. 2021, Table 1). Micro-batch rule,
// one for every row: micro_batch 1 (the 1T row runs 512 micro-batches per
// pipeline with it). Megatron 2021 overlapped none of the three axes.
// Attention of 2021: materialised scores. Gradients: the paper trains in
// fp16, and Megatron-LM reduces fp16 gradients unless
// --accumulate-allreduce-grads-in-fp32 is given (arguments.py forces that
// flag only for bf16), so 2 bytes.
macro_rules! megatron_row {
    ($heads:expr, $hidden:expr, $layers:expr, $tp:expr, $pp:expr, $nodes:expr, $dp:expr, $batch:expr) => {
        concat!(
            r#"{"hardware":{"preset":"dgx-a100","nodes":"#, $nodes,
            r#"},"workload":{"layers":"#, $layers, r#","hidden":"#, $hidden,
            r#","heads":"#, $heads, r#","seq":2048,"vocab":51200,"micro_batch":1,"global_batch":"#, $batch,
            r#","recompute":"full","sequence_parallel":false,"attention":"materialized"},"parallel":{"tp":"#, $tp,
            r#","pp":"#, $pp, r#","dp":"#, $dp,
            r#","schedule":"1f1b","virtual_stages":1,"scatter_gather":true},"overlap":{"tp":false,"pp":false,"dp":false,"grad_bytes":2}}"#
        )
    };
}

// Zero-bubble pipelines (Qi et al. 2024, arXiv 2401.10241, Tables 3-4): GPT-3
// like models on one node of 8 A100, pure pipeline parallelism, seq 1024,
// vocab 51200 (not stated in the paper). The paper gives the first and last
// stage one layer fewer (22 and 30 layers); layers here divide evenly over
// the 8 stages, so the presets carry 24 and 32 layers. Megatron-LM's
// pipeline sends are asynchronous; TP and DP do not exist here. Attention
// of the paper's Megatron-LM base: materialised.
macro_rules! zero_bubble_row {
    ($layers:expr, $heads:expr, $hidden:expr, $micro_batch:expr, $global_batch:expr, $schedule:expr) => {
        concat!(
            r#"{"hardware":{"preset":"dgx-a100","nodes":1},"workload":{"layers":"#, $layers,
            r#","hidden":"#, $hidden, r#","heads":"#, $heads,
            r#","seq":1024,"vocab":51200,"micro_batch":"#, $micro_batch, r#","global_batch":"#, $global_batch,
            r#","recompute":"none","sequence_parallel":false,"attention":"materialized"},"parallel":{"tp":1,"pp":8,"dp":1,"schedule":""#, $schedule,
            r#"","virtual_stages":1},"overlap":{"tp":false,"pp":true,"dp":false}}"#
        )
    };
}

/// Every preset, in the order the picker lists them.
pub const PRESETS: &[Preset] = &[
    Preset {
        id: DEFAULT_ID,
        title: "Didactic: 3D parallel on two DGX A100",
        description: "TP 4 inside a node, PP 2 across the two nodes, DP 2 inside each node. \
            Four micro-batches make every bar readable; in the last backward, TP's all-reduces and DP's \
            gradient buckets take turns on NVLink.",
        json: r#"{"hardware":{"preset":"dgx-a100","nodes":2},
            "workload":{"kind":"transformer","mode":"train","layers":8,"hidden":4096,"heads":32,"seq":2048,
                        "vocab":51200,"micro_batch":1,"global_batch":8,"recompute":"none","sequence_parallel":false,
                        "attention":"materialized"},
            "parallel":{"tp":4,"pp":2,"dp":2,"schedule":"1f1b","virtual_stages":1,"scatter_gather":true},
            "overlap":{"tp":true,"pp":true,"dp":true,"tp_chunks":4,"bucket_mb":25,"grad_bytes":2}}"#,
        published: None,
    },
    Preset {
        id: "contention",
        title: "Contention: DP and PP share the NIC",
        description: "All three overlaps on. With the interleaved schedule the DP reduction of the later \
            layers starts while the pipeline still sends the earlier layers' activations and gradients: \
            both cross the same InfiniBand port and slow each other down, however well each hides behind compute.",
        json: r#"{"hardware":{"preset":"dgx-a100","nodes":4,"nic_gbps":12.5},
            "workload":{"layers":8,"hidden":4096,"heads":32,"seq":2048,"micro_batch":1,"global_batch":16,
                        "recompute":"none","attention":"materialized"},
            "parallel":{"tp":8,"pp":2,"dp":2,"schedule":"interleaved","virtual_stages":2,"scatter_gather":false},
            "overlap":{"tp":true,"pp":true,"dp":true,"tp_chunks":4,"bucket_mb":25}}"#,
        published: None,
    },
    Preset {
        id: "coconet",
        title: "CoCoNet: MatMul + AllReduce on a DGX-2",
        description: "GPT-2 8.3B's model-parallel MLP GEMM over 16 V100s, then the AllReduce of its output. \
            Chunking the GEMM lets chunk i's AllReduce run under chunk i+1 (Jangda et al. 2021).",
        json: r#"{"hardware":{"preset":"dgx2-v100","nodes":1},
            "workload":{"kind":"matmul_allreduce","m":24576,"n":3072,"k":768},
            "parallel":{"tp":16,"pp":1,"dp":1},
            "overlap":{"tp":true,"tp_chunks":8}}"#,
        published: Some(PublishedFigure {
            metric: PublishedMetric::Speedup,
            value: 1.36,
            source: "Jangda et al. 2021 (arXiv 2105.05720): up to 1.36x over MatMul then AllReduce",
        }),
    },
    Preset {
        id: "megatron-1.7b",
        title: "Megatron-LM 1.7B on 32 A100",
        description: "Narayanan et al. 2021, Table 1, first row: data parallelism only.",
        json: megatron_row!(24, 2304, 24, 1, 1, 4, 32, 512),
        published: Some(PublishedFigure {
            metric: PublishedMetric::HardwareTflopsPerGpu,
            value: 137.0,
            source: "Narayanan et al. 2021 (arXiv 2104.04473), Table 1",
        }),
    },
    Preset {
        id: "megatron-18.4b",
        title: "Megatron-LM 18.4B on 256 A100",
        description: "Narayanan et al. 2021, Table 1: TP 8 inside each node, DP 32 across nodes.",
        json: megatron_row!(48, 6144, 40, 8, 1, 32, 32, 1024),
        published: Some(PublishedFigure {
            metric: PublishedMetric::HardwareTflopsPerGpu,
            value: 135.0,
            source: "Narayanan et al. 2021 (arXiv 2104.04473), Table 1",
        }),
    },
    Preset {
        id: "megatron-145.6b",
        title: "Megatron-LM 145.6B on 1536 A100",
        description: "Narayanan et al. 2021, Table 1: TP 8, PP 8, DP 24.",
        json: megatron_row!(96, 12288, 80, 8, 8, 192, 24, 2304),
        published: Some(PublishedFigure {
            metric: PublishedMetric::HardwareTflopsPerGpu,
            value: 148.0,
            source: "Narayanan et al. 2021 (arXiv 2104.04473), Table 1",
        }),
    },
    Preset {
        id: "megatron-1t",
        title: "Megatron-LM 1T on 3072 A100",
        description: "Narayanan et al. 2021, Table 1, last row: TP 8 x PP 64, 512 micro-batches per pipeline.",
        json: megatron_row!(160, 25600, 128, 8, 64, 384, 6, 3072),
        published: Some(PublishedFigure {
            metric: PublishedMetric::HardwareTflopsPerGpu,
            value: 163.0,
            source: "Narayanan et al. 2021 (arXiv 2104.04473), Table 1",
        }),
    },
    Preset {
        id: "korthikanti-22b-full",
        title: "22B, full recomputation (Korthikanti et al.)",
        description: "Korthikanti et al. 2022, Table 5: 22B on one DGX A100, TP 8, full recomputation.",
        json: r#"{"hardware":{"preset":"dgx-a100","nodes":1},
            "workload":{"layers":48,"hidden":6144,"heads":64,"seq":2048,"vocab":51200,"micro_batch":4,
                        "global_batch":4,"recompute":"full","sequence_parallel":false,"attention":"materialized"},
            "parallel":{"tp":8,"pp":1,"dp":1,"schedule":"1f1b"},
            "overlap":{"tp":false,"pp":false,"dp":false}}"#,
        published: Some(PublishedFigure {
            metric: PublishedMetric::StepTimeS,
            value: 1.42,
            source: "Korthikanti et al. 2022 (arXiv 2205.05198), Table 5",
        }),
    },
    Preset {
        id: "korthikanti-22b-seqsel",
        title: "22B, sequence parallel + selective recomputation",
        description: "Korthikanti et al. 2022, Table 5: the same 22B model with sequence parallelism and \
            selective recomputation.",
        json: r#"{"hardware":{"preset":"dgx-a100","nodes":1},
            "workload":{"layers":48,"hidden":6144,"heads":64,"seq":2048,"vocab":51200,"micro_batch":4,
                        "global_batch":4,"recompute":"selective","sequence_parallel":true,"attention":"materialized"},
            "parallel":{"tp":8,"pp":1,"dp":1,"schedule":"1f1b"},
            "overlap":{"tp":false,"pp":false,"dp":false}}"#,
        published: Some(PublishedFigure {
            metric: PublishedMetric::StepTimeS,
            value: 1.10,
            source: "Korthikanti et al. 2022 (arXiv 2205.05198), Table 5",
        }),
    },
    Preset {
        id: "korthikanti-175b-full",
        title: "175B, full recomputation (Korthikanti et al.)",
        description: "Korthikanti et al. 2022, Table 5: GPT-3 175B on 64 A100, TP 8, PP 8, interleaved with 3 \
            virtual stages, full recomputation.",
        json: r#"{"hardware":{"preset":"dgx-a100","nodes":8},
            "workload":{"layers":96,"hidden":12288,"heads":96,"seq":2048,"vocab":51200,"micro_batch":1,
                        "global_batch":64,"recompute":"full","sequence_parallel":false,"attention":"materialized"},
            "parallel":{"tp":8,"pp":8,"dp":1,"schedule":"interleaved","virtual_stages":3},
            "overlap":{"tp":false,"pp":false,"dp":false}}"#,
        published: Some(PublishedFigure {
            metric: PublishedMetric::StepTimeS,
            value: 18.13,
            source: "Korthikanti et al. 2022 (arXiv 2205.05198), Table 5",
        }),
    },
    Preset {
        id: "korthikanti-175b-seqsel",
        title: "175B, sequence parallel + selective recomputation",
        description: "Korthikanti et al. 2022, Table 5: GPT-3 175B with sequence parallelism and selective \
            recomputation.",
        json: r#"{"hardware":{"preset":"dgx-a100","nodes":8},
            "workload":{"layers":96,"hidden":12288,"heads":96,"seq":2048,"vocab":51200,"micro_batch":1,
                        "global_batch":64,"recompute":"selective","sequence_parallel":true,"attention":"materialized"},
            "parallel":{"tp":8,"pp":8,"dp":1,"schedule":"interleaved","virtual_stages":3},
            "overlap":{"tp":false,"pp":false,"dp":false}}"#,
        published: Some(PublishedFigure {
            metric: PublishedMetric::StepTimeS,
            value: 13.75,
            source: "Korthikanti et al. 2022 (arXiv 2205.05198), Table 5",
        }),
    },
    Preset {
        id: "zb-1.5b-24",
        title: "Zero bubble: 1.5B on 8 A100, 1F1B, 24 micro-batches",
        description: "Qi et al. 2024, Table 3: a GPT-3-like 1.5B model in a pipeline of 8 GPUs. \
            Switch the schedule to zb-1p or zb-2p and watch W, the weight gradient, move into the bubble.",
        json: zero_bubble_row!(24, 24, 2304, 6, 144, "1f1b"),
        published: None,
    },
    Preset {
        id: "zb-1.5b-24-zb2p",
        title: "Zero bubble: the same 1.5B model with ZB-2p",
        description: "The 1.5B model of the 1F1B preset with ZB-2p: twice the micro-batches in flight \
            fill the warm-up and cool-down with forwards and deferred weight gradients, for about twice \
            the activation memory.",
        json: zero_bubble_row!(24, 24, 2304, 6, 144, "zb-2p"),
        published: None,
    },
    Preset {
        id: "zb-1.5b-64",
        title: "Zero bubble: 1.5B on 8 A100, 1F1B, 64 micro-batches",
        description: "Qi et al. 2024, Table 3: the 1.5B model with 64 micro-batches, where the bubble \
            is a smaller share of the step.",
        json: zero_bubble_row!(24, 24, 2304, 6, 384, "1f1b"),
        published: None,
    },
    Preset {
        id: "zb-6.2b-24",
        title: "Zero bubble: 6.2B on 8 A100, 1F1B, 24 micro-batches",
        description: "Qi et al. 2024, Table 3: a GPT-3-like 6.2B model in a pipeline of 8 GPUs.",
        json: zero_bubble_row!(32, 32, 4096, 3, 72, "1f1b"),
        published: None,
    },
    Preset {
        id: "zb-6.2b-64",
        title: "Zero bubble: 6.2B on 8 A100, 1F1B, 64 micro-batches",
        description: "Qi et al. 2024, Table 3: the 6.2B model with 64 micro-batches.",
        json: zero_bubble_row!(32, 32, 4096, 3, 192, "1f1b"),
        published: None,
    },
    // Megatron-LM on H100 in bf16 (the one-queue and distributed-optimizer
    // presets): Transformer Engine's FlashAttention, and arguments.py sets accumulate_allreduce_grads_in_fp32 for
    // bf16, so the DP reduction moves the fp32 main_grad, 4 bytes.
    Preset {
        id: "one-queue",
        title: "Overlap on, over a third of it exposed: one hardware queue",
        description: "Megatron-LM issue 1468's shape on a 6.7B GPT (the issue's model has 8B): TP 1, DP 64, the \
            distributed optimizer with --overlap-grad-reduce and --overlap-param-gather, but \
            CUDA_DEVICE_MAX_CONNECTIONS=1. Kernels start in launch order: the parameter gathers, launched as the \
            step starts, hold the forward behind them, while each gradient reduce-scatter, launched ahead of the \
            next backward GEMM, runs beside it. Set max_connections to 8 and the gathers hide behind the forward.",
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":8,"max_connections":1},
            "workload":{"layers":32,"hidden":4096,"heads":32,"seq":2048,"vocab":51200,
                        "micro_batch":1,"global_batch":128,"recompute":"none","attention":"flash"},
            "parallel":{"tp":1,"pp":1,"dp":64,"dp_sharding":"optimizer"},
            "overlap":{"tp":false,"pp":false,"dp":true,"bucket_mb":40,"param_gather":true,"grad_bytes":4}}"#,
        published: None,
    },
    Preset {
        id: "coconet-inference",
        title: "CoCoNet: GPT-2 8.3B inference across two DGX-2",
        description: "Megatron-LM's GPT-2 8.3B, forward only: TP 16 inside each DGX-2, two pipeline stages, one \
            per node. CoCoNet's three moves are on: chunked GEMM + AllReduce, the stage boundary sliced and \
            pipelined (ReduceScatter, 1/16 slices over each NIC, AllGather), and the AllReduce fused with the \
            bias, dropout and residual add (Jangda et al. 2021).",
        json: r#"{"hardware":{"preset":"dgx2-v100","nodes":2},
            "workload":{"mode":"inference","layers":72,"hidden":3072,"heads":32,"seq":1024,"vocab":51200,
                        "micro_batch":8,"global_batch":32,"recompute":"none","sequence_parallel":false,
                        "attention":"materialized"},
            "parallel":{"tp":16,"pp":2,"dp":1,"schedule":"gpipe","scatter_gather":true},
            "overlap":{"tp":true,"pp":true,"dp":false,"tp_chunks":4,"pp_chunks":8,"fuse":true}}"#,
        published: None,
    },
    // torchtitan's Llama runs: FlashAttention (PyTorch's SDPA flash
    // backend), and FSDP's MixedPrecisionPolicy with param_dtype bf16 and
    // reduce_dtype fp32 (torchtitan's mixed_precision_reduce default
    // "float32"), so gradients reduce at 4 bytes.
    Preset {
        id: "llama3-8b-fsdp",
        title: "Llama-3-8B on 64 H100: FSDP 8 x TP 8",
        description: "torchtitan's 2D layout: tensor parallelism inside each DGX H100, FSDP across the 8 nodes. \
            Every layer's parameters are all-gathered before its forward and again before its backward, \
            the next layer's prefetched while the current one computes; its gradients are reduce-scattered \
            after its backward.",
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":8},
            "workload":{"layers":32,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
                        "tied_embeddings":false,"seq":8192,"vocab":128256,"attention":"flash",
                        "micro_batch":1,"global_batch":16,"recompute":"selective","sequence_parallel":true},
            "parallel":{"tp":8,"pp":1,"dp":8,"dp_sharding":"full"},
            "overlap":{"tp":true,"pp":true,"dp":true,"grad_bytes":4}}"#,
        published: None,
    },
    Preset {
        id: "llama3-70b-fsdp",
        title: "Llama-3-70B on 256 H100: FSDP 32 x TP 8",
        description: "The 70B model in torchtitan's 2D layout: TP 8 inside each node, FSDP across 32 nodes. \
            Each layer's gather crosses the network to 31 other nodes while the layer before it computes.",
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":32},
            "workload":{"layers":80,"hidden":8192,"heads":64,"kv_heads":8,"ffn_hidden":28672,"mlp":"swiglu",
                        "tied_embeddings":false,"seq":8192,"vocab":128256,"attention":"flash",
                        "micro_batch":1,"global_batch":64,"recompute":"selective","sequence_parallel":true},
            "parallel":{"tp":8,"pp":1,"dp":32,"dp_sharding":"full"},
            "overlap":{"tp":true,"pp":true,"dp":true,"grad_bytes":4}}"#,
        published: None,
    },
    // The same run with torchtitan's Float8 training: the linear layers in
    // fp8 with tensorwise scaling, the output layer left in bf16, and FSDP
    // gathering the fp8 weights (`enable_fsdp_float8_all_gather`).
    Preset {
        id: "llama3-8b-fsdp-fp8",
        title: "Llama-3-8B on 64 H100 in FP8: FSDP 8 x TP 8",
        description: "The Llama-3-8B FSDP run with its linear layers in FP8 (torchtitan's Float8), at twice the \
            bf16 peak. TP's window, its GEMMs, shrinks by 40% while only its gathers move fp8 (its reduce-scatters stay \
            bf16), so less of it is hidden than in bf16 and the step shrinks less than its compute. Each cast of a tensor the TP ranks \
            hold shards of first all-reduces its scale across them, 11 calls per layer and micro-batch that nothing hides. \
            FSDP's gathers move fp8 weights.",
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":8},
            "workload":{"layers":32,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
                        "tied_embeddings":false,"seq":8192,"vocab":128256,"attention":"flash",
                        "micro_batch":1,"global_batch":16,"recompute":"selective","sequence_parallel":true,
                        "precision":"fp8"},
            "parallel":{"tp":8,"pp":1,"dp":8,"dp_sharding":"full"},
            "overlap":{"tp":true,"pp":true,"dp":true,"grad_bytes":4,"fp8_all_gather":true}}"#,
        published: None,
    },
    // Llama 3's long-context stage (Llama 3 paper, arXiv 2407.21783, Table
    // 4): 405B at 131,072 tokens on 16,384 H100 with TP 8, CP 16, PP 16 and
    // DP 8, 16M tokens per step (16 sequences per DP group), CP by
    // all-gathering K/V (section 3.3.2), FSDP sharding gradients and
    // optimizer states but not weights (the distributed optimizer here),
    // fp32 gradient reduction, an interleaved schedule (section 3.3.2).
    // The paper reports 380 TFLOP/s per GPU (38% MFU) for it; it states
    // neither its virtual stages nor its recomputation: 4 virtual stages,
    // layers shared as evenly as they go. Recomputation: full, the one form
    // that fits 80 GB. Without it a GPU holds 85.6 GB (67.5 of
    // activations: 4 layer chunks of 8 layers in flight at 8,192 tokens per
    // rank), which the paper's run could not have; selective recomputation
    // saves nothing with FlashAttention (no s x s scores to drop), and full
    // recomputation keeps 22.1 GB.
    Preset {
        id: "llama3-405b-128k",
        title: "Llama 3 405B at 128K tokens on 16,384 H100: TP 8 x CP 16 x PP 16 x DP 8",
        description: "Llama 3's long-context training: each sequence of 131,072 tokens is split over 16 CP \
            ranks, which all-gather each layer's keys and values before attention. Transformer Engine runs \
            the gather before any attention and again in the backward, so all of CP's traffic is exposed, \
            where a ring hides its steps under the blocks (the long-context-ring preset).",
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":2048},
            "workload":{"layers":126,"hidden":16384,"heads":128,"kv_heads":8,"ffn_hidden":53248,"mlp":"swiglu",
                        "tied_embeddings":false,"seq":131072,"vocab":128256,"attention":"flash",
                        "micro_batch":1,"global_batch":128,"recompute":"full","sequence_parallel":true},
            "parallel":{"tp":8,"cp":16,"pp":16,"dp":8,"cp_mode":"allgather","dp_sharding":"optimizer",
                        "schedule":"interleaved","virtual_stages":4},
            "overlap":{"tp":true,"pp":true,"dp":true,"cp":true,"param_gather":true,"grad_bytes":4}}"#,
        published: None,
    },
    Preset {
        id: "long-context-ring",
        title: "Ring attention at 64K tokens: CP 8 across two nodes",
        description: "A Llama-3-8B-shaped model of 4 layers on 16 H100: TP 2 inside each node and each \
            65,536-token sequence split over 8 CP ranks in a ring. Each attention runs in 8 blocks; while \
            one block computes, the next block's keys and values arrive from the ring neighbour. Switch \
            CP overlap off and every step waits for its transfer.",
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":2},
            "workload":{"layers":4,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
                        "tied_embeddings":false,"seq":65536,"vocab":128256,"attention":"flash",
                        "micro_batch":1,"global_batch":2,"recompute":"none"},
            "parallel":{"tp":2,"cp":8,"pp":1,"dp":1,"cp_mode":"ring"},
            "overlap":{"tp":true,"pp":true,"dp":true,"cp":true,"grad_bytes":4}}"#,
        published: None,
    },
    Preset {
        id: "distributed-optimizer",
        title: "Distributed optimizer: the parameter all-gather under the forward",
        description: "Megatron-LM's distributed optimizer on 4 DGX H100: gradients are reduce-scattered during \
            the backward, and with param_gather the updated parameters are all-gathered bucket by bucket \
            under the first micro-batch's forward, each bucket awaited before its first layer.",
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":4},
            "workload":{"layers":24,"hidden":4096,"heads":32,"seq":4096,"vocab":51200,
                        "micro_batch":1,"global_batch":32,"recompute":"selective","sequence_parallel":true,
                        "attention":"flash"},
            "parallel":{"tp":8,"pp":1,"dp":4,"dp_sharding":"optimizer"},
            "overlap":{"tp":true,"pp":true,"dp":true,"bucket_mb":100,"param_gather":true,"grad_bytes":4}}"#,
        published: None,
    },
    // A Mixtral-like model cut to 8 layers, on two nodes: its 16 experts
    // spread over all 16 GPUs, so that half of each all-to-all crosses
    // the NIC.
    Preset {
        id: "moe-didactic",
        title: "Mixture of experts on 2 DGX H100: the all-to-all across nodes",
        description: "16 experts spread over the 16 GPUs of two nodes (EP 16): each MoE layer sends every token \
            to the GPUs of its two experts and back, half of them across the network. The all-to-alls sit \
            between the router and the experts and after the experts; switch EP overlap on to merge one \
            micro-batch's forward with another's backward.",
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":2},
            "workload":{"layers":8,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
                        "tied_embeddings":false,"seq":4096,"vocab":32000,"attention":"flash",
                        "micro_batch":1,"global_batch":128,"recompute":"none","sequence_parallel":false,
                        "moe":{"experts":16,"top_k":2,"expert_ffn_hidden":3584}},
            "parallel":{"tp":1,"pp":1,"dp":16,"ep":16,"dp_sharding":"optimizer"},
            "overlap":{"tp":false,"pp":true,"dp":true,"ep":false,"grad_bytes":4}}"#,
        published: None,
    },
    // Qwen3-235B-A22B (its Hugging Face config: 94 layers, hidden 4096, 64
    // heads of 128, 4 KV heads, 128 experts of 1536, top-8, vocabulary
    // 151936) in the layout of NVIDIA's Megatron-MoE-ModelZoo
    // (best_practice/qwen3/readme.md at e865051): 256 H100, TP 2, PP 8,
    // VPP 4, EP 32, DeepEP, micro-batch 1, global batch 2048, sequence
    // 4096, the norms and the experts' activation recomputed (its
    // recompute column "norm, act": `--recompute-modules moe_act
    // layernorm`, best_practice/qwen3/run_235b.sh:27).
    Preset {
        id: "qwen3-235b",
        title: "Qwen3-235B-A22B on 256 H100: TP 2, PP 8 x 4, EP 32",
        description: "A production mixture of experts in the layout NVIDIA's Megatron MoE model zoo publishes: \
            128 experts per layer spread over 32 GPUs (4 nodes) with DeepEP, pipelined over 8 stages of 4 \
            virtual chunks. EP overlap merges each forward with a backward (Megatron's combined 1F1B).",
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":32},
            "workload":{"layers":94,"hidden":4096,"heads":64,"kv_heads":4,"head_dim":128,"ffn_hidden":12288,
                        "mlp":"swiglu","tied_embeddings":false,"seq":4096,"vocab":151936,"attention":"flash",
                        "micro_batch":1,"global_batch":2048,"recompute":"none","sequence_parallel":true,
                        "moe":{"experts":128,"top_k":8,"expert_ffn_hidden":1536,"dispatcher":"deepep",
                               "recompute":["moe_act","layernorm"]}},
            "parallel":{"tp":2,"pp":8,"dp":16,"ep":32,"schedule":"interleaved","virtual_stages":4,
                        "dp_sharding":"optimizer"},
            "overlap":{"tp":true,"pp":true,"dp":true,"ep":true,"grad_bytes":4,"param_gather":true}}"#,
        published: None,
    },
    // DeepSeek-V3's shape (arXiv 2412.19437, section 4.2: 61 layers, hidden
    // 7168, 128 heads of 128, the first 3 layers dense of 18432, then 256
    // routed experts of 2048 and one shared, top-8, at most 4 nodes per
    // token; vocabulary 129280) with its multi-head latent attention
    // approximated by grouped-query attention of 8 KV heads; on H800
    // (NVLink 200 GB/s and InfiniBand 50 GB/s per GPU and direction, 132
    // SMs) with its section 3.2 layout at half the scale: PP 16 with
    // DualPipeV, EP 64, ZeRO-1 over DP, no TP, DeepEP on 20 SMs.
    Preset {
        id: "deepseek-v3",
        title: "DeepSeek-V3 on 1024 H800: its DualPipeV and EP 64 layout",
        description: "DeepSeek-V3's section 3.2 layout on half its 2,048 GPUs: 16 pipeline stages in DualPipeV, \
            256 experts per layer over 64 GPUs (8 nodes) with DeepEP. Its final batch of 15,360 sequences scaled to DP 64 gives 120 micro-batches; \
            the norms and the experts' activation are recomputed, tokens are dispatched and kept in FP8, and the experts' SwiGLU inputs kept in FP8, as in its report. \
            So it fits in the H800's 80 GB. DualPipeV runs each forward chunk beside another micro-batch's backward chunk, \
            so that one's all-to-all hides under the other's compute.",
        // DeepSeek-V3 (arXiv 2412.19437) section 3.2: PP 16 with DualPipe,
        // EP 64 over 8 nodes, ZeRO-1 DP, no TP, DeepEP on 20 SMs; section
        // 3.3: RMSNorm recomputed, the SwiGLU's output recomputed from its
        // cached input, activations cached in FP8 (here the dispatched
        // tokens, `fp8_dispatch_cache`, and the SwiGLU inputs,
        // `fp8_swiglu_cache`; MLA's up-projection recompute is
        // not modelled, as MLA is approximated by grouped-query attention);
        // section 3.3.2: tokens dispatched to the experts in FP8, and the
        // gradients sent back to them, the combine in BF16 (`fp8_dispatch`).
        // Section 4.2: the batch ramps to 15,360 sequences of 4,096 tokens
        // on 2,048 GPUs (DP 128), here DP 64: 7,680, 120 micro-batches of 1.
        // The layout is Megatron's DeepSeek-V3 split (Megatron-MoE-ModelZoo
        // best-practice/DeepSeekV3) without its MTP chunk, on DualPipeV's 32.
        json: r#"{"hardware":{"preset":"dgx-h100","nodes":128,"nvlink_gbps":200,"nic_gbps":50,"sms":132},
            "workload":{"layers":61,"hidden":7168,"heads":128,"kv_heads":8,"head_dim":128,"ffn_hidden":18432,
                        "mlp":"swiglu","tied_embeddings":false,"seq":4096,"vocab":129280,"attention":"flash",
                        "micro_batch":1,"global_batch":7680,"recompute":"none","sequence_parallel":false,
                        "moe":{"experts":256,"top_k":8,"expert_ffn_hidden":2048,"shared_experts":1,
                               "dense_layers":3,"dispatcher":"deepep","max_nodes_per_token":4,
                               "deepep_sms":20,"recompute":["moe_act","layernorm"],
                               "fp8_dispatch_cache":true,"fp8_swiglu_cache":true,"fp8_dispatch":true}},
            "parallel":{"tp":1,"pp":16,"dp":64,"ep":64,"schedule":"dualpipe-v","virtual_stages":2,
                        "dp_sharding":"optimizer",
                        "pipeline_layout":["E t","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","t*2","L"]},
            "overlap":{"tp":false,"pp":true,"dp":true,"ep":true,"grad_bytes":4}}"#,
        published: None,
    },
];

/// The preset of an id.
pub fn find(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The preset ids, for a refusal of an unknown one: in list order, as many
/// as fit a one-line message (240 characters), then how many more.
pub fn listed_ids() -> String {
    let mut out = String::new();
    for (i, p) in PRESETS.iter().enumerate() {
        if out.len() + p.id.len() > 240 {
            return format!("{out}, and {} more", PRESETS.len() - i);
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(p.id);
    }
    out
}

/// The preset a page or link without one opens.
pub fn default_preset() -> &'static Preset {
    find(DEFAULT_ID).expect("the default preset exists")
}

/// The preset's scenario, resolved.
pub fn scenario(id: &str) -> Result<crate::model::scenario::Scenario, ScenarioError> {
    let preset = find(id).ok_or_else(|| {
        ScenarioError::single(
            "preset",
            format!("unknown preset \"{id}\": valid are {}", listed_ids()),
        )
    })?;
    preset.input().resolve()
}
