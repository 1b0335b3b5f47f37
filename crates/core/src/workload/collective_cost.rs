//! What one collective call costs, the way NCCL predicts it (model.md 2b):
//! per call NCCL picks an algorithm (ring, tree across nodes, NVLS on
//! NVSwitch-3 systems) and a protocol (LL, LL128, Simple) as the pair with
//! the least predicted time, where the time is a latency (a base per
//! algorithm and protocol plus one per hop) and the bytes over the bandwidth
//! the protocol reaches on the links.
//!
//! Every constant below is NCCL's own, read from NVIDIA/nccl at tag
//! `v2.21.5-1` ([`NCCL_VERSION`]): `src/graph/tuning.cc`
//! (`ncclTopoTuneModel`, `ncclTopoGetAlgoTime`), `src/enqueue.cc`
//! (`topoGetAlgoInfo`, `getChannnelThreadInfo`), `src/include/comm.h`
//! (thread thresholds) and `src/graph/topo.h` (NVLink bandwidth per link).
//! That release is chosen because the published H100 choice this model is
//! checked against (nccl-tests issue 309, 2025: Ring/LL up to 1 MB,
//! NVLS/Simple from 2 MB) was logged with a release of that family. Releases
//! 2.10 to 2.20 ran Ring/LL at a quarter of the bus bandwidth for AllReduce
//! and across nodes (a third otherwise) and capped Hopper's LL at 87.7 GB/s;
//! 2.21 runs it at half, capped at 141 GB/s on Hopper. With the older
//! factors NCCL's own model would pick NVLS from about 0.5 MB on one DGX
//! H100, against the published log.
//!
//! The choice feeds the simulated flows: a call's latency is paid before its
//! bytes move, and the bandwidth the protocol and algorithm lose travels as
//! extra bytes on the wire, so flows of different calls still share links
//! by weighted max-min. A call's channel count (fewer for small messages)
//! sets the SMs it holds, and its kind the HBM bytes it moves per link byte
//! (`interference`).

use serde::Serialize;

use crate::model::hardware::Hardware;
use crate::model::scenario::CollectiveOp;
use crate::workload::collective::Collective;

/// The NCCL release whose tuning model this file follows.
pub const NCCL_VERSION: &str = "2.21.5";

/// How the ranks of a call exchange data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// Each rank sends to its ring neighbour; 2(n-1) steps for an AllReduce.
    Ring,
    /// Chains inside nodes and a binary tree across them (AllReduce across nodes only).
    Tree,
    /// NVLink SHARP: the NVSwitch reduces and multicasts (one node, NVSwitch 3).
    Nvls,
}

impl Algorithm {
    /// Every algorithm, in the order they are declared.
    pub const ALL: [Algorithm; 3] = [Algorithm::Ring, Algorithm::Tree, Algorithm::Nvls];

    /// Name as NCCL's logs print it.
    pub fn label(self) -> &'static str {
        match self {
            Algorithm::Ring => "Ring",
            Algorithm::Tree => "Tree",
            Algorithm::Nvls => "NVLS",
        }
    }
}

/// How data and synchronisation share a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// 8-byte stores of 4 data bytes and a flag: lowest latency, half the bandwidth.
    Ll,
    /// 128-byte lines with a flag in each: most of the bandwidth, low latency.
    Ll128,
    /// Bulk copies behind memory fences: all the bandwidth, the highest latency.
    Simple,
}

impl Protocol {
    /// Every protocol, in NCCL's order.
    pub const ALL: [Protocol; 3] = [Protocol::Ll, Protocol::Ll128, Protocol::Simple];

    /// Name as NCCL's logs print it.
    pub fn label(self) -> &'static str {
        match self {
            Protocol::Ll => "LL",
            Protocol::Ll128 => "LL128",
            Protocol::Simple => "Simple",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The GPU generation NCCL's per-architecture tables are indexed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// sm_70 (V100).
    Volta,
    /// sm_80 (A100).
    Ampere,
    /// sm_90 (H100).
    Hopper,
}

impl Generation {
    /// The generation of `hw`, read from its SM count (V100 80, A100 108,
    /// H100 PCIe 114 and SXM 132): the hardware has no field naming it.
    pub fn of(hw: &Hardware) -> Self {
        if hw.sms >= 114 {
            Self::Hopper
        } else if hw.sms >= 100 {
            Self::Ampere
        } else {
            Self::Volta
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// NCCL's bandwidth per NVLink link, GB/s per direction (topo.h
    /// `SM70_NVLINK_BW`, `SM80_NVLINK_BW` 20.0, `SM90_NVLINK_BW` 20.6).
    fn nccl_nvlink_gbps_per_link(self) -> f64 {
        match self {
            Self::Volta | Self::Ampere => 20.0,
            Self::Hopper => 20.6,
        }
    }

    /// Share of an NVLink line rate a NCCL ring moves: NCCL's bandwidth per
    /// link over the line rate per link (25 GB/s per direction for NVLink 2,
    /// 3 and 4). So 0.8 of 150 on DGX-2, 300 on DGX A100; 0.824 of 450 on
    /// DGX H100.
    pub fn nvlink_efficiency(self) -> f64 {
        self.nccl_nvlink_gbps_per_link() / NVLINK_LINE_GBPS_PER_LINK
    }
}

/// Line rate of one NVLink link per direction, GB/s: NVLink 2 (V100, 6
/// links, 150 GB/s), NVLink 3 (A100, 12 links, 300) and NVLink 4 (H100, 18
/// links, 450) all run 25 GB/s per link and direction (NVIDIA datasheets).
const NVLINK_LINE_GBPS_PER_LINK: f64 = 25.0;

/// tuning.cc `baseLat`, us, by protocol (LL, LL128, Simple). NVLS has none.
const RING_BASE_US: [f64; 3] = [6.6, 14.0, 8.4];
const TREE_BASE_US: [f64; 3] = [6.8, 14.0, 0.0];

/// tuning.cc `hwLat`, us, per hop, by protocol: NVLink and network rows.
const NVLINK_RING_HOP_US: [f64; 3] = [0.6, 1.9, 3.4];
const NVLINK_TREE_HOP_US: [f64; 3] = [0.6, 1.25, 28.0];
const NVLINK_NVLS_US: f64 = 25.0;
const NET_RING_HOP_US: [f64; 3] = [2.7, 4.0, 14.0];
const NET_TREE_HOP_US: [f64; 3] = [5.0, 8.5, 28.0];

/// tuning.cc `getNetOverhead`: the post overhead per network step on an
/// Intel host (1 us) and an AMD one (2 us), three times that with Simple; it
/// floors the NVLink hop of a ring that spans nodes.
const NET_OVERHEAD_INTEL_US: f64 = 1.0;
const NET_OVERHEAD_AMD_US: f64 = 2.0;
const NET_OVERHEAD_SIMPLE_FACTOR: f64 = 3.0;

/// The scenario's `nvlink_latency_us` and `network_latency_us` at their
/// preset values (2 and 5) stand for NCCL's hop latencies as they are;
/// edited, they scale NCCL's NVLink and network hops in proportion.
const NVLINK_REFERENCE_US: f64 = 2.0;
const NET_REFERENCE_US: f64 = 5.0;

/// tuning.cc `llMaxBws`, GB/s: rows Volta / Ampere / Hopper for one node,
/// or, across nodes, Intel / AMD hosts; columns 1 node, 2 nodes, more.
const LL_MAX_GBPS: [[f64; 3]; 3] = [[39.0, 39.0, 20.4], [87.7, 22.5, 19.0], [141.0, 45.0, 35.0]];
/// tuning.cc `perChMaxRingLL128Bws`, GB/s per channel, [generation][nodes column].
const PER_CH_RING_LL128_GBPS: [[f64; 3]; 3] =
    [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0], [36.7, 36.7, 36.7]];
/// tuning.cc `perChMaxTreeLL128Bws`, GB/s per channel.
const PER_CH_TREE_LL128_GBPS: [[f64; 3]; 3] =
    [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0], [36.7, 36.7, 29.0]];
/// tuning.cc `perChMaxTreeBws`, GB/s per channel.
const PER_CH_TREE_GBPS: [[f64; 3]; 3] =
    [[26.5, 18.5, 10.0], [24.0, 23.6, 17.8], [38.7, 41.4, 36.0]];

/// tuning.cc's refinements of the bus bandwidth: Ring LL at half (capped by
/// `llMaxBws`); Ring LL128 at 0.92 (0.7 with one rank per node); Tree at
/// 0.92, its LL at 1/3.8 of that, its LL128 at 7/9 in one node and 120/128
/// across nodes.
const RING_LL_FACTOR: f64 = 0.5;
const RING_LL128_FACTOR: f64 = 0.92;
const RING_LL128_ONE_PER_NODE_FACTOR: f64 = 0.7;
const TREE_FACTOR: f64 = 0.92;
const TREE_LL_FACTOR: f64 = 1.0 / 3.8;
const TREE_LL128_ONE_NODE_FACTOR: f64 = 7.0 / 9.0;
const TREE_LL128_FACTOR: f64 = 120.0 / 128.0;
/// tuning.cc's bus-to-algorithm bandwidth ratio: a tree moves half, NVLS
/// 5/6 (a ring n / nsteps).
const TREE_ALG_RATIO: f64 = 0.5;
const NVLS_ALG_RATIO: f64 = 5.0 / 6.0;

/// tuning.cc `treeCorrectionFactor`, by protocol, indexed by log2(bytes / 64).
const TREE_CORRECTION: [[f64; 23]; 3] = [
    [
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.0, 1.0, 1.0,
    ],
    [
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9,
        0.9, 0.9, 0.9, 1.0, 1.0,
    ],
    [
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8,
        0.7, 0.7, 0.8, 0.9, 0.9,
    ],
];

/// tuning.cc `ncclTopoGetAlgoTime`: an AllReduce ring with Simple across
/// nodes pays its latency 1.4 times (1.9 before Ampere) once each rank's
/// share of a channel reaches 64 bytes ("plateau effect of ring").
const RING_PLATEAU_FACTOR: f64 = 1.4;
const RING_PLATEAU_FACTOR_VOLTA: f64 = 1.9;
const RING_PLATEAU_BYTES: f64 = 64.0;

/// Most channels (one thread block each on its own SM) a collective runs
/// with on NVLink: model.md 3 reads 8-32 channels on NVLink in NCCL's logs;
/// NVLS on H100 runs NCCL_NVLS_NCHANNELS' default, 16 (transport/nvls.cc).
pub const NVLINK_CHANNELS: u32 = 16;
/// Channels of a call whose ring crosses the network: DeepSeek-V3's report
/// (arXiv 2412.19437, section 3.2.2) saturates InfiniBand and NVLink with 10.
pub const NETWORK_CHANNELS: u32 = 10;
/// Channels of a point-to-point send (NCCL_NCHANNELS_PER_NET_PEER's default, 2).
pub const P2P_CHANNELS: u32 = 2;

/// enqueue.cc `getChannnelThreadInfo`: a ring or tree call drops channels
/// while its bytes are fewer than channels x threads x threshold. Threads
/// per channel (device.h: LL 512, LL128 640, Simple 512) times the
/// per-thread thresholds (comm.h: 8, 8, 64 bytes; the ring's LL one times
/// the ranks).
const CHANNEL_THREADS: [f64; 3] = [512.0, 640.0, 512.0];
const THREAD_THRESHOLD_BYTES: [f64; 3] = [8.0, 8.0, 64.0];

/// HBM bytes a call moves per byte it sends on a link (model.md 2b, NCCL's
/// maintainers in NVIDIA/nccl issue 1428: 2-3 times): a reducing ring step
/// reads the local buffer and the received chunk and writes the sum (3); a
/// copy step reads and writes once (2); NVLS reductions happen in the
/// switch (2).
pub const HBM_BYTES_PER_LINK_BYTE_REDUCE: f64 = 3.0;
/// HBM bytes per link byte of a copying call (see the reducing one).
pub const HBM_BYTES_PER_LINK_BYTE_COPY: f64 = 2.0;

/// The links a call runs over, as the simulator sees them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fabric {
    /// NVLink bandwidth per GPU and direction a ring reaches, bytes/s
    /// (datasheet times the link efficiency).
    pub nvlink_bps: f64,
    /// Network bandwidth per GPU and direction a ring reaches, bytes/s.
    pub nic_bps: f64,
    /// The scenario's `nvlink_latency_us`, s.
    pub nvlink_latency_s: f64,
    /// The scenario's `network_latency_us`, s.
    pub network_latency_s: f64,
    /// Whether the NVSwitch reduces in the switch (NVSwitch 3: the DGX H100).
    pub nvls: bool,
    /// The GPU generation NCCL's tables are read for.
    pub generation: Generation,
    /// Whether the hosts' CPUs are AMD's (DGX A100's EPYC): NCCL's LL caps
    /// and network overhead across nodes depend on the CPU vendor.
    pub amd_cpu: bool,
}

impl Fabric {
    /// The fabric of scenario `s`: NVLink SHARP needs NVSwitch 3, which of
    /// the presets only the DGX H100 has.
    pub fn of_scenario(s: &crate::model::scenario::Scenario) -> Self {
        let nvls = s.hardware_preset == crate::model::hardware::HardwarePreset::DgxH100;
        Self::of(&s.hardware, nvls)
    }

    /// The fabric of `hw`; `nvls` where the NVSwitch reduces (NVSwitch 3).
    pub fn of(hw: &Hardware, nvls: bool) -> Self {
        let generation = Generation::of(hw);
        Self {
            nvlink_bps: hw.nvlink_gbps * 1e9 * generation.nvlink_efficiency(),
            nic_bps: hw.nic_gbps * 1e9 * crate::workload::efficiency::NIC_EFFICIENCY,
            nvlink_latency_s: hw.nvlink_latency_us * 1e-6,
            network_latency_s: hw.network_latency_us * 1e-6,
            nvls,
            generation,
            // DGX A100 hosts run AMD EPYC CPUs; DGX-2 and DGX H100 Intel Xeons.
            amd_cpu: generation == Generation::Ampere,
        }
    }
}

/// Which ranks take part: `ranks` in all, `per_node` of them in each node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallShape {
    /// The collective.
    pub kind: Collective,
    /// Ranks of the communicator.
    pub ranks: u32,
    /// Ranks of the communicator inside each node (= ranks within one node).
    pub per_node: u32,
    /// Bytes of the call's buffer (nccl-tests' "size", NCCL's `nBytes`).
    pub size_bytes: f64,
}

impl CallShape {
    /// Nodes the call spans.
    pub fn nodes(&self) -> u32 {
        (self.ranks / self.per_node.max(1)).max(1)
    }
}

/// The NCCL kernel a collective runs: the algorithm and protocol the model
/// chose for its call ([`choose`]). The trace names the kernel by it, as a
/// profiler shows NCCL's, and the tooltip shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Kernel {
    /// The algorithm chosen.
    pub algorithm: Algorithm,
    /// The protocol chosen.
    pub protocol: Protocol,
}

impl Kernel {
    /// "Ring, LL128": the names NCCL's logs print.
    pub fn label(self) -> String {
        format!("{}, {}", self.algorithm.label(), self.protocol.label())
    }

    /// "RING_LL128": the suffix of NCCL's kernel names
    /// (`ncclDevKernel_AllReduce_Sum_bf16_RING_LL128`).
    pub fn name_suffix(self) -> String {
        format!(
            "{}_{}",
            self.algorithm.label().to_uppercase(),
            self.protocol.label().to_uppercase()
        )
    }
}

/// NCCL's choice for one call, and what it implies for the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CollectiveCall {
    /// The algorithm chosen.
    pub algorithm: Algorithm,
    /// The protocol chosen.
    pub protocol: Protocol,
    /// NCCL channels the call runs with: one thread block each, on SMs that
    /// compute then lacks (the interference model reads this).
    pub channels: u32,
    /// HBM bytes the call moves per byte it puts on a link (send-buffer
    /// reads, receive writes, reduction reads).
    pub hbm_bytes_per_link_byte: f64,
    /// Latency paid before the bytes move, s.
    pub latency_s: f64,
    /// Bytes each rank puts on its links (the protocol's overhead
    /// included), summed over the rails of a call that spans nodes.
    pub wire_bytes: f64,
    /// The predicted time alone on idle links, s.
    pub time_s: f64,
}

impl CollectiveCall {
    /// The kernel the call runs.
    pub fn kernel(&self) -> Kernel {
        Kernel {
            algorithm: self.algorithm,
            protocol: self.protocol,
        }
    }

    /// Algorithm bandwidth the call reaches alone (nccl-tests' algbw: the
    /// buffer's bytes over the time), GB/s.
    pub fn alg_gbps(&self, shape: &CallShape) -> f64 {
        if self.time_s <= 0.0 {
            return 0.0;
        }
        shape.size_bytes / self.time_s / 1e9
    }

    /// Bus bandwidth the call reaches alone (nccl-tests' busbw), GB/s.
    pub fn bus_gbps(&self, shape: &CallShape) -> f64 {
        if self.time_s <= 0.0 {
            return 0.0;
        }
        shape.kind.bytes_per_rank(shape.ranks, shape.size_bytes) / self.time_s / 1e9
    }

    /// The same call with its bytes split over `chunks` pieces that one
    /// fused kernel moves (CoCoNet's fusion): NCCL's choice at the whole
    /// size, each piece a share of its wire bytes.
    pub fn piece(&self, chunks: u32) -> Self {
        let k = f64::from(chunks.max(1));
        Self {
            wire_bytes: self.wire_bytes / k,
            time_s: self.latency_s + (self.time_s - self.latency_s) / k,
            ..*self
        }
    }
}

/// The ring's bus bandwidth alone on the fabric, bytes/s: inside one node
/// its NVLink; across nodes one rail per GPU of a node, each crossing one
/// NIC and the other rails' NVLink hops (as `workload::Cluster::dp_collective`
/// lays them out), summed over the node's rails.
fn ring_rate_bps(f: &Fabric, shape: &CallShape) -> f64 {
    if shape.nodes() <= 1 {
        return f.nvlink_bps;
    }
    let k = f64::from(shape.per_node.max(1));
    let per_rail = if k > 1.0 {
        f.nic_bps.min(f.nvlink_bps / (k - 1.0))
    } else {
        f.nic_bps
    };
    per_rail * k
}

/// The most channels a call of this algorithm could run on this shape.
fn max_channels(algorithm: Algorithm, shape: &CallShape) -> u32 {
    match algorithm {
        Algorithm::Nvls => NVLINK_CHANNELS,
        _ if shape.nodes() > 1 => NETWORK_CHANNELS,
        _ => NVLINK_CHANNELS,
    }
}

/// enqueue.cc's channel count for a call of `size_bytes`: ring and tree drop
/// channels while each would get less than its threads' threshold; NVLS
/// runs its fixed count.
fn channels_for(algorithm: Algorithm, protocol: Protocol, shape: &CallShape) -> u32 {
    let most = max_channels(algorithm, shape);
    if algorithm == Algorithm::Nvls {
        return most;
    }
    let p = protocol.index();
    let mut threshold = THREAD_THRESHOLD_BYTES[p];
    if algorithm == Algorithm::Ring && protocol == Protocol::Ll {
        threshold *= f64::from(shape.ranks);
    }
    let per_channel = CHANNEL_THREADS[p] * threshold;
    let fit = (shape.size_bytes / per_channel).floor();
    (fit.min(f64::from(most)) as u32).max(1)
}

/// Column of tuning.cc's tables for the nodes spanned (1, 2, more).
fn nodes_column(nodes: u32) -> usize {
    (nodes.max(1) - 1).min(2) as usize
}

/// floor(log2(x)) for x >= 1, as NCCL's `log2i`.
fn log2i(x: u32) -> u32 {
    31 - x.max(1).leading_zeros()
}

/// NCCL's latency (us) and algorithm bandwidth (bytes/s) of `algorithm` x
/// `protocol` for the call, or `None` where NCCL does not offer the pair.
fn model(
    f: &Fabric,
    shape: &CallShape,
    algorithm: Algorithm,
    protocol: Protocol,
) -> Option<(f64, f64)> {
    let n = shape.ranks;
    let nodes = shape.nodes();
    let ppn = f64::from(n) / f64::from(nodes);
    let p = protocol.index();
    let col = nodes_column(nodes);
    let gen = f.generation.index();
    let row = if nodes == 1 {
        gen
    } else {
        usize::from(f.amd_cpu)
    };
    let ll_max_bps = LL_MAX_GBPS[row][col] * 1e9;
    let nvlink_scale = f.nvlink_latency_s / (NVLINK_REFERENCE_US * 1e-6);
    let net_scale = f.network_latency_s / (NET_REFERENCE_US * 1e-6);
    let bus = ring_rate_bps(f, shape);
    let ch = f64::from(max_channels(algorithm, shape));
    match algorithm {
        Algorithm::Ring => {
            let nsteps = shape.kind.steps(n);
            let inter_steps = match (nodes > 1, shape.kind) {
                (false, _) => 0,
                (true, Collective::AllReduce) => 2 * nodes,
                (true, _) => nodes - 1,
            }
            .min(nsteps);
            let bus = match protocol {
                Protocol::Ll => ll_max_bps.min(bus * RING_LL_FACTOR),
                Protocol::Ll128 => {
                    let factor = if ppn < 2.0 {
                        RING_LL128_ONE_PER_NODE_FACTOR
                    } else {
                        RING_LL128_FACTOR
                    };
                    (bus * factor).min(ch * PER_CH_RING_LL128_GBPS[gen][col] * 1e9)
                }
                Protocol::Simple => bus,
            };
            let mut intra = NVLINK_RING_HOP_US[p] * nvlink_scale;
            if nodes > 1 {
                let overhead = if f.amd_cpu {
                    NET_OVERHEAD_AMD_US
                } else {
                    NET_OVERHEAD_INTEL_US
                };
                let overhead = if protocol == Protocol::Simple {
                    overhead * NET_OVERHEAD_SIMPLE_FACTOR
                } else {
                    overhead
                };
                intra = intra.max(overhead);
            }
            let inter = NET_RING_HOP_US[p] * net_scale;
            let mut latency = RING_BASE_US[p]
                + f64::from(nsteps - inter_steps) * intra
                + f64::from(inter_steps) * inter;
            if protocol == Protocol::Simple
                && nodes > 1
                && shape.kind == Collective::AllReduce
                && shape.size_bytes / (ch * f64::from(n)) >= RING_PLATEAU_BYTES
            {
                latency *= if f.generation == Generation::Volta {
                    RING_PLATEAU_FACTOR_VOLTA
                } else {
                    RING_PLATEAU_FACTOR
                };
            }
            Some((latency, bus * f64::from(n) / f64::from(nsteps)))
        }
        Algorithm::Tree => {
            if shape.kind != Collective::AllReduce || nodes <= 1 {
                return None;
            }
            let mut bus = (bus * TREE_FACTOR).min(ch * PER_CH_TREE_GBPS[gen][col] * 1e9);
            bus = match protocol {
                Protocol::Ll => (bus * TREE_LL_FACTOR).min(ll_max_bps),
                Protocol::Ll128 => {
                    let factor = if nodes == 1 {
                        TREE_LL128_ONE_NODE_FACTOR
                    } else {
                        TREE_LL128_FACTOR
                    };
                    (bus * factor).min(ch * PER_CH_TREE_LL128_GBPS[gen][col] * 1e9)
                }
                Protocol::Simple => bus,
            };
            let log_size = log2i((shape.size_bytes / 64.0).max(1.0) as u32) as usize;
            if log_size < 23 {
                bus *= TREE_CORRECTION[p][log_size];
            }
            let latency = TREE_BASE_US[p]
                + 2.0
                    * ((ppn - 1.0) * NVLINK_TREE_HOP_US[p] * nvlink_scale
                        + f64::from(log2i(nodes)) * NET_TREE_HOP_US[p] * net_scale);
            Some((latency, bus * TREE_ALG_RATIO))
        }
        Algorithm::Nvls => {
            let nvls_kind = matches!(
                shape.kind,
                Collective::AllReduce | Collective::ReduceScatter | Collective::AllGather
            );
            // One node only: across nodes NCCL needs CollNet (SHARP) for NVLS.
            if !f.nvls || nodes > 1 || !nvls_kind || protocol != Protocol::Simple || n < 2 {
                return None;
            }
            // NVLS's graph runs on the same NVLink as the ring's.
            Some((NVLINK_NVLS_US * nvlink_scale, f.nvlink_bps * NVLS_ALG_RATIO))
        }
    }
}

/// NCCL's latency and bandwidth of `algorithm` x `protocol` for the call,
/// or `None` where NCCL does not offer the pair.
fn candidate(
    f: &Fabric,
    shape: &CallShape,
    algorithm: Algorithm,
    protocol: Protocol,
) -> Option<CollectiveCall> {
    let (latency_us, alg_bps) = model(f, shape, algorithm, protocol)?;
    let reduces = matches!(
        shape.kind,
        Collective::AllReduce | Collective::ReduceScatter
    );
    let hbm = if reduces && algorithm != Algorithm::Nvls {
        HBM_BYTES_PER_LINK_BYTE_REDUCE
    } else {
        HBM_BYTES_PER_LINK_BYTE_COPY
    };
    // The simulated flow moves at the pattern's own rate (the ring's NVLink,
    // or its rails); the bytes it carries are what make its time NCCL's.
    let rate = if algorithm == Algorithm::Nvls {
        f.nvlink_bps
    } else {
        ring_rate_bps(f, shape)
    };
    let latency_s = latency_us * 1e-6;
    let transfer_s = shape.size_bytes / alg_bps;
    Some(CollectiveCall {
        algorithm,
        protocol,
        channels: channels_for(algorithm, protocol, shape),
        hbm_bytes_per_link_byte: hbm,
        latency_s,
        wire_bytes: transfer_s * rate,
        time_s: latency_s + transfer_s,
    })
}

/// NCCL's choice: the algorithm and protocol of least predicted time (the
/// first in NCCL's order, Tree, Ring, NVLS, on a tie). A call of one rank,
/// or of no bytes, costs nothing.
pub fn choose(f: &Fabric, shape: &CallShape) -> CollectiveCall {
    if shape.kind == Collective::SendRecv {
        return send(f, shape.size_bytes, shape.nodes() > 1);
    }
    let mut best: Option<CollectiveCall> = None;
    if shape.ranks > 1 && shape.size_bytes > 0.0 {
        for algorithm in [Algorithm::Tree, Algorithm::Ring, Algorithm::Nvls] {
            for protocol in Protocol::ALL {
                if let Some(c) = candidate(f, shape, algorithm, protocol) {
                    if best.is_none_or(|b| c.time_s < b.time_s) {
                        best = Some(c);
                    }
                }
            }
        }
    }
    best.unwrap_or(CollectiveCall {
        algorithm: Algorithm::Ring,
        protocol: Protocol::Simple,
        channels: 1,
        hbm_bytes_per_link_byte: HBM_BYTES_PER_LINK_BYTE_COPY,
        latency_s: 0.0,
        wire_bytes: 0.0,
        time_s: 0.0,
    })
}

/// The candidate NCCL would run if only `algorithm` were enabled (as with
/// `NCCL_ALGO`), the best protocol for it; `None` where it is not offered.
pub fn choose_algorithm(
    f: &Fabric,
    shape: &CallShape,
    algorithm: Algorithm,
) -> Option<CollectiveCall> {
    Protocol::ALL
        .iter()
        .filter_map(|&p| candidate(f, shape, algorithm, p))
        .min_by(|a, b| a.time_s.total_cmp(&b.time_s))
}

/// A point-to-point send (pipeline stages): NCCL's send/receive runs outside
/// the collective tuning model, with Simple for all but tiny messages and one
/// hop of latency.
pub fn send(f: &Fabric, size_bytes: f64, across_nodes: bool) -> CollectiveCall {
    let (latency_s, rate) = if across_nodes {
        (f.network_latency_s, f.nic_bps)
    } else {
        (f.nvlink_latency_s, f.nvlink_bps)
    };
    CollectiveCall {
        algorithm: Algorithm::Ring,
        protocol: Protocol::Simple,
        channels: P2P_CHANNELS,
        hbm_bytes_per_link_byte: HBM_BYTES_PER_LINK_BYTE_COPY,
        latency_s,
        wire_bytes: size_bytes,
        time_s: latency_s + size_bytes / rate,
    }
}

/// An AllToAll of `size_bytes` per rank (nccl-tests' alltoall_perf): NCCL
/// runs it as grouped sends and receives outside the tuning model, each
/// rank sending a 1/n share to every peer at once, over NVLink inside its
/// node and over its NIC to the others. One hop of latency, Simple; the
/// slower of its two link kinds bounds it.
pub fn all_to_all(f: &Fabric, ranks: u32, per_node: u32, size_bytes: f64) -> CollectiveCall {
    let n = f64::from(ranks.max(1));
    let local = f64::from(per_node.clamp(1, ranks.max(1)));
    let share = size_bytes / n;
    let nvlink_s = share * (local - 1.0) / f.nvlink_bps;
    let nic_s = share * (n - local) / f.nic_bps;
    let across = ranks > per_node;
    let latency_s = if across {
        f.network_latency_s
    } else {
        f.nvlink_latency_s
    };
    let transfer_s = nvlink_s.max(nic_s);
    // It runs on the communicator's ring links (`Cluster::dp_placed`): the
    // bytes that make its time there.
    let rate = ring_rate_bps(
        f,
        &CallShape {
            kind: Collective::AllGather,
            ranks,
            per_node,
            size_bytes,
        },
    );
    CollectiveCall {
        algorithm: Algorithm::Ring,
        protocol: Protocol::Simple,
        channels: if across {
            NETWORK_CHANNELS
        } else {
            NVLINK_CHANNELS
        },
        hbm_bytes_per_link_byte: HBM_BYTES_PER_LINK_BYTE_COPY,
        latency_s,
        wire_bytes: if ranks > 1 { transfer_s * rate } else { 0.0 },
        time_s: if ranks > 1 {
            latency_s + transfer_s
        } else {
            0.0
        },
    }
}

/// The call of a one-collective workload (`workload.kind: "collective"`):
/// `op` over `ranks` GPUs, `per_node` in each node, of `size_bytes`.
pub fn bench_call(
    f: &Fabric,
    op: CollectiveOp,
    ranks: u32,
    per_node: u32,
    size_bytes: f64,
) -> CollectiveCall {
    let kind = match op {
        CollectiveOp::AllReduce => Collective::AllReduce,
        CollectiveOp::AllGather => Collective::AllGather,
        CollectiveOp::ReduceScatter => Collective::ReduceScatter,
        CollectiveOp::AllToAll => return all_to_all(f, ranks, per_node, size_bytes),
    };
    choose(
        f,
        &CallShape {
            kind,
            ranks,
            per_node,
            size_bytes,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(nvlink_gbps: f64, generation: Generation, nvls: bool) -> Fabric {
        Fabric {
            nvlink_bps: nvlink_gbps * generation.nvlink_efficiency() * 1e9,
            nic_bps: 50.0 * 0.94e9,
            nvlink_latency_s: 2e-6,
            network_latency_s: 5e-6,
            nvls,
            generation,
            amd_cpu: false,
        }
    }

    fn a100() -> Fabric {
        node(300.0, Generation::Ampere, false)
    }

    fn all_reduce(ranks: u32, per_node: u32, size_bytes: f64) -> CallShape {
        CallShape {
            kind: Collective::AllReduce,
            ranks,
            per_node,
            size_bytes,
        }
    }

    #[test]
    fn small_messages_choose_ll_and_large_ones_simple() {
        let f = a100();
        let small = choose(&f, &all_reduce(8, 8, 64e3));
        let large = choose(&f, &all_reduce(8, 8, 1e9));
        assert_eq!(small.protocol, Protocol::Ll);
        assert_eq!(large.protocol, Protocol::Simple);
        assert_eq!(small.algorithm, Algorithm::Ring);
        assert!(
            small.bus_gbps(&all_reduce(8, 8, 64e3)) < large.bus_gbps(&all_reduce(8, 8, 1e9)) / 4.0
        );
    }

    #[test]
    fn ring_ll_runs_at_half_the_bus_bandwidth_under_the_architecture_cap() {
        // Hopper, one node: half of 8 x 18 x 20.6 GB/s... of 370.8 is 185.4,
        // above the 141 GB/s cap; a large LL call's bus bandwidth is the cap.
        let f = node(450.0, Generation::Hopper, false);
        let shape = all_reduce(8, 8, 1e9);
        let ll = candidate(&f, &shape, Algorithm::Ring, Protocol::Ll).unwrap();
        assert!(
            (ll.bus_gbps(&shape) - 141.0).abs() < 0.5,
            "{}",
            ll.bus_gbps(&shape)
        );
        // Volta (DGX-2, 16 ranks): half of 120 GB/s is 60, above its 39 cap.
        let v = node(150.0, Generation::Volta, false);
        let shape16 = all_reduce(16, 16, 1e9);
        let ll = candidate(&v, &shape16, Algorithm::Ring, Protocol::Ll).unwrap();
        assert!((ll.bus_gbps(&shape16) - 39.0).abs() < 0.5);
        // An A100 ring's Simple reaches NCCL's 12 x 20 GB/s.
        let big = all_reduce(8, 8, 1e12);
        let simple = candidate(&a100(), &big, Algorithm::Ring, Protocol::Simple).unwrap();
        assert!(
            (simple.bus_gbps(&big) - 240.0).abs() < 0.1,
            "{}",
            simple.bus_gbps(&big)
        );
    }

    #[test]
    fn latencies_are_tuning_cc_s() {
        let f = a100();
        // Ring LL in one node: 6.6 us base and 14 hops of 0.6 us.
        let c = candidate(&f, &all_reduce(8, 8, 8.0), Algorithm::Ring, Protocol::Ll).unwrap();
        assert!((c.latency_s - 15.0e-6).abs() < 1e-12, "{}", c.latency_s);
        // Tree Simple across 4 nodes of 8: no base, 2 x (7 NVLink hops of
        // 28 us + 2 levels of 28 us on the network).
        let t = candidate(
            &f,
            &all_reduce(32, 8, 8.0),
            Algorithm::Tree,
            Protocol::Simple,
        )
        .unwrap();
        assert!(
            (t.latency_s - 2.0 * (7.0 + 2.0) * 28e-6).abs() < 1e-12,
            "{}",
            t.latency_s
        );
    }

    #[test]
    fn nvls_takes_large_allreduces_on_nvswitch_3() {
        let f = node(450.0, Generation::Hopper, true);
        assert_eq!(
            choose(&f, &all_reduce(8, 8, 512e3)).algorithm,
            Algorithm::Ring
        );
        let large = choose(&f, &all_reduce(8, 8, 64e6));
        assert_eq!(
            (large.algorithm, large.protocol),
            (Algorithm::Nvls, Protocol::Simple)
        );
        assert_eq!(
            choose(
                &node(450.0, Generation::Hopper, false),
                &all_reduce(8, 8, 64e6)
            )
            .algorithm,
            Algorithm::Ring
        );
    }

    #[test]
    fn nvls_is_offered_for_allgather_and_reducescatter_in_one_node() {
        let f = node(450.0, Generation::Hopper, true);
        for kind in [Collective::AllGather, Collective::ReduceScatter] {
            let shape = CallShape {
                kind,
                ranks: 8,
                per_node: 8,
                size_bytes: 4e6,
            };
            let nvls = choose_algorithm(&f, &shape, Algorithm::Nvls).unwrap();
            assert!((nvls.latency_s - 25e-6).abs() < 1e-15);
            // NVLS moves 5/6 of the link per buffer byte, a ring 8/7.
            let ring = choose_algorithm(&f, &shape, Algorithm::Ring).unwrap();
            assert!(nvls.time_s != ring.time_s);
            let across = CallShape { ranks: 16, ..shape };
            assert!(choose_algorithm(&f, &across, Algorithm::Nvls).is_none());
        }
    }

    #[test]
    fn tree_wins_latency_bound_allreduces_across_many_nodes() {
        let f = a100();
        let shape = all_reduce(64 * 8, 8, 1e6);
        let c = choose(&f, &shape);
        assert_eq!(c.algorithm, Algorithm::Tree);
        // The tree's latency grows with log2 of the nodes, the ring's with the ranks.
        let ring = candidate(&f, &shape, Algorithm::Ring, c.protocol).unwrap();
        assert!(c.latency_s * 4.0 < ring.latency_s);
    }

    #[test]
    fn channels_shrink_for_small_messages() {
        let f = a100();
        assert_eq!(choose(&f, &all_reduce(8, 8, 1e9)).channels, NVLINK_CHANNELS);
        // Ring LL: 512 threads x 8 bytes x 8 ranks = 32 KiB per channel.
        let c = choose(&f, &all_reduce(8, 8, 100e3));
        assert_eq!((c.protocol, c.channels), (Protocol::Ll, 3));
        assert_eq!(choose(&f, &all_reduce(8, 8, 8.0)).channels, 1);
        assert_eq!(send(&f, 1e6, true).channels, P2P_CHANNELS);
    }

    #[test]
    fn a_fused_piece_keeps_the_whole_call_s_choice() {
        let f = a100();
        let whole = choose(&f, &all_reduce(8, 8, 64e6));
        let piece = whole.piece(8);
        assert_eq!(piece.kernel(), whole.kernel());
        assert!((piece.wire_bytes * 8.0 - whole.wire_bytes).abs() < 1e-6);
    }

    #[test]
    fn a_single_rank_costs_nothing() {
        let c = choose(&a100(), &all_reduce(1, 1, 1e6));
        assert_eq!((c.time_s, c.wire_bytes), (0.0, 0.0));
        assert_eq!(all_to_all(&a100(), 1, 1, 1e6).time_s, 0.0);
    }
}
