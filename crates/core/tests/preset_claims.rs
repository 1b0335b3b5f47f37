//! What each preset's title and description tell a reader about its
//! scenario (the page shows both beside the preset picker), checked one
//! sentence at a time against the scenario and the simulator's figures.
//! `every_title_and_sentence_has_its_check` fails on a title or sentence
//! written without its check here, so a reworded description brings its
//! check along.

use overlap_core::model::op::{OpKind, Phase};
use overlap_core::model::scenario::{
    CpMode, Dispatcher, DpSharding, Mlp, Mode, Precision, Recompute, Schedule, Transformer,
    Workload,
};
use overlap_core::presets::{self, PRESETS};
use overlap_core::timeline::{Interval, Timeline};
use overlap_core::workload::build::schedule::merged_passes::merges_passes;
use overlap_core::workload::cost::moe::{all_to_all_traffic, EpPlacement};
use overlap_core::workload::cost::params::{active_params, model_params};
use overlap_core::{simulate, simulate_report, Axis, HardwarePreset, Report, Scenario};

type Outcome = Result<(), String>;

/// One title or one sentence of a description, and how it is checked.
struct Claim {
    preset: &'static str,
    text: &'static str,
    check: fn(&Scenario) -> Outcome,
}

fn ensure(ok: bool, why: impl FnOnce() -> String) -> Outcome {
    if ok {
        Ok(())
    } else {
        Err(why())
    }
}

/// The preset's mixture of experts.
fn moe(s: &Scenario) -> &overlap_core::scenario::Moe {
    transformer(s).moe.as_ref().expect("a mixture of experts")
}

/// One all-to-all's traffic from one rank of the preset.
fn ep_traffic(s: &Scenario) -> overlap_core::workload::cost::moe::AllToAllTraffic {
    let t = transformer(s);
    let ep = s.parallel.ep;
    let place = EpPlacement::of(ep, s.hardware.gpus_per_node);
    let tokens = f64::from(t.micro_batch * t.seq) / f64::from(s.parallel.tp);
    all_to_all_traffic(t, moe(s), ep, place, tokens)
}

fn transformer(s: &Scenario) -> &Transformer {
    match &s.workload {
        Workload::Transformer(t) => t,
        Workload::MatmulAllreduce(_) | Workload::Collective(_) => panic!("a transformer preset"),
    }
}

fn preset(id: &str) -> Scenario {
    presets::scenario(id).unwrap()
}

fn report(s: &Scenario) -> Report {
    simulate_report(s)
        .expect("a preset is within the limits")
        .report
}

/// The model's parameters, in billions, within `tolerance` (a fraction) of
/// the size a sentence states.
fn size_b(s: &Scenario, stated_b: f64, tolerance: f64) -> Outcome {
    let b = model_params(transformer(s)) / 1e9;
    ensure((b / stated_b - 1.0).abs() <= tolerance, || {
        format!("{b:.3}B, stated {stated_b}B")
    })
}

/// A paper's model at the size its paper names (the papers round).
fn named_size_b(s: &Scenario, stated_b: f64) -> Outcome {
    size_b(s, stated_b, 0.05)
}

/// `tp` x `pp` x `dp` on so many GPUs of the hardware preset.
fn layout(s: &Scenario, hw: HardwarePreset, gpus: u64, [tp, pp, dp]: [u32; 3]) -> Outcome {
    let p = &s.parallel;
    ensure(
        s.hardware_preset == hw && s.hardware.gpus() == gpus && (p.tp, p.pp, p.dp) == (tp, pp, dp),
        || {
            format!(
                "{:?} x {} GPUs, tp {} pp {} dp {}",
                s.hardware_preset,
                s.hardware.gpus(),
                p.tp,
                p.pp,
                p.dp
            )
        },
    )
}

/// TP fills each node: a TP group never leaves it.
fn tp_fills_node(s: &Scenario) -> Outcome {
    ensure(s.parallel.tp == s.hardware.gpus_per_node, || {
        format!(
            "tp {} on {} GPUs per node",
            s.parallel.tp, s.hardware.gpus_per_node
        )
    })
}

fn same_model(s: &Scenario, other: &str) -> Outcome {
    let other_scenario = preset(other);
    let (a, b) = (transformer(s), transformer(&other_scenario));
    ensure(
        (a.layers, a.hidden, a.heads, a.seq, a.vocab, a.micro_batch)
            == (b.layers, b.hidden, b.heads, b.seq, b.vocab, b.micro_batch),
        || format!("not {other}'s model"),
    )
}

/// Intervals of one axis on `gpu`, owned there.
fn comm(t: &Timeline, gpu: usize, axis: Axis) -> impl Iterator<Item = &Interval> {
    t.gpus[gpu].comm[axis.index()]
        .iter()
        .filter(move |iv| iv.owner as usize == gpu)
}

fn overlaps(a: &Interval, b: &Interval) -> bool {
    a.start_s < b.end_s && b.start_s < a.end_s
}

/// A GPU's micro-batches begun and not yet done at most, at a backward's
/// start: its forward started, its (last) backward op not ended.
fn most_in_flight(t: &Timeline, gpu: usize) -> usize {
    let compute = &t.gpus[gpu].compute;
    let first = |mb: u32, phase: Phase| {
        compute
            .iter()
            .filter(|iv| iv.micro_batch == mb && iv.phase == phase)
            .map(|iv| iv.start_s)
            .fold(f64::INFINITY, f64::min)
    };
    let last_end = |mb: u32| {
        compute
            .iter()
            .filter(|iv| iv.micro_batch == mb && iv.phase == Phase::Backward)
            .map(|iv| iv.end_s)
            .fold(0.0, f64::max)
    };
    // Micro-batches of the forwards (the optimizer step belongs to none).
    let mbs = compute
        .iter()
        .filter(|iv| iv.phase == Phase::Forward)
        .map(|iv| iv.micro_batch + 1)
        .max()
        .unwrap_or(0);
    (0..mbs)
        .map(|m| {
            let at = first(m, Phase::Backward);
            (0..mbs)
                .filter(|&k| first(k, Phase::Forward) <= at && last_end(k) > at)
                .count()
        })
        .max()
        .unwrap_or(0)
}

/// A weight gradient (W) of some micro-batch that starts after the
/// backward of a later micro-batch began on its GPU: W deferred.
fn w_deferred(t: &Timeline) -> bool {
    t.gpus.iter().any(|g| {
        g.compute
            .iter()
            .filter(|w| w.op.is_weight_gradient())
            .any(|w| {
                g.compute.iter().any(|b| {
                    b.phase == Phase::Backward
                        && !b.op.is_weight_gradient()
                        && b.micro_batch > w.micro_batch
                        && b.start_s < w.start_s
                })
            })
    })
}

const CLAIMS: &[Claim] = &[
    Claim {
        preset: "didactic",
        text: "Didactic: 3D parallel on two DGX A100",
        check: |s| layout(s, HardwarePreset::DgxA100, 16, [4, 2, 2]),
    },
    Claim {
        preset: "didactic",
        text: "TP 4 inside a node, PP 2 across the two nodes, DP 2 inside each node.",
        // A node holds one stage's TP groups of both replicas.
        check: |s| {
            layout(s, HardwarePreset::DgxA100, 16, [4, 2, 2])?;
            ensure(
                s.hardware.nodes == 2 && s.parallel.tp * s.parallel.dp == s.hardware.gpus_per_node,
                || "a stage does not fill a node".into(),
            )
        },
    },
    Claim {
        preset: "didactic",
        text: "Four micro-batches make every bar readable; in the last backward, TP's all-reduces and DP's \
               gradient buckets take turns on NVLink.",
        // DP 2 inside a node: its buckets cross NVLink, as TP's all-reduces do.
        check: |s| {
            ensure(s.micro_batches() == 4, || format!("{} micro-batches", s.micro_batches()))?;
            let sim = simulate(s);
            let t = &sim.timeline;
            let last = s.micro_batches() - 1;
            for g in 0..t.gpus.len() {
                let tp: Vec<&Interval> = comm(t, g, Axis::Tp)
                    .filter(|iv| iv.phase == Phase::Backward && iv.micro_batch == last)
                    .collect();
                let between = |dp: &Interval| {
                    tp.iter().any(|iv| iv.end_s <= dp.start_s) && tp.iter().any(|iv| iv.start_s >= dp.end_s)
                };
                let buckets: Vec<&Interval> = comm(t, g, Axis::Dp).filter(|dp| between(dp)).collect();
                ensure(!buckets.is_empty(), || format!("GPU {g}: no bucket between two TP all-reduces"))?;
                ensure(
                    buckets.iter().all(|dp| !tp.iter().any(|iv| overlaps(iv, dp))),
                    || format!("GPU {g}: a bucket and a TP all-reduce run at once"),
                )?;
            }
            Ok(())
        },
    },
    Claim {
        preset: "contention",
        text: "Contention: DP and PP share the NIC",
        check: |s| {
            let r = report(s);
            ensure(r.links.network.shared > 0.0, || "the network is never shared".into())
        },
    },
    Claim {
        preset: "contention",
        text: "All three overlaps on.",
        check: |s| ensure(s.overlap.tp && s.overlap.pp && s.overlap.dp, || "an overlap off".into()),
    },
    Claim {
        preset: "contention",
        text: "With the interleaved schedule the DP reduction of the later layers starts while the pipeline \
               still sends the earlier layers' activations and gradients: both cross the same InfiniBand port \
               and slow each other down, however well each hides behind compute.",
        check: |s| {
            ensure(s.parallel.schedule == Schedule::Interleaved, || "not interleaved".into())?;
            let sim = simulate(s);
            let r = &sim.report;
            let meet = (0..sim.timeline.gpus.len()).any(|g| {
                comm(&sim.timeline, g, Axis::Dp)
                    .any(|dp| comm(&sim.timeline, g, Axis::Pp).any(|pp| overlaps(dp, pp)))
            });
            ensure(meet, || "no DP collective beside a pipeline send".into())?;
            let (pp, dp) = (r.axes.get(Axis::Pp), r.axes.get(Axis::Dp));
            ensure(pp.contention_ms > 0.0 && dp.contention_ms > 0.0, || {
                format!("contention PP {} ms, DP {} ms", pp.contention_ms, dp.contention_ms)
            })?;
            ensure(pp.hidden > 0.0 && dp.hidden > 0.0, || "an axis hides nothing".into())
        },
    },
    Claim {
        preset: "coconet",
        text: "CoCoNet: MatMul + AllReduce on a DGX-2",
        check: |s| {
            ensure(matches!(s.workload, Workload::MatmulAllreduce(_)), || "not the micro-benchmark".into())?;
            ensure(
                s.hardware_preset == HardwarePreset::Dgx2V100 && s.hardware.nodes == 1,
                || "not one DGX-2".into(),
            )
        },
    },
    Claim {
        preset: "coconet",
        text: "GPT-2 8.3B's model-parallel MLP GEMM over 16 V100s, then the AllReduce of its output.",
        // The row-parallel MLP GEMM of hidden 3072: k is the 4h inner width split 16 ways.
        check: |s| {
            let Workload::MatmulAllreduce(m) = &s.workload else {
                return Err("not the micro-benchmark".into());
            };
            ensure(s.parallel.tp == 16 && m.n == 3072 && m.k * 16 == 4 * 3072, || {
                format!("tp {}, n {}, k {}", s.parallel.tp, m.n, m.k)
            })
        },
    },
    Claim {
        preset: "coconet",
        text: "Chunking the GEMM lets chunk i's AllReduce run under chunk i+1 (Jangda et al. 2021).",
        check: |s| {
            ensure(s.overlap.tp && s.overlap.tp_chunks > 1, || "no chunked overlap".into())?;
            let sim = simulate(s);
            let t = &sim.timeline;
            let under = comm(t, 0, Axis::Tp).any(|ar| {
                t.gpus[0]
                    .compute
                    .iter()
                    .any(|gemm| gemm.chunk == ar.chunk + 1 && overlaps(ar, gemm))
            });
            ensure(under, || "no AllReduce chunk under the next GEMM chunk".into())
        },
    },
    Claim {
        preset: "megatron-1.7b",
        text: "Megatron-LM 1.7B on 32 A100",
        check: |s| {
            named_size_b(s, 1.7)?;
            ensure(s.hardware_preset == HardwarePreset::DgxA100 && s.hardware.gpus() == 32, || {
                "not 32 A100".into()
            })
        },
    },
    Claim {
        preset: "megatron-1.7b",
        text: "Narayanan et al. 2021, Table 1, first row: data parallelism only.",
        check: |s| layout(s, HardwarePreset::DgxA100, 32, [1, 1, 32]),
    },
    Claim {
        preset: "megatron-18.4b",
        text: "Megatron-LM 18.4B on 256 A100",
        check: |s| {
            named_size_b(s, 18.4)?;
            layout(s, HardwarePreset::DgxA100, 256, [8, 1, 32])
        },
    },
    Claim {
        preset: "megatron-18.4b",
        text: "Narayanan et al. 2021, Table 1: TP 8 inside each node, DP 32 across nodes.",
        check: |s| {
            layout(s, HardwarePreset::DgxA100, 256, [8, 1, 32])?;
            tp_fills_node(s)
        },
    },
    Claim {
        preset: "megatron-145.6b",
        text: "Megatron-LM 145.6B on 1536 A100",
        check: |s| {
            named_size_b(s, 145.6)?;
            layout(s, HardwarePreset::DgxA100, 1536, [8, 8, 24])
        },
    },
    Claim {
        preset: "megatron-145.6b",
        text: "Narayanan et al. 2021, Table 1: TP 8, PP 8, DP 24.",
        check: |s| layout(s, HardwarePreset::DgxA100, 1536, [8, 8, 24]),
    },
    Claim {
        preset: "megatron-1t",
        text: "Megatron-LM 1T on 3072 A100",
        check: |s| {
            named_size_b(s, 1000.0)?;
            layout(s, HardwarePreset::DgxA100, 3072, [8, 64, 6])
        },
    },
    Claim {
        preset: "megatron-1t",
        text: "Narayanan et al. 2021, Table 1, last row: TP 8 x PP 64, 512 micro-batches per pipeline.",
        check: |s| {
            layout(s, HardwarePreset::DgxA100, 3072, [8, 64, 6])?;
            ensure(s.micro_batches() == 512, || format!("{} micro-batches", s.micro_batches()))
        },
    },
    Claim {
        preset: "korthikanti-22b-full",
        text: "22B, full recomputation (Korthikanti et al.)",
        check: |s| {
            named_size_b(s, 22.0)?;
            full_recompute(s)
        },
    },
    Claim {
        preset: "korthikanti-22b-full",
        text: "Korthikanti et al. 2022, Table 5: 22B on one DGX A100, TP 8, full recomputation.",
        check: |s| {
            named_size_b(s, 22.0)?;
            layout(s, HardwarePreset::DgxA100, 8, [8, 1, 1])?;
            full_recompute(s)
        },
    },
    Claim {
        preset: "korthikanti-22b-seqsel",
        text: "22B, sequence parallel + selective recomputation",
        check: |s| {
            named_size_b(s, 22.0)?;
            sequence_parallel_selective(s)
        },
    },
    Claim {
        preset: "korthikanti-22b-seqsel",
        text: "Korthikanti et al. 2022, Table 5: the same 22B model with sequence parallelism and selective \
               recomputation.",
        check: |s| {
            same_model(s, "korthikanti-22b-full")?;
            layout(s, HardwarePreset::DgxA100, 8, [8, 1, 1])?;
            sequence_parallel_selective(s)
        },
    },
    Claim {
        preset: "korthikanti-175b-full",
        text: "175B, full recomputation (Korthikanti et al.)",
        check: |s| {
            named_size_b(s, 175.0)?;
            full_recompute(s)
        },
    },
    Claim {
        preset: "korthikanti-175b-full",
        text: "Korthikanti et al. 2022, Table 5: GPT-3 175B on 64 A100, TP 8, PP 8, interleaved with 3 \
               virtual stages, full recomputation.",
        check: |s| {
            named_size_b(s, 175.0)?;
            layout(s, HardwarePreset::DgxA100, 64, [8, 8, 1])?;
            ensure(
                s.parallel.schedule == Schedule::Interleaved
                    && s.parallel.virtual_stages == 3
                    && transformer(s).recompute == Recompute::Full,
                || "not interleaved over 3 virtual stages with full recomputation".into(),
            )
        },
    },
    Claim {
        preset: "korthikanti-175b-seqsel",
        text: "175B, sequence parallel + selective recomputation",
        check: |s| {
            named_size_b(s, 175.0)?;
            sequence_parallel_selective(s)
        },
    },
    Claim {
        preset: "korthikanti-175b-seqsel",
        text: "Korthikanti et al. 2022, Table 5: GPT-3 175B with sequence parallelism and selective \
               recomputation.",
        check: |s| {
            same_model(s, "korthikanti-175b-full")?;
            sequence_parallel_selective(s)
        },
    },
    Claim {
        preset: "zb-1.5b-24",
        text: "Zero bubble: 1.5B on 8 A100, 1F1B, 24 micro-batches",
        check: |s| {
            zb_model(s, 1.648)?;
            zb_row(s, Schedule::OneFOneB, 24)
        },
    },
    Claim {
        preset: "zb-1.5b-24",
        text: "Qi et al. 2024, Table 3: a GPT-3-like 1.5B model in a pipeline of 8 GPUs.",
        check: |s| {
            zb_model(s, 1.648)?;
            layout(s, HardwarePreset::DgxA100, 8, [1, 8, 1])
        },
    },
    Claim {
        preset: "zb-1.5b-24",
        text: "Switch the schedule to zb-1p or zb-2p and watch W, the weight gradient, move into the bubble.",
        check: |s| {
            let before = simulate(s);
            ensure(!w_deferred(&before.timeline), || "1F1B already defers W".into())?;
            for schedule in [Schedule::ZeroBubble1p, Schedule::ZeroBubble2p] {
                let mut zb = s.clone();
                zb.parallel.schedule = schedule;
                let after = simulate(&zb);
                ensure(w_deferred(&after.timeline), || format!("{schedule:?} defers no W"))?;
                ensure(
                    after.report.bubble_fraction < before.report.bubble_fraction,
                    || {
                        format!(
                            "{schedule:?}: bubble {} against 1F1B's {}",
                            after.report.bubble_fraction, before.report.bubble_fraction
                        )
                    },
                )?;
            }
            Ok(())
        },
    },
    Claim {
        preset: "zb-1.5b-24-zb2p",
        text: "Zero bubble: the same 1.5B model with ZB-2p",
        check: |s| {
            same_model(s, "zb-1.5b-24")?;
            zb_row(s, Schedule::ZeroBubble2p, 24)
        },
    },
    Claim {
        preset: "zb-1.5b-24-zb2p",
        text: "The 1.5B model of the 1F1B preset with ZB-2p: twice the micro-batches in flight fill the \
               warm-up and cool-down with forwards and deferred weight gradients, for about twice the \
               activation memory.",
        check: |s| {
            same_model(s, "zb-1.5b-24")?;
            let (zb, one) = (simulate(s), simulate(&preset("zb-1.5b-24")));
            // On the first stage, where most are in flight: 2p against p.
            let (n_zb, n_one) = (most_in_flight(&zb.timeline, 0), most_in_flight(&one.timeline, 0));
            ensure(n_zb == 2 * n_one, || format!("{n_zb} in flight against {n_one}"))?;
            ensure(w_deferred(&zb.timeline), || "no W deferred".into())?;
            let ratio = zb.report.memory_gb.activations / one.report.memory_gb.activations;
            ensure((1.8..=2.2).contains(&ratio), || format!("activations {ratio:.2}x"))
        },
    },
    Claim {
        preset: "zb-1.5b-64",
        text: "Zero bubble: 1.5B on 8 A100, 1F1B, 64 micro-batches",
        check: |s| {
            zb_model(s, 1.648)?;
            zb_row(s, Schedule::OneFOneB, 64)
        },
    },
    Claim {
        preset: "zb-1.5b-64",
        text: "Qi et al. 2024, Table 3: the 1.5B model with 64 micro-batches, where the bubble is a smaller \
               share of the step.",
        check: |s| {
            same_model(s, "zb-1.5b-24")?;
            ensure(s.micro_batches() == 64, || format!("{} micro-batches", s.micro_batches()))?;
            let (b64, b24) = (
                report(s).bubble_fraction,
                report(&preset("zb-1.5b-24")).bubble_fraction,
            );
            ensure(b64 < b24, || format!("bubble {b64} with 64 against {b24} with 24"))
        },
    },
    Claim {
        preset: "zb-6.2b-24",
        text: "Zero bubble: 6.2B on 8 A100, 1F1B, 24 micro-batches",
        check: |s| {
            zb_model(s, 6.654)?;
            zb_row(s, Schedule::OneFOneB, 24)
        },
    },
    Claim {
        preset: "zb-6.2b-24",
        text: "Qi et al. 2024, Table 3: a GPT-3-like 6.2B model in a pipeline of 8 GPUs.",
        check: |s| {
            zb_model(s, 6.654)?;
            layout(s, HardwarePreset::DgxA100, 8, [1, 8, 1])
        },
    },
    Claim {
        preset: "zb-6.2b-64",
        text: "Zero bubble: 6.2B on 8 A100, 1F1B, 64 micro-batches",
        check: |s| {
            zb_model(s, 6.654)?;
            zb_row(s, Schedule::OneFOneB, 64)
        },
    },
    Claim {
        preset: "zb-6.2b-64",
        text: "Qi et al. 2024, Table 3: the 6.2B model with 64 micro-batches.",
        check: |s| {
            same_model(s, "zb-6.2b-24")?;
            ensure(s.micro_batches() == 64, || format!("{} micro-batches", s.micro_batches()))
        },
    },
    Claim {
        preset: "one-queue",
        text: "Overlap on, over a third of it exposed: one hardware queue",
        check: |s| {
            ensure(s.overlap.dp && s.hardware.max_connections == 1, || {
                "not DP overlap on one queue".into()
            })?;
            // Measured 0.622: the gathers held at the head of the queue.
            let hidden = report(s).axes.get(Axis::Dp).hidden;
            ensure((0.55..0.67).contains(&hidden), || format!("{hidden} of DP hides"))
        },
    },
    Claim {
        preset: "one-queue",
        text: "Megatron-LM issue 1468's shape on a 6.7B GPT (the issue's model has 8B): TP 1, DP 64, the \
               distributed optimizer with --overlap-grad-reduce and --overlap-param-gather, but \
               CUDA_DEVICE_MAX_CONNECTIONS=1.",
        check: |s| {
            size_b(s, 6.7, 0.01)?;
            ensure(transformer(s).mlp == Mlp::Gelu, || "not a GPT".into())?;
            layout(s, HardwarePreset::DgxH100, 64, [1, 1, 64])?;
            ensure(
                s.parallel.dp_sharding == DpSharding::Optimizer && s.overlap.param_gather,
                || "not the distributed optimizer with its gathers overlapped".into(),
            )?;
            ensure(s.overlap.dp && s.hardware.max_connections == 1, || {
                "not DP overlap on one queue".into()
            })
        },
    },
    Claim {
        preset: "one-queue",
        text: "Kernels start in launch order: the parameter gathers, launched as the step starts, hold the \
               forward behind them, while each gradient reduce-scatter, launched ahead of the next backward \
               GEMM, runs beside it.",
        check: |s| {
            let sim = simulate(s);
            let t = &sim.timeline;
            let compute = &t.gpus[0].compute;
            let gathers: Vec<&Interval> = comm(t, 0, Axis::Dp)
                .filter(|iv| iv.op == OpKind::AllGather)
                .collect();
            ensure(gathers.len() > 1, || format!("{} gathers", gathers.len()))?;
            let first = compute.first().expect("a step computes").start_s;
            let held_until = gathers[gathers.len() - 2].end_s;
            ensure(first >= held_until, || {
                format!("the forward starts at {first} s, before the gathers end at {held_until} s")
            })?;
            let scatters: Vec<&Interval> = comm(t, 0, Axis::Dp)
                .filter(|iv| iv.op == OpKind::ReduceScatter)
                .collect();
            ensure(scatters.len() > 1, || format!("{} reduce-scatters", scatters.len()))?;
            let last_backward = compute
                .iter()
                .filter(|c| c.phase == Phase::Backward)
                .map(|c| c.start_s)
                .fold(0.0, f64::max);
            for rs in scatters {
                let beside = compute
                    .iter()
                    .any(|c| c.phase == Phase::Backward && c.start_s == rs.start_s);
                ensure(beside || rs.start_s > last_backward, || {
                    format!("the reduce-scatter at {} s starts beside no backward GEMM", rs.start_s)
                })?;
            }
            Ok(())
        },
    },
    Claim {
        preset: "one-queue",
        text: "Set max_connections to 8 and the gathers hide behind the forward.",
        check: |s| {
            let mut eight = s.clone();
            eight.hardware.max_connections = 8;
            let hidden = report(&eight).axes.get(Axis::Dp).hidden;
            ensure(hidden > 0.9, || format!("8 queues hide {hidden}"))
        },
    },
    Claim {
        preset: "coconet-inference",
        text: "CoCoNet: GPT-2 8.3B inference across two DGX-2",
        check: |s| {
            named_size_b(s, 8.3)?;
            ensure(transformer(s).mode == Mode::Inference, || "not inference".into())?;
            ensure(
                s.hardware_preset == HardwarePreset::Dgx2V100 && s.hardware.nodes == 2,
                || "not two DGX-2".into(),
            )
        },
    },
    Claim {
        preset: "coconet-inference",
        text: "Megatron-LM's GPT-2 8.3B, forward only: TP 16 inside each DGX-2, two pipeline stages, one per \
               node.",
        check: |s| {
            named_size_b(s, 8.3)?;
            ensure(transformer(s).mode == Mode::Inference, || "not inference".into())?;
            layout(s, HardwarePreset::Dgx2V100, 32, [16, 2, 1])?;
            tp_fills_node(s)
        },
    },
    Claim {
        preset: "coconet-inference",
        text: "CoCoNet's three moves are on: chunked GEMM + AllReduce, the stage boundary sliced and \
               pipelined (ReduceScatter, 1/16 slices over each NIC, AllGather), and the AllReduce fused with \
               the bias, dropout and residual add (Jangda et al. 2021).",
        check: |s| {
            let o = &s.overlap;
            ensure(o.tp && o.tp_chunks > 1 && o.pp_chunks > 1 && o.fuse && s.parallel.scatter_gather, || {
                "a move is off".into()
            })?;
            let sim = simulate(s);
            let boundary: Vec<OpKind> = sim
                .timeline
                .gpus
                .iter()
                .flat_map(|g| g.comm.iter().flatten())
                .filter(|iv| iv.micro_batch == 0)
                .map(|iv| iv.op)
                .collect();
            ensure(
                boundary.contains(&OpKind::ReduceScatter) && boundary.contains(&OpKind::AllGather),
                || "no ReduceScatter and AllGather at the boundary".into(),
            )
        },
    },
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
            ensure(
                s.parallel.dp == s.hardware.nodes
                    && s.hardware.nodes == 8
                    && s.parallel.dp_sharding == DpSharding::Full,
                || "FSDP is not across the 8 nodes".into(),
            )
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
            ensure(
                s.parallel.dp == s.hardware.nodes
                    && s.hardware.nodes == 32
                    && s.parallel.dp_sharding == DpSharding::Full,
                || "FSDP is not across the 32 nodes".into(),
            )
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

/// A row of Qi et al.'s Table 3 as the presets build it: 8 A100, the
/// schedule, so many micro-batches.
fn zb_row(s: &Scenario, schedule: Schedule, micro_batches: u32) -> Outcome {
    layout(s, HardwarePreset::DgxA100, 8, [1, 8, 1])?;
    ensure(
        s.parallel.schedule == schedule && s.micro_batches() == micro_batches,
        || {
            format!(
                "{:?} at {} micro-batches",
                s.parallel.schedule,
                s.micro_batches()
            )
        },
    )
}

/// The zero-bubble presets' models, at `billions` parameters: GPT-3-like. The
/// paper's 1.5B and 6.2B models have 22 and 30 layers, their first and last
/// stage one fewer; the presets give every stage 3 and 4 (24 and 32
/// layers, docs/validation.md), which makes them 1.648B and 6.654B: pinned
/// there, above the names' 5%.
fn zb_model(s: &Scenario, billions: f64) -> Outcome {
    ensure(transformer(s).mlp == Mlp::Gelu, || "not GPT-3-like".into())?;
    size_b(s, billions, 0.002)
}

fn full_recompute(s: &Scenario) -> Outcome {
    ensure(transformer(s).recompute == Recompute::Full, || {
        "not full recomputation".into()
    })
}

fn sequence_parallel_selective(s: &Scenario) -> Outcome {
    let t = transformer(s);
    ensure(
        t.sequence_parallel && t.recompute == Recompute::Selective,
        || "not sequence parallel with selective recomputation".into(),
    )
}

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

#[test]
fn every_title_and_sentence_has_its_check() {
    for p in PRESETS {
        let mine: Vec<&str> = CLAIMS
            .iter()
            .filter(|c| c.preset == p.id)
            .map(|c| c.text)
            .collect();
        let (title, sentences) = mine
            .split_first()
            .unwrap_or_else(|| panic!("{}: no claims", p.id));
        assert_eq!(*title, p.title, "{}: the title's check", p.id);
        assert_eq!(
            sentences.join(" "),
            p.description,
            "{}: one check per sentence, in order",
            p.id
        );
    }
    for c in CLAIMS {
        assert!(
            presets::find(c.preset).is_some(),
            "{}: no such preset",
            c.preset
        );
    }
}

#[test]
fn every_title_and_sentence_holds() {
    let failed: Vec<String> = CLAIMS
        .iter()
        .filter_map(|c| {
            (c.check)(&preset(c.preset))
                .err()
                .map(|why| format!("{}: \"{}\": {why}", c.preset, c.text))
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
