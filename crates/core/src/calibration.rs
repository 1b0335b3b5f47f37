//! The interference model (model.md section 3) against the public
//! measurements of published.md section 4. Each case is simulated by the
//! engine with the same global constants as every scenario; none of them is
//! fitted to these figures.

use crate::input::parse::parse_scenario;
use crate::input::presets;
use crate::model::axis::Axis;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::{Interference, Scenario};
use crate::workload::collective::Collective;
use crate::workload::graph::{Graph, Meta};
use crate::workload::interference::{Modelled, Sharing};
use crate::workload::layer_cost::{layer_cost, Roofline};
use crate::workload::Cluster;
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
    /// The range the test accepts for the simulated figure, with its reason
    /// in `note`.
    pub band: (f64, f64),
    /// How the figure is read, and any known gap.
    pub note: &'static str,
}

impl Calibration {
    /// Whether the simulated figure lies in its band.
    pub fn within_band(&self) -> bool {
        (self.band.0..=self.band.1).contains(&self.simulated)
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
    let run = |with_collective: bool| {
        let mut g = Graph::default();
        let cluster = Cluster::new(&mut g, &s, Fidelity::Full);
        let members: Vec<u32> = (0..8).map(|k| cluster.gpu(0, 0, k)).collect();
        let pattern = cluster.nvlink_ring(&mut g, &members);
        let meta = Meta::new(OpKind::Gemm, Phase::Forward);
        let kernel = g.compute(members[0], time_s, memory_s, 0.0, meta);
        if with_collective {
            // Long enough to cover the kernel however slow it gets.
            let bytes = Collective::AllGather.bytes_per_rank(8, 8e9);
            g.comm(
                &members,
                Axis::Tp as u8,
                pattern,
                bytes,
                0.0,
                meta.op(OpKind::AllGather),
            );
        }
        g.finish();
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
    let c = layer_cost(t, s.parallel.tp, s.parallel.cp, &Roofline::of(&s.hardware));
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
        hbm_bps: s.hardware.hbm_gbps * 1e9,
        channels_override: Some(24),
    });
    let step = |s: &Scenario| {
        let g = crate::workload::build(s, Fidelity::Reduced, 0);
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

/// Every calibration figure of the interference model.
pub fn interference_cases() -> Vec<Calibration> {
    const ISSUE_1428: &str = "NVIDIA/nccl issue 1428 (A100-SXM4-80GB, beside an AllGather)";
    let mut out = Vec::new();
    let (alone, beside) = kernel_beside_allgather(1.18e-3, 0.0);
    out.push(Calibration {
        case: "GEMM beside an AllGather, ms",
        source: ISSUE_1428,
        published: 2.08,
        simulated: 1.18 * beside / alone,
        band: (1.18 * 1.1, 2.08),
        note: "SMs only: 16 of 108 SMs taken; the measured rest (HBM and L2 traffic of a GEMM) is not modelled",
    });
    let share = attention_memory_share();
    let (alone, beside) = kernel_beside_allgather(0.18e-3, 0.18e-3 * share);
    out.push(Calibration {
        case: "attention beside an AllGather, ms",
        source: ISSUE_1428,
        published: 0.33,
        simulated: 0.18 * beside / alone,
        band: (0.18 * 1.1, 0.33),
        note: "memory-bound share of the attention core as the model splits it",
    });
    let (alone, beside) = kernel_beside_allgather(0.02e-3, 0.02e-3);
    out.push(Calibration {
        case: "elementwise beside an AllGather, ms",
        source: ISSUE_1428,
        published: 0.05,
        simulated: 0.02 * beside / alone,
        band: (0.02 * 1.2, 0.05),
        note: "HBM shared max-min: 2 HBM bytes per link byte for an AllGather (copying), 3 when reducing",
    });
    let (mean, largest, gain) = overlapped_compute_slowdown();
    const ARXIV: &str = "arXiv 2507.03114 (A100, H100, MI250, MI210)";
    out.push(Calibration {
        case: "overlapped compute slowdown, mean %",
        source: ARXIV,
        published: 18.9,
        simulated: mean * 100.0,
        band: (5.0, 40.0),
        note: "slowed compute ops of the didactic and contention presets",
    });
    out.push(Calibration {
        case: "overlapped compute slowdown, largest %",
        source: ARXIV,
        published: 40.0,
        simulated: largest * 100.0,
        band: (10.0, 150.0),
        note: "the most slowed op: a short memory-bound kernel under an NVLink collective",
    });
    out.push(Calibration {
        case: "sequential slower than overlapped, mean %",
        source: ARXIV,
        published: 10.2,
        simulated: gain * 100.0,
        band: (1.0, 40.0),
        note: "baseline / step - 1 of the same presets: overlap still pays",
    });
    out.push(Calibration {
        case: "overlapped / sequential, 8 V100, 24 channels",
        source: "coconet issue 6 (157 -> 207 ms)",
        published: 207.0 / 157.0,
        simulated: coconet_issue_6_ratio(),
        band: (0.5, 1.0),
        note: "known gap: the model never makes overlap slower than sequence here, since a GEMM takes no HBM from the AllReduce",
    });
    out
}

/// The calibration figures as a Markdown table.
pub fn table() -> String {
    let mut out = String::from(
        "| case | source | published | simulated | accepted | note |\n|---|---|---|---|---|---|\n",
    );
    for c in interference_cases() {
        out += &format!(
            "| {} | {} | {:.2} | {:.2} | {:.2} to {:.2} | {} |\n",
            c.case, c.source, c.published, c.simulated, c.band.0, c.band.1, c.note
        );
    }
    out
}
