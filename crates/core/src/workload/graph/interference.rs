//! Compute and communication share the GPU (model.md section 3): two
//! per-GPU resources that both engines model the same way.
//!
//! - **SMs.** A collective runs one thread block per NCCL channel, as many
//!   as its call's channel count (`collective_cost`: fewer for small
//!   messages, two for a send; none for a copy-engine transfer, `RunsOn`).
//!   While it is in flight, the compute-bound part of a
//!   kernel runs on the SMs left. One communication stream per axis: calls
//!   of one axis queued at the same moment share that stream's blocks, so an
//!   axis holds the channels of its widest active call, and the axes add up.
//! - **HBM.** A collective moves each link byte through HBM several times
//!   (its call's count: about 3 when it reduces, 2 when it copies),
//!   and the memory-bound part of a kernel streams its bytes through HBM.
//!   Each GPU's HBM is one more resource of the fluid network: a collective
//!   crosses the HBM of every member with a weight per link byte, the
//!   memory-bound part of a kernel is a flow of its bytes on its own GPU's
//!   HBM, and weighted max-min fairness shares it. So overlapped
//!   communication slows memory-bound compute, and a memory-hungry kernel
//!   slows the collective (and with it every flow it is in lock step with).
//!
//! A kernel runs its memory-bound part first (the LayerNorms, bias and
//! dropout kernels before a GEMM), then its compute-bound part.
//!
//! The v1 field `sm_tax` keeps its meaning: a fixed compute slowdown while
//! any collective of the GPU runs, and no HBM sharing.

use crate::model::axis::Axis;
use crate::model::fidelity::Fidelity;
use crate::model::op::{OpKind, Phase};
use crate::model::scenario::{Interference, Scenario};
use crate::workload::cost::efficiency::GemmGeneration;
use crate::workload::graph::cluster::Cluster;
use crate::workload::graph::task::Usage;
use crate::workload::graph::task::{Meta, RunsOn, TaskId, COMPUTE};
use crate::workload::graph::Graph;

/// How compute and communication of one GPU slow each other in a run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sharing {
    /// Free overlap: neither ever slows the other.
    Free,
    /// v1: compute runs at (1 - tax) while any collective of its GPU runs.
    Tax(f64),
    /// SMs and HBM shared as described above.
    Modelled(Modelled),
}

/// The GPU's two shared resources.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Modelled {
    /// Streaming multiprocessors per GPU.
    pub sms: u32,
    /// HBM bandwidth per GPU, bytes per second.
    pub hbm_bps: f64,
    /// Every call on this many channels instead of its own call's count
    /// (a published case that states its channel count).
    pub channels_override: Option<u32>,
}

impl Sharing {
    /// What the scenario asks for: `interference: "off"` is free overlap; a
    /// given `sm_tax` keeps its v1 meaning; otherwise the modelled sharing.
    pub fn of(s: &Scenario) -> Self {
        match (s.interference, s.first_version_tax()) {
            (Interference::Off, _) => Self::Free,
            (Interference::Modelled, Some(tax)) => Self::Tax(tax),
            (Interference::Modelled, None) => Self::Modelled(Modelled {
                sms: s.hardware.sms,
                hbm_bps: s.hardware.hbm_achievable_bps(),
                channels_override: None,
            }),
        }
    }

    /// The modelled sharing, if that is what runs.
    pub fn modelled(&self) -> Option<&Modelled> {
        match self {
            Self::Modelled(m) => Some(m),
            _ => None,
        }
    }

    /// Speed of a kernel's compute-bound part (1 = alone on the GPU), given
    /// the GPU's collectives in flight, the SMs they hold, and the output
    /// tiles of the kernel's GEMM (0: not a tiled GEMM).
    pub fn compute_speed(&self, comm_active: u32, sms: &SmUse, tiles: u32) -> f64 {
        match self {
            Self::Free => 1.0,
            Self::Tax(tax) => {
                if comm_active > 0 {
                    1.0 - tax
                } else {
                    1.0
                }
            }
            Self::Modelled(m) => {
                let taken = sms.taken(m.channels_override);
                // A kernel always gets at least one SM: blocks of both are
                // scheduled as SMs free up.
                let left = m.sms.saturating_sub(taken).max(1);
                if tiles == 0 {
                    // Not tiled in waves (FlashAttention, or a kernel given
                    // by time): it runs on the SMs left as a fluid.
                    f64::from(left) / f64::from(m.sms)
                } else {
                    // A GEMM's tiles run in waves of the SMs left: a wave
                    // more whenever the tiles no longer fit (model.md 3).
                    1.0 / GemmGeneration::wave_stretch(f64::from(tiles), m.sms, left)
                }
            }
        }
    }
}

/// Channel counts a call can hold, and one past (`CallUse` caps its count
/// below; NCCL's own maximum, MAXCHANNELS, is 32).
pub(crate) const CHANNEL_SLOTS: usize = 64;

/// The SMs the collectives of one GPU hold: per axis, how many calls in
/// flight hold each channel count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SmUse {
    active: [[u32; CHANNEL_SLOTS]; Axis::COUNT],
    /// Per axis, the widest channel count in flight (0: none).
    widest: [u8; Axis::COUNT],
}

impl Default for SmUse {
    fn default() -> Self {
        Self {
            active: [[0; CHANNEL_SLOTS]; Axis::COUNT],
            widest: [0; Axis::COUNT],
        }
    }
}

impl SmUse {
    /// A call on `channels` channels of `axis` starts (`true`) or ends (`false`).
    pub fn change(&mut self, axis: u8, channels: u8, starts: bool) {
        let a = usize::from(axis);
        let counts = &mut self.active[a];
        let n = &mut counts[usize::from(channels)];
        if starts {
            *n += 1;
            self.widest[a] = self.widest[a].max(channels);
        } else {
            *n -= 1;
            if *n == 0 && channels == self.widest[a] {
                self.widest[a] = (0..channels)
                    .rev()
                    .find(|&c| counts[usize::from(c)] > 0)
                    .unwrap_or(0);
            }
        }
    }

    /// SMs taken: per axis, the channels of its widest call in flight (or
    /// `every_call` channels for each axis with a call in flight).
    pub fn taken(&self, every_call: Option<u32>) -> u32 {
        self.widest
            .iter()
            .filter(|&&w| w > 0)
            .map(|&w| every_call.unwrap_or(u32::from(w)))
            .sum()
    }
}

/// What one run's network holds, and how its tasks use the GPU.
pub(crate) struct NetworkSetup {
    /// Link resources, then (modelled sharing) one HBM per GPU.
    pub capacity_bps: Vec<f64>,
    /// The graph's link patterns (each crossing its members' HBM when
    /// modelled), then one kernel pattern per GPU (its own HBM alone).
    pub patterns: Vec<Vec<Usage>>,
    /// Number of link resources: logs past it are HBM, not links.
    pub links: usize,
}

impl NetworkSetup {
    /// The network for `g` under `sharing`.
    pub fn new(g: &Graph, sharing: &Sharing) -> Self {
        let links = g.resources.len();
        let mut capacity_bps: Vec<f64> = g.resources.iter().map(|r| r.capacity_bps).collect();
        let Some(m) = sharing.modelled() else {
            return Self {
                capacity_bps,
                patterns: g.patterns.clone(),
                links,
            };
        };
        let gpus = g.gpus.len();
        capacity_bps.extend(std::iter::repeat_n(m.hbm_bps, gpus));
        let hbm = |gpu: usize| (links + gpu) as u32;
        let mut per_gpu = vec![0.0; gpus];
        let mut patterns: Vec<Vec<Usage>> = g
            .patterns
            .iter()
            .zip(
                g.fused_hbm_per_link_byte
                    .iter()
                    .zip(&g.call_hbm_per_link_byte),
            )
            .map(|(p, (&fused, &call_hbm))| {
                let mut usage = p.clone();
                for u in p {
                    if let Some(gpu) = g.resources[u.resource as usize].gpu {
                        per_gpu[gpu] += u.weight;
                    }
                }
                for (gpu, w) in per_gpu.iter_mut().enumerate() {
                    if *w > 0.0 {
                        // Fused pointwise work streams its bytes through
                        // each member's HBM as the collective moves.
                        usage.push(Usage {
                            resource: hbm(gpu),
                            weight: call_hbm * *w / 2.0 + fused,
                        });
                        *w = 0.0;
                    }
                }
                usage
            })
            .collect();
        patterns.extend((0..gpus).map(|gpu| {
            vec![Usage {
                resource: hbm(gpu),
                weight: 1.0,
            }]
        }));
        Self {
            capacity_bps,
            patterns,
            links,
        }
    }

    /// The channels (SMs) collective task `t` holds: its call's, or none
    /// for a copy-engine transfer.
    pub fn channels(&self, g: &Graph, t: TaskId) -> u8 {
        match g.tasks[t as usize].runs_on {
            RunsOn::Sms => g.channels[t as usize],
            RunsOn::CopyEngine => 0,
        }
    }

    /// The pattern of a memory-bound kernel phase on `gpu`.
    pub fn kernel_pattern(&self, g: &Graph, gpu: u32) -> u32 {
        (g.patterns.len() + gpu as usize) as u32
    }
}

/// The memory-bound seconds of compute task `t` that run as an HBM flow
/// under `sharing` (zero: the whole task runs on SMs).
pub(crate) fn memory_phase_s(g: &Graph, sharing: &Sharing, t: usize) -> f64 {
    if sharing.modelled().is_some() && g.tasks[t].axis == COMPUTE {
        g.memory_s(t as TaskId).min(g.tasks[t].work)
    } else {
        0.0
    }
}

/// The setting in which the two resources are shared, as the calibration
/// (`crate::calibration`, NCCL issue 1428) and the tests below run it: a
/// kernel of `time_s` (`memory_s` of it memory-bound) on GPU 0 of the
/// scenario's first node, beside one AllGather over the node's eight GPUs
/// on their NVLink ring per entry of `axes`, each moving `bytes` per member.
/// The graph, finished, and the kernel's task.
pub(crate) fn kernel_beside_ring(
    s: &Scenario,
    time_s: f64,
    memory_s: f64,
    axes: &[Axis],
    bytes: f64,
) -> (Graph, TaskId) {
    let mut g = Graph::default();
    let cluster = Cluster::new(&mut g, s, Fidelity::Full);
    let members: Vec<u32> = (0..8).map(|k| cluster.gpu(0, 0, k)).collect();
    let pattern = cluster.nvlink_ring(&mut g, &members);
    let meta = Meta::new(OpKind::Gemm, Phase::Forward);
    let kernel = g.compute(members[0], time_s, memory_s, 0.0, 0.0, meta);
    for &axis in axes {
        g.comm(
            &members,
            axis,
            pattern,
            bytes,
            0.0,
            meta.op(OpKind::AllGather),
        );
    }
    g.finish();
    (g, kernel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::Collective;
    use crate::input::parse::parse_scenario;

    /// One DGX A100 node, every GPU simulated, with `hbm_gbps` of HBM.
    fn node(hbm_gbps: f64) -> Scenario {
        parse_scenario(&format!(
            r#"{{"hardware":{{"preset":"dgx-a100","nodes":1,"hbm_gbps":{hbm_gbps}}},
                "workload":{{"kind":"matmul_allreduce"}},"parallel":{{"tp":8}}}}"#
        ))
        .unwrap()
    }

    /// A kernel of `time_s` (`memory_s` of it memory-bound) on GPU 0 beside
    /// collectives of the node's ring on the given axes, each moving `bytes`
    /// per member: the engine's start and end of every task.
    fn run(
        s: &Scenario,
        time_s: f64,
        memory_s: f64,
        axes: &[Axis],
        bytes: f64,
    ) -> crate::sim::engine::RunResult {
        let (g, _) = kernel_beside_ring(s, time_s, memory_s, axes, bytes);
        crate::sim::engine::run(&g, false, &Sharing::of(s))
    }

    fn took(r: &crate::sim::engine::RunResult, task: usize) -> f64 {
        r.end_s[task] - r.start_s[task]
    }

    #[test]
    fn two_collectives_on_one_gpu_share_its_sms() {
        let s = node(2039.0);
        let long = Collective::AllGather.bytes_per_rank(8, 8e9);
        let sms = f64::from(s.hardware.sms);
        let ch = f64::from(crate::collective::nccl::NVLINK_CHANNELS);
        let alone = took(&run(&s, 1e-3, 0.0, &[], long), 0);
        let one = took(&run(&s, 1e-3, 0.0, &[Axis::Tp], long), 0);
        let two_axes = took(&run(&s, 1e-3, 0.0, &[Axis::Tp, Axis::Dp], long), 0);
        let one_axis_twice = took(&run(&s, 1e-3, 0.0, &[Axis::Tp, Axis::Tp], long), 0);
        assert!((alone - 1e-3).abs() < 1e-15);
        // A GEMM runs on the SMs the collectives leave.
        assert!((one - 1e-3 * sms / (sms - ch)).abs() < 1e-12, "{one}");
        assert!(
            (two_axes - 1e-3 * sms / (sms - 2.0 * ch)).abs() < 1e-12,
            "{two_axes}"
        );
        // Calls queued on one axis's stream hold that stream's blocks once.
        assert!((one_axis_twice - one).abs() < 1e-15, "{one_axis_twice}");
    }

    #[test]
    fn a_memory_bound_kernel_and_a_collective_share_hbm_both_ways() {
        // HBM tight enough that the collective needs most of it: 600 GB/s
        // on the datasheet, 528 achievable, while the ring alone moves 234
        // GB/s over NVLink, 468 through HBM.
        let s = node(600.0);
        let hbm = s.hardware.hbm_achievable_bps();
        let link = s.hardware.nvlink_gbps
            * 1e9
            * crate::collective::nccl::Generation::Ampere.nvlink_efficiency();
        let bytes = 0.1 * link; // 0.1 s alone
                                // An AllGather copies: 2 HBM bytes per link byte.
        let k = crate::collective::nccl::HBM_BYTES_PER_LINK_BYTE_COPY;
        // Alone: the link is the bottleneck.
        let alone = run(&s, 0.0, 0.0, &[Axis::Tp], bytes);
        assert!((took(&alone, 1) - 0.1).abs() < 1e-12, "{}", took(&alone, 1));
        // Beside a memory-bound kernel of 10 ms: max-min fairness on HBM
        // gives both the same rate r with r + k r = hbm, below the link's.
        let memory_s = 0.01;
        let r = hbm / (1.0 + k);
        assert!(r < link);
        let both = run(&s, memory_s, memory_s, &[Axis::Tp], bytes);
        let kernel_s = memory_s * hbm / r;
        assert!(
            (took(&both, 0) - kernel_s).abs() < 1e-12,
            "{}",
            took(&both, 0)
        );
        // The collective moved at r while the kernel ran, then at the link's rate.
        let collective_s = kernel_s + (bytes - r * kernel_s) / link;
        assert!(
            (took(&both, 1) - collective_s).abs() < 1e-12,
            "{}",
            took(&both, 1)
        );
        // And the plain reference engine agrees.
        let (g, _) = kernel_beside_ring(&s, memory_s, memory_s, &[Axis::Tp], bytes);
        let plain = crate::sim::plain::run(&g, false, &Sharing::of(&s));
        assert!((took(&plain, 0) - kernel_s).abs() < 1e-12);
        assert!((took(&plain, 1) - collective_s).abs() < 1e-12);
    }

    #[test]
    fn a_v1_sm_tax_replaces_the_model_and_off_frees_both() {
        let mut s = node(2039.0);
        let long = Collective::AllGather.bytes_per_rank(8, 8e9);
        s.sm_tax = Some(0.25);
        let taxed = took(&run(&s, 1e-3, 0.5e-3, &[Axis::Tp], long), 0);
        assert!((taxed - 1e-3 / 0.75).abs() < 1e-12, "{taxed}");
        s.sm_tax = None;
        s.interference = Interference::Off;
        let free = took(&run(&s, 1e-3, 0.5e-3, &[Axis::Tp], long), 0);
        assert!((free - 1e-3).abs() < 1e-15, "{free}");
    }
}
