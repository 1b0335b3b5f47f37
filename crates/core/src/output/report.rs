//! The figures of model.md section 6, in the shape of interface.md's report.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::axis::Axis;
use crate::model::per_axis::PerAxis;

/// Per-axis figures, milliseconds per step on the slowest GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AxisReport {
    /// Time its collectives were in flight.
    pub comm_ms: f64,
    /// Time the compute stream stood idle charged to them (each idle
    /// instant is charged once: model.md section 5).
    pub exposed_ms: f64,
    /// The share of `comm_ms` hidden under compute: `under_compute_ms /
    /// comm_ms` (model.md 6: one meaning everywhere; it never exceeds
    /// `window_ms / comm_ms`). 1 when there is no communication.
    pub hidden: f64,
    /// 1 - exposed / comm: hidden under compute or under another axis's or
    /// the bubble's idle (the quantity `hidden` meant before the fourth
    /// round; interface.md). 1 when there is no communication.
    #[serde(default = "one")]
    pub not_exposed: f64,
    /// The part of `comm_ms` during which the compute stream ran (hidden).
    #[serde(default)]
    pub under_compute_ms: f64,
    /// The part of `comm_ms` during which the compute stream stood idle
    /// charged to another axis or the bubble: `under_compute_ms`,
    /// `exposed_ms` and this are `comm_ms`.
    #[serde(default)]
    pub under_idle_ms: f64,
    /// The compute that ran while its collectives might legally run, from
    /// each one's data being ready until its result is first needed
    /// (model.md section 5): idle time inside is not window.
    pub window_ms: f64,
    /// How much longer its collectives took than alone on the same links.
    pub contention_ms: f64,
    /// The same parts on the GPU where this axis's communication is
    /// largest (model.md 6): stages differ, and the GPU that ends last may
    /// carry little of an axis (DeepSeek-V3's first stage holds the dense
    /// layers).
    #[serde(default)]
    pub heaviest: HeaviestGpu,
}

/// An axis's parts on the GPU where its communication is largest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HeaviestGpu {
    /// The GPU's rank.
    pub gpu: u32,
    /// Time the axis's collectives were in flight on it.
    pub comm_ms: f64,
    /// Of `comm_ms`, while its compute stream ran.
    pub under_compute_ms: f64,
    /// Its compute stream's idle time charged to the axis.
    pub exposed_ms: f64,
    /// Of `comm_ms`, while its stream stood idle charged elsewhere.
    pub under_idle_ms: f64,
    /// `under_compute_ms / comm_ms` (1 without communication).
    pub hidden: f64,
    /// The axis's window on it.
    pub window_ms: f64,
}

/// `not_exposed` of a report written before the field existed: an axis
/// without it read as fully not exposed only if it had no communication,
/// which such a report cannot say; 1 keeps absent axes' convention.
fn one() -> f64 {
    1.0
}

impl AxisReport {
    /// The share of its communication hidden, for words and tables: none
    /// for an axis that moves nothing, where `hidden`'s 1 would read as
    /// perfect overlap of an axis with nothing to overlap.
    pub fn hidden_share(&self) -> Option<f64> {
        (self.comm_ms != 0.0).then_some(self.hidden)
    }
}

/// The per-axis figures, keyed by axis code as in the report's JSON. TP,
/// PP and DP are always present; EP with experts and CP with cp > 1, as
/// `Scenario::has_axis` decides.
#[derive(Clone, Debug, PartialEq)]
pub struct Axes(PerAxis<Option<AxisReport>>);

impl Default for Axes {
    fn default() -> Self {
        Axes(PerAxis::from_fn(|axis| {
            ALWAYS_REPORTED.contains(&axis).then(AxisReport::default)
        }))
    }
}

/// The axes every report carries, whatever the scenario (the first
/// version's three).
const ALWAYS_REPORTED: [Axis; 3] = [Axis::Tp, Axis::Pp, Axis::Dp];

/// The figures of an axis the scenario does not have: nothing moved, so
/// nothing exposed (`hidden` 1, as for any axis without communication).
const ABSENT_AXIS: AxisReport = AxisReport {
    comm_ms: 0.0,
    exposed_ms: 0.0,
    hidden: 1.0,
    not_exposed: 1.0,
    under_compute_ms: 0.0,
    under_idle_ms: 0.0,
    window_ms: 0.0,
    contention_ms: 0.0,
    heaviest: HeaviestGpu {
        gpu: 0,
        comm_ms: 0.0,
        under_compute_ms: 0.0,
        exposed_ms: 0.0,
        under_idle_ms: 0.0,
        hidden: 1.0,
        window_ms: 0.0,
    },
};

impl Axes {
    /// The figures of one axis.
    pub fn get(&self, axis: Axis) -> &AxisReport {
        self.0[axis].as_ref().unwrap_or(&ABSENT_AXIS)
    }

    /// The figures of `axis`, if the report carries them.
    pub fn reported(&self, axis: Axis) -> Option<&AxisReport> {
        self.0[axis].as_ref()
    }

    /// Whether the report carries figures of `axis`.
    pub fn has(&self, axis: Axis) -> bool {
        self.0[axis].is_some()
    }

    /// The figures of one axis, to fill in (an absent axis is added).
    pub fn get_mut(&mut self, axis: Axis) -> &mut AxisReport {
        self.0[axis].get_or_insert_with(AxisReport::default)
    }

    /// The axes the report carries, each with its figures, in axis order.
    pub fn present(&self) -> impl Iterator<Item = (Axis, &AxisReport)> {
        self.0
            .iter()
            .filter_map(|(axis, r)| Some((axis, r.as_ref()?)))
    }
}

impl std::ops::Index<Axis> for Axes {
    type Output = AxisReport;
    fn index(&self, axis: Axis) -> &AxisReport {
        self.get(axis)
    }
}

impl std::ops::IndexMut<Axis> for Axes {
    fn index_mut(&mut self, axis: Axis) -> &mut AxisReport {
        self.get_mut(axis)
    }
}

impl Serialize for Axes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (axis, r) in self.present() {
            map.serialize_entry(axis.name(), r)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Axes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let by_name = std::collections::BTreeMap::<String, AxisReport>::deserialize(deserializer)?;
        let mut axes = Axes(PerAxis::default());
        for (name, r) in by_name {
            let axis = Axis::from_name(&name)
                .ok_or_else(|| serde::de::Error::unknown_field(&name, &Axis::NAMES))?;
            axes.0[axis] = Some(r);
        }
        for axis in ALWAYS_REPORTED {
            if !axes.has(axis) {
                return Err(serde::de::Error::missing_field(axis.name()));
            }
        }
        Ok(axes)
    }
}

/// Busy fraction of a link class, and the fraction of busy time two or more axes shared.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkReport {
    /// Fraction of the step the link class carried traffic.
    pub busy: f64,
    /// Fraction of its busy time shared by two or more axes.
    pub shared: f64,
    /// Which axes shared it: per pair of axes that moved data on it at
    /// once (`"dp+ep"`, the codes in axis order), the fraction of its busy
    /// time they did (each at most `shared`; three axes at once count for
    /// each of their pairs). Left out when no two axes met.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shared_by: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
/// The per-link-class figures.
pub struct Links {
    /// NVLink inside the nodes.
    pub nvlink: LinkReport,
    /// The inter-node network.
    pub network: LinkReport,
}

/// Memory of the fullest GPU, GB (2^30 bytes, as PyTorch and nvidia-smi
/// count them): model.md section 4, computed by `memory.rs`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryGb {
    /// Half-precision weights of the layers and embeddings the GPU holds.
    pub weights: f64,
    /// The gradient buffers, `overlap.grad_bytes` per parameter.
    pub gradients: f64,
    /// Adam's fp32 master weights, momentum and variance.
    pub optimizer: f64,
    /// Activations kept for the backward, for every micro-batch in flight.
    pub activations: f64,
    /// The sum of the four parts.
    pub total: f64,
    /// The GPU's memory (`hbm_gb` of the hardware).
    pub capacity: f64,
    /// Whether `total` is at most `capacity`. A scenario that does not fit
    /// still simulates.
    pub fits: bool,
}

impl MemoryGb {
    /// The four parts against a capacity: their total and whether it fits.
    pub fn from_parts(
        weights: f64,
        gradients: f64,
        optimizer: f64,
        activations: f64,
        capacity: f64,
    ) -> MemoryGb {
        let total = weights + gradients + optimizer + activations;
        MemoryGb {
            weights,
            gradients,
            optimizer,
            activations,
            total,
            capacity,
            fits: total <= capacity,
        }
    }
}

/// `overlap-lab simulate --json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Simulated time of one step, ms.
    pub step_time_ms: f64,
    /// The same scenario with every overlap off, ms.
    pub baseline_ms: f64,
    /// `baseline_ms / step_time_ms`.
    pub speedup: f64,
    /// The slowest GPU's busy compute time, ms.
    pub compute_ms: f64,
    /// Model FLOPs (recomputation not counted) per second per GPU, TFLOP/s:
    /// Megatron's 2021 count, attention unmasked (4 b s^2 h forward).
    pub model_tflops_per_gpu: f64,
    /// Model FLOPs utilisation against the datasheet peak of `precision`, 0..1.
    /// Megatron's 2021 count: attention unmasked.
    pub mfu: f64,
    /// Model FLOPs with attention counted causal (half the unmasked
    /// attention core, as the Llama 3 paper, torchtitan and current
    /// Megatron-LM count it) per second per GPU, TFLOP/s.
    #[serde(default)]
    pub causal_tflops_per_gpu: f64,
    /// `causal_tflops_per_gpu` against the datasheet peak of `precision`, 0..1.
    #[serde(default)]
    pub causal_mfu: f64,
    /// The linear layers' number format, whose peak `mfu` is measured
    /// against: `"bf16"` (the dense bf16 peak) or `"fp8"` (the FP8 peak).
    #[serde(default)]
    pub precision: crate::model::scenario::Precision,
    /// Fraction of the step the pipeline's compute streams stand idle, 0..1.
    pub bubble_fraction: f64,
    /// Communication per axis: traffic, exposure, window, contention.
    pub axes: Axes,
    /// Busy and shared fractions per link class.
    pub links: Links,
    /// FLOPs executed per GPU in the step, recomputation included (Megatron's
    /// eq. 3 counts these), divided by step time: what Narayanan et al. report.
    pub hardware_tflops_per_gpu: f64,
    /// Share of communication kernel time during which a compute kernel runs,
    /// as HolisticTraceAnalysis's `get_comm_comp_overlap` computes it from a
    /// trace (`hta.rs`), averaged over the simulated GPUs; 0..1.
    pub hta_overlap: f64,
    /// The same per simulated GPU, in rank order (one per `rank<N>.json`).
    pub hta_overlap_per_gpu: Vec<f64>,
    /// Memory of the fullest GPU.
    pub memory_gb: MemoryGb,
    /// A one-collective workload's figures, as nccl-tests prints them.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveReport>,
}

/// What nccl-tests prints for one size (`workload.kind: "collective"`;
/// doc/PERFORMANCE.md of nccl-tests defines the bandwidths).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CollectiveReport {
    /// Bus bandwidth: `alg_gbps` times the collective's bus factor, GB/s.
    pub bus_gbps: f64,
    /// Algorithm bandwidth: the buffer's bytes over the time, GB/s.
    pub alg_gbps: f64,
    /// The simulated time of the call, us.
    pub time_us: f64,
    /// The algorithm NCCL's tuning model chose ("Ring", "Tree", "NVLS";
    /// "P2P" for an all-to-all, which runs as grouped sends).
    pub algorithm: String,
    /// The protocol it chose ("LL", "LL128", "Simple").
    pub protocol: String,
}

impl CollectiveReport {
    /// The figures of scenario `s`, whose simulated step took `step_ms`;
    /// `None` unless it is a one-collective workload.
    pub fn of(s: &crate::model::scenario::Scenario, step_ms: f64) -> Option<Self> {
        use crate::collective::nccl::{bench_call, Fabric};
        use crate::model::scenario::{CollectiveOp, Workload};
        let Workload::Collective(c) = &s.workload else {
            return None;
        };
        let hw = &s.hardware;
        let ranks = hw.nodes * hw.gpus_per_node;
        let call = bench_call(
            &Fabric::of_scenario(s),
            c.collective,
            ranks,
            hw.gpus_per_node,
            c.bytes,
        );
        let time_s = step_ms * 1e-3;
        let alg_gbps = if time_s > 0.0 {
            c.bytes / time_s / 1e9
        } else {
            0.0
        };
        Some(Self {
            bus_gbps: alg_gbps * c.collective.bus_factor(ranks),
            alg_gbps,
            time_us: time_s * 1e6,
            algorithm: if c.collective == CollectiveOp::AllToAll {
                "P2P".to_string()
            } else {
                call.algorithm.label().to_string()
            },
            protocol: call.protocol.label().to_string(),
        })
    }
}
