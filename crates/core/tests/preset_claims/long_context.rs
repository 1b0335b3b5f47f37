//! The claims of the Llama 3 presets (FSDP, FP8, 128K context), the
//! ring-attention preset and the distributed optimizer's.

use super::*;

pub(super) const CLAIMS: &[Claim] = &[
    Claim {
        preset: "llama3-8b-fsdp",
        text: "Llama-3-8B on 64 H100: FSDP 8 x TP 8",
        check: |s| {
            size_b(s, 8.03, 0.01)?;
            layout(s, HardwarePreset::DgxH100, 64, [8, 1, 8])?;
            ensure(s.parallel.dp_sharding == DpSharding::Full, || "not FSDP".into())
        },
    },
    Claim {
        preset: "llama3-8b-fsdp",
        text: "torchtitan's 2D layout: tensor parallelism inside each DGX H100, FSDP across the 8 nodes.",
        check: |s| {
            tp_fills_node(s)?;
            fsdp_across_nodes(s, 8)
        },
    },
    Claim {
        preset: "llama3-8b-fsdp",
        text: "Every layer's parameters are all-gathered before its forward and again before its backward, \
               the next layer's prefetched while the current one computes; its gradients are \
               reduce-scattered after its backward.",
        // 0.78 hides under compute (hidden's one meaning, model.md 6), 0.85
        // not exposed, since causal attention halved the layers' attention
        // (issue 55; above 0.9 not exposed before).
        check: |s| fsdp_per_layer(s, 0.75),
    },
    Claim {
        preset: "llama3-70b-fsdp",
        text: "Llama-3-70B on 256 H100: FSDP 32 x TP 8",
        check: |s| {
            named_size_b(s, 70.0)?;
            layout(s, HardwarePreset::DgxH100, 256, [8, 1, 32])?;
            ensure(s.parallel.dp_sharding == DpSharding::Full, || "not FSDP".into())
        },
    },
    Claim {
        preset: "llama3-70b-fsdp",
        text: "The 70B model in torchtitan's 2D layout: TP 8 inside each node, FSDP across 32 nodes.",
        check: |s| {
            named_size_b(s, 70.0)?;
            tp_fills_node(s)?;
            fsdp_across_nodes(s, 32)
        },
    },
    Claim {
        preset: "llama3-70b-fsdp",
        text: "Each layer's gather crosses the network to 31 other nodes while the layer before it computes.",
        check: |s| {
            ensure(s.parallel.dp == s.hardware.nodes && s.hardware.nodes == 32, || {
                "the gather does not span 32 nodes".into()
            })?;
            let r = report(s);
            ensure(r.links.network.busy > 0.0, || "nothing crosses the network".into())?;
            // 0.70 of DP hides since the preset runs FlashAttention (shorter
            // layers to hide under) and reduces in fp32 as torchtitan does
            // (reduce-scatters of twice the bytes); it was 0.9 with
            // materialised attention and bf16 reductions.
            // 0.59 since causal attention (issue 55; above 0.65 before).
            fsdp_per_layer(s, 0.55)
        },
    },
    Claim {
        preset: "distributed-optimizer",
        text: "Distributed optimizer: the parameter all-gather under the forward",
        check: |s| {
            ensure(
                s.parallel.dp_sharding == DpSharding::Optimizer && s.overlap.param_gather,
                || "not the distributed optimizer with param_gather".into(),
            )?;
            let sim = simulate(s);
            let t = &sim.timeline;
            let under = comm(t, 0, Axis::Dp).filter(|iv| iv.op == OpKind::AllGather).any(|ag| {
                t.gpus[0]
                    .compute
                    .iter()
                    .any(|c| c.phase == Phase::Forward && overlaps(c, ag))
            });
            ensure(under, || "no gather beside a forward".into())
        },
    },
    Claim {
        preset: "distributed-optimizer",
        text: "Megatron-LM's distributed optimizer on 4 DGX H100: gradients are reduce-scattered during the \
               backward, and with param_gather the updated parameters are all-gathered bucket by bucket under \
               the first micro-batch's forward, each bucket awaited before its first layer.",
        check: |s| {
            ensure(
                s.hardware_preset == HardwarePreset::DgxH100
                    && s.hardware.nodes == 4
                    && s.parallel.dp_sharding == DpSharding::Optimizer
                    && s.overlap.param_gather,
                || "not the distributed optimizer with param_gather on 4 DGX H100".into(),
            )?;
            let sim = simulate(s);
            let t = &sim.timeline;
            let compute = &t.gpus[0].compute;
            let last_backward_end = compute
                .iter()
                .filter(|c| c.phase == Phase::Backward)
                .map(|c| c.end_s)
                .fold(0.0, f64::max);
            let during = comm(t, 0, Axis::Dp)
                .filter(|iv| iv.op == OpKind::ReduceScatter)
                .any(|rs| rs.start_s < last_backward_end);
            ensure(during, || "no reduce-scatter during the backward".into())?;
            let gathers: Vec<&Interval> = comm(t, 0, Axis::Dp)
                .filter(|iv| iv.op == OpKind::AllGather)
                .collect();
            ensure(gathers.len() > 1, || format!("{} gather", gathers.len()))?;
            for ag in gathers {
                let first = compute
                    .iter()
                    .filter(|c| c.phase == Phase::Forward && c.micro_batch == 0 && c.layer == ag.layer)
                    .map(|c| c.start_s)
                    .fold(f64::INFINITY, f64::min);
                ensure(first.is_finite() && first >= ag.end_s, || {
                    format!("layer {}'s forward starts before its bucket's gather ends", ag.layer)
                })?;
            }
            Ok(())
        },
    },
    Claim {
        preset: "llama3-8b-fsdp-fp8",
        text: "Llama-3-8B on 64 H100 in FP8: FSDP 8 x TP 8",
        check: |s| {
            size_b(s, 8.03, 0.01)?;
            layout(s, HardwarePreset::DgxH100, 64, [8, 1, 8])?;
            ensure(s.parallel.dp_sharding == DpSharding::Full, || "not FSDP".into())?;
            ensure(transformer(s).precision == Precision::Fp8, || "not fp8".into())
        },
    },
    Claim {
        preset: "llama3-8b-fsdp-fp8",
        text: "The Llama-3-8B FSDP run with its linear layers in FP8 (torchtitan's Float8), at twice the bf16 peak.",
        check: |s| {
            let mut bf16 = s.clone();
            if let Workload::Transformer(t) = &mut bf16.workload {
                t.precision = Precision::Bf16;
            }
            bf16.overlap.fp8_all_gather = false;
            ensure(bf16 == preset("llama3-8b-fsdp"), || "not the bf16 run in fp8".into())?;
            let ratio = s.hardware.fp8_tflops / s.hardware.peak_tflops;
            ensure((ratio - 2.0).abs() < 0.01, || format!("fp8 peak {ratio:.3} x bf16"))
        },
    },
    Claim {
        preset: "llama3-8b-fsdp-fp8",
        text: "TP's window, its GEMMs, shrinks by 40% while only its gathers move fp8 (its reduce-scatters stay bf16), \
               so less of it is hidden than in bf16 and the step shrinks less than its compute.",
        check: |s| {
            let (fp8, bf16) = (report(s), report(&preset("llama3-8b-fsdp")));
            let (a, b) = (&fp8.axes[Axis::Tp], &bf16.axes[Axis::Tp]);
            // FP8 GEMMs at 0.565 of their bf16 time (twice the peak at 70.9%
            // of it against 80.1%), their fixed costs and the casts beside.
            let window = a.window_ms / b.window_ms;
            ensure((0.55..=0.65).contains(&window), || format!("TP window x{window:.3}"))?;
            // The gathers at half their bf16 bytes, the reduce-scatters at theirs.
            let bytes = |s: &Scenario, kind: OpKind| -> f64 {
                comm(&simulate(s).timeline, 0, Axis::Tp).filter(|iv| iv.op == kind).map(|iv| iv.bytes).sum()
            };
            let bf16_s = preset("llama3-8b-fsdp");
            for (kind, want) in [(OpKind::AllGather, 0.5), (OpKind::ReduceScatter, 1.0)] {
                let ratio = bytes(s, kind) / bytes(&bf16_s, kind);
                ensure((ratio - want).abs() < 1e-9, || format!("{kind:?} bytes x{ratio:.3}"))?;
            }
            // Less hidden, in time and as a share of its traffic.
            ensure(a.under_compute_ms < b.under_compute_ms && a.hidden < b.hidden, || {
                format!("{a:?} vs {b:?}")
            })?;
            let (step, compute) = (
                fp8.step_time_ms / bf16.step_time_ms,
                fp8.compute_ms / bf16.compute_ms,
            );
            ensure(step < 1.0 && step > compute, || format!("step x{step:.3}, compute x{compute:.3}"))
        },
    },
    Claim {
        preset: "llama3-8b-fsdp-fp8",
        text: "Each cast of a tensor the TP ranks hold shards of first all-reduces its scale across them, 11 calls \
               per layer and micro-batch that nothing hides.",
        check: |s| {
            // The four inputs forward and the seven output gradients
            // backward; the weights' scales come with FSDP's fp8 gathers
            // (`fp8_scales`).
            let sim = simulate(s);
            let t = transformer(s);
            let scales: Vec<_> = comm(&sim.timeline, 0, Axis::Tp).filter(|iv| iv.op == OpKind::AllReduce).collect();
            let micro_batches = t.global_batch / (t.micro_batch * s.parallel.dp);
            let want = 11 * t.layers * micro_batches;
            ensure(scales.len() as u32 == want, || format!("{} scale reductions, not {want}", scales.len()))?;
            let compute = &sim.timeline.gpus[0].compute;
            let beside = scales
                .iter()
                .filter(|r| compute.iter().any(|k| k.end_s.min(r.end_s) - k.start_s.max(r.start_s) > 1e-12))
                .count();
            ensure(beside == 0, || format!("{beside} scale reductions beside a kernel"))
        },
    },
    Claim {
        preset: "llama3-8b-fsdp-fp8",
        text: "FSDP's gathers move fp8 weights.",
        check: |s| {
            // A layer's gather after the first (which also brings the
            // embeddings): half the bf16 run's bytes on the wire.
            let gather = |s: &Scenario| {
                let sim = simulate(s);
                let bytes = comm(&sim.timeline, 0, Axis::Dp)
                    .find(|iv| iv.op == OpKind::AllGather && iv.layer == 1)
                    .map_or(0.0, |iv| iv.bytes);
                bytes
            };
            let ratio = gather(s) / gather(&preset("llama3-8b-fsdp"));
            ensure((0.45..=0.55).contains(&ratio), || format!("gather bytes x{ratio:.3}"))
        },
    },
    Claim {
        preset: "llama3-405b-128k",
        text: "Llama 3 405B at 128K tokens on 16,384 H100: TP 8 x CP 16 x PP 16 x DP 8",
        check: |s| {
            named_size_b(s, 405.0)?;
            layout(s, HardwarePreset::DgxH100, 16_384, [8, 16, 8])?;
            ensure(s.parallel.cp == 16 && transformer(s).seq == 131_072, || {
                format!("cp {}, seq {}", s.parallel.cp, transformer(s).seq)
            })
        },
    },
    Claim {
        preset: "llama3-405b-128k",
        text: "Llama 3's long-context training: each sequence of 131,072 tokens is split over 16 CP ranks, \
               which all-gather each layer's keys and values before attention.",
        check: |s| {
            ensure(s.parallel.cp_mode == CpMode::Allgather, || "not all-gather CP".into())?;
            // Its timeline is too long to draw whole: the same layout on
            // one layer per stage and one micro-batch per pipeline.
            let mut small = s.clone();
            small.parallel.schedule = Schedule::OneFOneB;
            small.parallel.virtual_stages = 1;
            if let Workload::Transformer(t) = &mut small.workload {
                t.layers = 16;
                t.global_batch = 8;
            }
            let sim = simulate(&small);
            let gathers = comm(&sim.timeline, 0, Axis::Cp)
                .filter(|iv| iv.op == OpKind::AllGather && iv.phase == Phase::Forward && iv.micro_batch == 0)
                .count();
            let layers = sim.timeline.gpus[0]
                .compute
                .iter()
                .filter(|c| c.op == OpKind::Attention && c.phase == Phase::Forward && c.micro_batch == 0)
                .map(|c| c.layer)
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            ensure(gathers == layers && layers > 0, || format!("{gathers} gathers for {layers} layers"))
        },
    },
    Claim {
        preset: "llama3-405b-128k",
        text: "Transformer Engine runs the gather before any attention and again in the backward, so all \
               of CP's traffic is exposed, where a ring hides its steps under the blocks (the long-context-ring \
               preset).",
        check: |s| {
            let cp = report(s).axes.reported(Axis::Cp).cloned().expect("a cp axis");
            ensure(cp.hidden < 1e-9 && cp.exposed_ms > 0.999 * cp.comm_ms, || format!("{cp:?}"))?;
            let ring = report(&preset("long-context-ring")).axes.reported(Axis::Cp).cloned().expect("a cp axis");
            ensure(ring.hidden > 0.95, || format!("{ring:?}"))
        },
    },
    Claim {
        preset: "long-context-ring",
        text: "Ring attention at 64K tokens: CP 8 across two nodes",
        check: |s| {
            ensure(
                s.parallel.cp == 8
                    && s.parallel.cp_mode == CpMode::Ring
                    && transformer(s).seq == 65_536
                    && s.hardware.nodes == 2
                    && s.parallel.tp * s.parallel.cp > s.hardware.gpus_per_node,
                || "not a ring of 8 across two nodes at 64K".into(),
            )
        },
    },
    Claim {
        preset: "long-context-ring",
        text: "A Llama-3-8B-shaped model of 4 layers on 16 H100: TP 2 inside each node and each 65,536-token \
               sequence split over 8 CP ranks in a ring.",
        check: |s| {
            let t = transformer(s);
            ensure(
                t.layers == 4 && t.hidden == 4096 && t.kv_heads == 8 && t.ffn_hidden == 14_336,
                || "not Llama-3-8B's layer".into(),
            )?;
            layout(s, HardwarePreset::DgxH100, 16, [2, 1, 1])?;
            ensure(s.parallel.cp == 8 && s.parallel.cp_mode == CpMode::Ring, || "not CP 8 ring".into())
        },
    },
    Claim {
        preset: "long-context-ring",
        text: "Each attention runs in 8 blocks; while one block computes, the next block's keys and values \
               arrive from the ring neighbour.",
        check: |s| {
            let sim = simulate(s);
            let t = &sim.timeline;
            let blocks: Vec<&Interval> = t.gpus[0]
                .compute
                .iter()
                .filter(|c| {
                    c.op == OpKind::Attention && c.phase == Phase::Forward && c.layer == 0 && c.micro_batch == 0
                })
                .collect();
            ensure(blocks.len() == 8, || format!("{} blocks", blocks.len()))?;
            for step in comm(t, 0, Axis::Cp)
                .filter(|iv| iv.phase == Phase::Forward && iv.layer == 0 && iv.micro_batch == 0)
            {
                let before = blocks[step.chunk as usize - 1];
                ensure(overlaps(step, before), || format!("step {} not under its block", step.chunk))?;
            }
            Ok(())
        },
    },
    Claim {
        preset: "long-context-ring",
        text: "Switch CP overlap off and every step waits for its transfer.",
        check: |s| {
            let mut off = s.clone();
            off.overlap.cp = false;
            let (on, off) = (report(s), report(&off));
            let cp = off.axes.reported(Axis::Cp).cloned().expect("a cp axis");
            ensure(cp.hidden < 0.01 && off.step_time_ms > on.step_time_ms, || format!("{cp:?}"))
        },
    },
];

/// FSDP as its description says: on the simulated GPU, every layer's
/// parameters gathered twice per micro-batch (before its forward and its
/// backward) and its gradients reduce-scattered once after its backward,
/// with at least `hidden` of DP's time under compute.
fn fsdp_per_layer(s: &Scenario, hidden: f64) -> Outcome {
    let sim = simulate(s);
    let t = &sim.timeline;
    let layers = transformer(s).layers;
    for mb in 0..s.micro_batches() {
        let count = |op: OpKind, phase: Option<Phase>| {
            comm(t, 0, Axis::Dp)
                .filter(|iv| {
                    iv.op == op && iv.micro_batch == mb && phase.is_none_or(|p| iv.phase == p)
                })
                .count() as u32
        };
        let (gathers, scatters) = (
            count(OpKind::AllGather, None),
            count(OpKind::ReduceScatter, Some(Phase::Backward)),
        );
        ensure(gathers == 2 * layers && scatters == layers, || {
            format!("micro-batch {mb}: {gathers} gathers and {scatters} reduce-scatters for {layers} layers")
        })?;
    }
    let h = sim.report.axes.get(Axis::Dp).hidden;
    ensure(h >= hidden, || format!("{h} of DP hides"))
}

/// FSDP with one DP rank per node, across `nodes` nodes.
fn fsdp_across_nodes(s: &Scenario, nodes: u32) -> Outcome {
    ensure(
        s.parallel.dp == s.hardware.nodes
            && s.hardware.nodes == nodes
            && s.parallel.dp_sharding == DpSharding::Full,
        || format!("FSDP is not across the {nodes} nodes"),
    )
}
