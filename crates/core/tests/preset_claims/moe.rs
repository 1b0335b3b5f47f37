//! The claims of the mixture-of-experts presets (`moe-didactic`,
//! `qwen3-235b`, `deepseek-v3`): their layouts, dispatchers, overlap
//! options and memory.

use super::*;

pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        preset: "moe-didactic",
        text: "Mixture of experts on 2 DGX H100: the all-to-all across nodes",
        check: |s| {
            layout(s, HardwarePreset::DgxH100, 16, [1, 1, 16])?;
            ensure(s.parallel.ep > s.hardware.gpus_per_node, || {
                format!("ep {} stays in a node", s.parallel.ep)
            })
        },
    },
    Claim {
        preset: "moe-didactic",
        text: "16 experts spread over the 16 GPUs of two nodes (EP 16): each MoE layer sends every token \
               to the GPUs of its two experts and back, half of them across the network.",
        check: |s| {
            let m = moe(s);
            ensure((m.experts, m.top_k, s.parallel.ep) == (16, 2, 16), || {
                format!("{} experts, top-{}, ep {}", m.experts, m.top_k, s.parallel.ep)
            })?;
            let traffic = ep_traffic(s);
            // Its own node's 8 GPUs (itself included) and the other node's 8.
            ensure(traffic.nic_peers == 8 && traffic.nvlink_peers == 7, || {
                format!("{traffic:?}")
            })
        },
    },
    Claim {
        preset: "moe-didactic",
        text: "The all-to-alls sit between the router and the experts and after the experts; switch EP \
               overlap on to merge one micro-batch's forward with another's backward.",
        check: |s| {
            ensure(!s.overlap.ep.is_on(), || "EP overlap is on".into())?;
            let sim = simulate(s);
            let t = &sim.timeline;
            let compute = &t.gpus[0].compute;
            // Off: each forward dispatch starts after a router ends and ends
            // before the experts that follow it start.
            for d in comm(t, 0, Axis::Ep).filter(|iv| {
                iv.op == OpKind::Dispatch && iv.phase == Phase::Forward
            }) {
                let router = compute.iter().rev().find(|c| c.end_s <= d.start_s + 1e-12);
                let experts = compute.iter().find(|c| c.start_s >= d.start_s);
                ensure(
                    router.is_some_and(|c| c.op == OpKind::Router)
                        && experts.is_some_and(|c| c.op == OpKind::Experts && c.start_s >= d.end_s - 1e-12),
                    || format!("dispatch at {} not between router and experts", d.start_s),
                )?;
            }
            let mut on = s.clone();
            on.overlap.ep = true.into();
            let (off, on) = (sim.report, report(&on));
            let exposed = |r: &Report| r.axes.get(Axis::Ep).exposed_ms;
            ensure(exposed(&on) < 0.7 * exposed(&off), || {
                format!("EP exposed {} ms on, {} off", exposed(&on), exposed(&off))
            })
        },
    },
    Claim {
        preset: "qwen3-235b",
        text: "Qwen3-235B-A22B on 256 H100: TP 2, PP 8 x 4, EP 32",
        check: |s| {
            layout(s, HardwarePreset::DgxH100, 256, [2, 8, 16])?;
            named_size_b(s, 235.0)?;
            let active = active_params(transformer(s)) / 1e9;
            ensure((active / 22.0 - 1.0).abs() <= 0.05, || format!("{active:.1}B active"))?;
            ensure(s.parallel.virtual_stages == 4 && s.parallel.ep == 32, || {
                format!("vpp {}, ep {}", s.parallel.virtual_stages, s.parallel.ep)
            })
        },
    },
    Claim {
        preset: "qwen3-235b",
        text: "A production mixture of experts in the layout NVIDIA's Megatron MoE model zoo publishes: \
               128 experts per layer spread over 32 GPUs (4 nodes) with DeepEP, pipelined over 8 stages of 4 \
               virtual chunks.",
        check: |s| {
            let m = moe(s);
            ensure(
                m.experts == 128
                    && s.parallel.ep == 32
                    && s.parallel.ep / s.hardware.gpus_per_node == 4
                    && m.dispatcher == Dispatcher::Deepep
                    && s.parallel.schedule == Schedule::Interleaved
                    && (s.parallel.pp, s.parallel.virtual_stages) == (8, 4),
                || format!("{m:?}"),
            )
        },
    },
    Claim {
        preset: "qwen3-235b",
        text: "EP overlap merges each forward with a backward (Megatron's combined 1F1B).",
        check: |s| {
            ensure(s.overlap.ep.is_on() && merges_passes(s), || "passes do not merge".into())
        },
    },
    Claim {
        preset: "deepseek-v3",
        text: "DeepSeek-V3 on 1024 H800: its DualPipeV and EP 64 layout",
        check: |s| {
            let hw = &s.hardware;
            ensure(
                hw.gpus() == 1024
                    && (hw.nvlink_gbps, hw.nic_gbps, hw.sms) == (200.0, 50.0, 132)
                    && s.parallel.schedule == Schedule::DualPipeV
                    && s.parallel.ep == 64,
                || format!("{hw:?}"),
            )
        },
    },
    Claim {
        preset: "deepseek-v3",
        text: "DeepSeek-V3's section 3.2 layout on half its 2,048 GPUs: 16 pipeline stages in DualPipeV, \
               256 experts per layer over 64 GPUs (8 nodes) with DeepEP.",
        check: |s| {
            let m = moe(s);
            let t = transformer(s);
            let chunks = s
                .parallel
                .pipeline_layout
                .as_ref()
                .ok_or("no pipeline layout")?
                .check(32, t.layers)
                .map_err(|e| format!("{e:?}"))?;
            let counts: Vec<u32> = chunks.iter().map(|c| c.layers).collect();
            ensure(
                2 * s.hardware.gpus() == 2048
                    && s.parallel.pp == 16
                    && s.parallel.virtual_stages == 2
                    && t.layers == 61
                    && counts.len() == 32
                    && counts[0] == 1
                    && chunks[0].embeddings == 1
                    && counts[1..31].iter().all(|&n| n == 2)
                    && counts[31] == 0
                    && chunks[31].losses == 1
                    && m.experts == 256
                    && s.parallel.ep / s.hardware.gpus_per_node == 8
                    && m.dispatcher == Dispatcher::Deepep
                    && m.max_nodes_per_token == 4,
                || format!("{counts:?}, {m:?}"),
            )
        },
    },
    Claim {
        preset: "deepseek-v3",
        text: "Its final batch of 15,360 sequences scaled to DP 64 gives 120 micro-batches; \
               the norms and the experts' activation are recomputed, tokens are dispatched and kept in FP8, and the experts' SwiGLU inputs kept in FP8, as in its report.",
        check: |s| {
            let t = transformer(s);
            let m = moe(s);
            ensure(
                s.parallel.dp == 64
                    && t.global_batch == 15_360 * 64 / 128
                    && s.micro_batches() == 120
                    && m.recompute.layernorm
                    && m.recompute.moe_act
                    && m.fp8_dispatch_cache
                    && m.fp8_swiglu_cache
                    && m.fp8_dispatch
                    && m.dispatcher == overlap_core::scenario::Dispatcher::Deepep,
                || format!("{} micro-batches, {:?}", s.micro_batches(), m.recompute),
            )
        },
    },
    Claim {
        preset: "deepseek-v3",
        text: "So it fits in the H800's 80 GB.",
        check: |s| {
            let m = overlap_core::memory::memory_gb(s);
            ensure(
                s.hardware.hbm_gb == 80.0 && m.fits && m.total <= 80.0,
                || format!("{m:?}"),
            )
        },
    },
    Claim {
        preset: "deepseek-v3",
        text: "DualPipeV runs each forward chunk beside another micro-batch's backward chunk, so that one's \
               all-to-all hides under the other's compute.",
        check: |s| {
            ensure(s.overlap.ep.is_on() && merges_passes(s), || "passes do not merge".into())
        },
    },
];
