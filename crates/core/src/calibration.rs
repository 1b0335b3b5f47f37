//! The interference model (model.md section 3) against the public
//! measurements of published.md section 4. Each case is simulated by the
//! engine with the same global constants as every scenario; none of them is
//! fitted to these figures.

use crate::collective::Collective;
use crate::input::parse::parse_scenario;
use crate::input::presets;
use crate::model::axis::Axis;
use crate::model::scenario::{Interference, Scenario};
use crate::workload::cost::layer_cost::layer_cost;
use crate::workload::cost::roofline::Roofline;
use crate::workload::graph::interference::{kernel_beside_ring, Modelled, Sharing};
use crate::{simulate, Fidelity};

/// One simulated figure next to its public counterpart.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// What is measured.
    pub case: &'static str,
    /// Where the public figure comes from.
    pub source: &'static str,
    /// The public figure.
    pub published: f64,
    /// The model's figure.
    pub simulated: f64,
    /// How the figure is read.
    pub note: &'static str,
    /// Where the model is known to miss the figure, and why.
    pub gap: Option<KnownGap>,
}

/// A figure the model does not reach honestly (published.md: such a case
/// stays visible, marked as expected to fail, with its reason): the
/// simulated figure is pinned in a narrow band, so that any change of the
/// model that moves it is seen, towards the published figure or away.
#[derive(Clone, Debug, PartialEq)]
pub struct KnownGap {
    /// The simulated figure's pinned range.
    pub pinned: (f64, f64),
    /// What the model lacks that the measurement has.
    pub reason: &'static str,
}

impl Calibration {
    /// The range published.md's rule ("within 10% of the published figure
    /// unless a row says otherwise") accepts for the simulated figure: none
    /// of these sources states a spread of its own.
    pub fn tolerance(&self) -> (f64, f64) {
        (
            self.published * (1.0 - crate::published::TOLERANCE),
            self.published * (1.0 + crate::published::TOLERANCE),
        )
    }

    /// Whether the simulated figure lies within the source's tolerance.
    pub fn within_tolerance(&self) -> bool {
        let (lo, hi) = self.tolerance();
        (lo..=hi).contains(&self.simulated)
    }

    /// Whether the case holds: within tolerance, or a known gap still at
    /// its pinned figure and still outside the tolerance (a gap that
    /// closes is promoted, not left pinned).
    pub fn holds(&self) -> bool {
        match &self.gap {
            None => self.within_tolerance(),
            Some(g) => {
                (g.pinned.0..=g.pinned.1).contains(&self.simulated) && !self.within_tolerance()
            }
        }
    }
}

/// A kernel of `time_s` on GPU 0 of one DGX A100, of which `memory_s` is
/// memory-bound, alone and beside an AllGather over the node's eight GPUs
/// (NCCL issue 1428's setting): its duration with and without the
/// collective, in seconds.
fn kernel_beside_allgather(time_s: f64, memory_s: f64) -> (f64, f64) {
    let s = parse_scenario(
        r#"{"hardware":{"preset":"dgx-a100","nodes":1},
            "workload":{"kind":"matmul_allreduce"},"parallel":{"tp":8}}"#,
    )
    .expect("the calibration scenario is valid");
    let sharing = Sharing::of(&s);
    // Long enough to cover the kernel however slow it gets.
    let bytes = Collective::AllGather.bytes_per_rank(8, 8e9);
    let run = |with_collective: bool| {
        let axes: &[Axis] = if with_collective { &[Axis::Tp] } else { &[] };
        let (g, kernel) = kernel_beside_ring(&s, time_s, memory_s, axes, bytes);
        let r = crate::sim::engine::run(&g, false, &sharing);
        r.end_s[kernel as usize] - r.start_s[kernel as usize]
    };
    (run(false), run(true))
}

/// Share of the attention core's time that is memory-bound, on the default
/// preset's layer on A100: the model's own split, not a fitted one.
fn attention_memory_share() -> f64 {
    let s = presets::scenario(presets::DEFAULT_ID).expect("the default preset resolves");
    let crate::model::scenario::Workload::Transformer(t) = &s.workload else {
        return 0.0;
    };
    let c = layer_cost(
        t,
        s.parallel.tp,
        s.parallel.cp,
        &Roofline::of(&s.hardware, s.hardware_preset),
    );
    c.attention.memory_s / c.attention.time_s
}

/// Compute slowdown of the ops that overlap communication and the gain of
/// overlapping, over presets with every overlap on (arXiv 2507.03114's
/// measurement): mean and largest slowdown of the slowed ops, and the mean
/// of baseline / step - 1.
fn overlapped_compute_slowdown() -> (f64, f64, f64) {
    let cases = ["didactic", "contention"];
    let (mut slowed, mut free, mut largest, mut gain) = (0.0, 0.0, 0.0f64, 0.0);
    for id in cases {
        let modelled: Scenario = presets::scenario(id).expect("preset resolves");
        let mut off = modelled.clone();
        off.interference = Interference::Off;
        let (m, f) = (simulate(&modelled), simulate(&off));
        for (gm, gf) in m.timeline.gpus.iter().zip(&f.timeline.gpus) {
            for (a, b) in gm.compute.iter().zip(&gf.compute) {
                let (dm, df) = (a.end_s - a.start_s, b.end_s - b.start_s);
                if df > 0.0 && dm > df * (1.0 + 1e-9) {
                    slowed += dm;
                    free += df;
                    largest = largest.max(dm / df - 1.0);
                }
            }
        }
        gain += m.report.speedup - 1.0;
    }
    let mean = if free > 0.0 { slowed / free - 1.0 } else { 0.0 };
    (mean, largest, gain / cases.len() as f64)
}

/// coconet issue 6's setting: the CoCoNet GEMM and its AllReduce on eight
/// V100s with NCCL on 24 channels, in sequence and overlapped (best chunk
/// count): overlapped / sequential.
fn coconet_issue_6_ratio() -> f64 {
    let s = parse_scenario(
        r#"{"hardware":{"preset":"dgx2-v100","nodes":1,"gpus_per_node":8},
            "workload":{"kind":"matmul_allreduce","m":24576,"n":3072,"k":768},
            "parallel":{"tp":8},"overlap":{"tp":true}}"#,
    )
    .expect("the calibration scenario is valid");
    let sharing = Sharing::Modelled(Modelled {
        sms: s.hardware.sms,
        hbm_bps: s.hardware.hbm_achievable_bps(),
        channels_override: Some(24),
    });
    let step = |s: &Scenario| {
        let g = crate::workload::build(
            s,
            Fidelity::Reduced,
            0,
            &crate::collective::Libraries::of(s),
        );
        crate::sim::engine::run(&g, false, &sharing).step_time_s
    };
    let sequential = step(&s.all_overlap_off());
    let overlapped = crate::published::CHUNK_CHOICES
        .iter()
        .map(|&chunks| {
            let mut o = s.clone();
            o.overlap.tp_chunks = chunks;
            step(&o)
        })
        .fold(f64::INFINITY, f64::min);
    overlapped / sequential
}

/// A known gap pinned at the figure the model gave when the gap was
/// recorded, 2% either side: narrow enough that any change of the mechanism
/// behind it shows.
fn pinned(recorded: f64, reason: &'static str) -> Option<KnownGap> {
    Some(KnownGap {
        pinned: (recorded * 0.98, recorded * 1.02),
        reason,
    })
}

/// Every calibration figure of the interference model, each with the
/// figure the model reaches today pinned where it misses (`KnownGap`).
pub fn interference_cases() -> Vec<Calibration> {
    const ISSUE_1428: &str = "NVIDIA/nccl issue 1428 (A100-SXM4-80GB, beside an AllGather)";
    // The measured slowdowns of issue 1428 are larger than SM and HBM
    // sharing alone gives: the GEMM keeps 92 of 108 SMs (16 channels), and
    // the model gives a compute-bound kernel no HBM or L2 contention.
    const SMS_ONLY: &str =
        "the model slows a compute-bound kernel only by the SMs the AllGather's \
        16 channels hold (16 of 108); the rest of the measured slowdown (L2 and HBM traffic of the \
        GEMM beside the copy) is not modelled";
    let mut out = Vec::new();
    let (alone, beside) = kernel_beside_allgather(1.18e-3, 0.0);
    let gemm = 1.18 * beside / alone;
    out.push(Calibration {
        case: "GEMM beside an AllGather, ms",
        source: ISSUE_1428,
        published: 2.08,
        simulated: gemm,
        note: "1.18 ms alone",
        gap: pinned(1.385, SMS_ONLY),
    });
    let share = attention_memory_share();
    let (alone, beside) = kernel_beside_allgather(0.18e-3, 0.18e-3 * share);
    let attention = 0.18 * beside / alone;
    out.push(Calibration {
        case: "attention beside an AllGather, ms",
        source: ISSUE_1428,
        published: 0.33,
        simulated: attention,
        note: "0.18 ms alone; memory-bound share of the attention core as the model splits it",
        gap: pinned(0.238, SMS_ONLY),
    });
    let (alone, beside) = kernel_beside_allgather(0.02e-3, 0.02e-3);
    let elementwise = 0.02 * beside / alone;
    out.push(Calibration {
        case: "elementwise beside an AllGather, ms",
        source: ISSUE_1428,
        published: 0.05,
        simulated: elementwise,
        note: "0.02 ms alone; HBM shared max-min: 2 HBM bytes per link byte for an AllGather (copying)",
        gap: pinned(
            0.0273,
            "the measured 2.5x slowdown of a 20 us kernel is more than sharing HBM max-min with the \
             AllGather's 2 bytes per link byte gives; the copy's L2 pressure is not modelled"),
    });
    let (mean, largest, gain) = overlapped_compute_slowdown();
    const ARXIV: &str = "arXiv 2507.03114 (A100, H100, MI250, MI210)";
    // The paper measures GPT and LLaMA training on four GPUs; the model's
    // figures come from its own didactic and contention presets, with the
    // same gap for compute-bound kernels as issue 1428's GEMM.
    out.push(Calibration {
        case: "overlapped compute slowdown, mean %",
        source: ARXIV,
        published: 18.9,
        simulated: mean * 100.0,
        note: "slowed compute ops of the didactic and contention presets",
        // 9.664 before the SM race (model.md 3b): with a queue per stream
        // a collective ready with a GEMM now starts when the GEMM's first
        // wave drains, so that wave runs at full speed.
        gap: pinned(
            4.134,
            "most slowed time is GEMMs, which the model slows only by the waves the channels' SMs add (see issue 1428's GEMM), \
             and a collective ready with a GEMM on another queue starts after the GEMM's first wave (the SM race)",
        ),
    });
    out.push(Calibration {
        case: "overlapped compute slowdown, largest %",
        source: ARXIV,
        published: 40.0,
        simulated: largest * 100.0,
        note: "the most slowed op: a weight-gradient GEMM beside a collective",
        // 73.66 before the SM race: the GEMM whose one wave needed a second
        // beside the collective now runs that wave before the collective
        // starts.
        gap: pinned(
            24.50,
            "the most slowed op is a GEMM whose waves stretch beside the collective's channels (wave \
             quantisation); the paper's largest case is another workload",
        ),
    });
    out.push(Calibration {
        case: "sequential slower than overlapped, mean %",
        source: ARXIV,
        published: 10.2,
        simulated: gain * 100.0,
        note: "baseline / step - 1 of the same presets: overlap still pays",
        // 15.92 before the SM race; 12.90 before pipeline sends waited for
        // their receives (the contention preset's interleaved baseline now
        // sends each steady forward's output with the backward after it,
        // as Megatron-LM's schedule does: 2.97% slower).
        gap: pinned(
            14.79,
            "compute slowed less than measured (the rows above) leaves overlap worth more, and the sequential \
             baselines' blocking pipeline sends wait for their receives (an interleaved one sends each forward's \
             output after the backward beside it); the paper's maximum is 26.6%",
        ),
    });
    let ratio = coconet_issue_6_ratio();
    out.push(Calibration {
        case: "overlapped / sequential, 8 V100, 24 channels",
        source: "coconet issue 6 (157 -> 207 ms)",
        published: 207.0 / 157.0,
        simulated: ratio,
        note: "best chunk count; the issue's overlapped run uses CoCoNet's CUTLASS GEMM, its sequential one cuBLAS",
        gap: pinned(
            0.688,
            "the issue's own breakdown: beside each other the GEMM took 109.8 ms (cuBLAS alone 49.0) and the \
             AllReduce 206.4 ms (alone 106.6), so each ran at half speed; the model slows the GEMM by the waves \
             the 24 of 80 SMs the channels hold add, and a GEMM takes no HBM from the AllReduce, so overlap still wins",
        ),
    });
    out
}

/// The calibration figures as a Markdown table.
pub fn table() -> String {
    let mut out = String::from(
        "| case | source | published | simulated | within 10% | known gap: pinned at | note |\n|---|---|---|---|---|---|---|\n",
    );
    for c in interference_cases() {
        let gap = match &c.gap {
            Some(g) => format!("{:.3} to {:.3}: {}", g.pinned.0, g.pinned.1, g.reason),
            None => "-".to_string(),
        };
        out += &format!(
            "| {} | {} | {:.3} | {:.3} | {} | {} | {} |\n",
            c.case,
            c.source,
            c.published,
            c.simulated,
            if c.within_tolerance() { "yes" } else { "no" },
            gap,
            c.note
        );
    }
    out
}
