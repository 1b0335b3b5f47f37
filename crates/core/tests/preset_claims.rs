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

#[path = "preset_claims/long_context.rs"]
mod long_context_claims;
#[path = "preset_claims/moe.rs"]
mod moe_claims;
#[path = "preset_claims/published.rs"]
mod published_claims;

/// Every claim: the didactic and mechanism presets' below, and each
/// family's in its module.
fn all_claims() -> impl Iterator<Item = &'static Claim> {
    CLAIMS
        .iter()
        .chain(published_claims::CLAIMS)
        .chain(long_context_claims::CLAIMS)
        .chain(moe_claims::CLAIMS)
}

/// The didactic and mechanism presets' claims (didactic, contention,
/// CoCoNet's, one queue).
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
];

#[test]
fn every_title_and_sentence_has_its_check() {
    for p in PRESETS {
        let mine: Vec<&str> = all_claims()
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
    for c in all_claims() {
        assert!(
            presets::find(c.preset).is_some(),
            "{}: no such preset",
            c.preset
        );
    }
}

#[test]
fn every_title_and_sentence_holds() {
    let failed: Vec<String> = all_claims()
        .filter_map(|c| {
            (c.check)(&preset(c.preset))
                .err()
                .map(|why| format!("{}: \"{}\": {why}", c.preset, c.text))
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
