//! What every collective library's call is made of, whichever library
//! runs it: the operation and its ranks (`Collective`, `CallShape`), the
//! links it runs over (`Fabric`), the kernel a call runs (`Kernel`: an
//! algorithm and a protocol, in NCCL's vocabulary, which traces and
//! tooltips use for any library) and its cost alone on idle links
//! (`CollectiveCall`). Ring collectives (model.md section 2): bytes each
//! rank sends to its ring neighbour and the number of latency steps.

use serde::Serialize;

use crate::model::hardware::{Hardware, HardwarePreset};
use crate::model::scenario::Scenario;

/// Fraction of the NIC's line rate a NCCL ring moves: 46-48 GB/s per NDR
/// 400 Gb/s (50 GB/s) InfiniBand port in nccl-tests across nodes (model.md 2b).
pub const NIC_EFFICIENCY: f64 = 0.94;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
/// The collective operations the workloads issue.
pub enum Collective {
    /// Every rank ends with the sum of all ranks' buffers.
    AllReduce,
    /// Every rank ends with its slice of the sum.
    ReduceScatter,
    /// Every rank ends with every rank's slice.
    AllGather,
    /// One rank sends its buffer to one other rank.
    SendRecv,
    /// Every rank sends a share of its buffer to every other rank (the
    /// expert-parallel dispatch and combine).
    AllToAll,
}

impl From<crate::model::scenario::CollectiveOp> for Collective {
    fn from(op: crate::model::scenario::CollectiveOp) -> Self {
        use crate::model::scenario::CollectiveOp;
        match op {
            CollectiveOp::AllReduce => Collective::AllReduce,
            CollectiveOp::AllGather => Collective::AllGather,
            CollectiveOp::ReduceScatter => Collective::ReduceScatter,
            CollectiveOp::AllToAll => Collective::AllToAll,
        }
    }
}

impl Collective {
    /// Bytes each of `ranks` ranks sends to its neighbour when each holds `size_bytes`.
    pub fn bytes_per_rank(self, ranks: u32, size_bytes: f64) -> f64 {
        let n = f64::from(ranks.max(1));
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n * size_bytes,
            Collective::ReduceScatter | Collective::AllGather | Collective::AllToAll => {
                (n - 1.0) / n * size_bytes
            }
            Collective::SendRecv => size_bytes,
        }
    }

    /// Ring steps, each paying one link latency.
    pub fn steps(self, ranks: u32) -> u32 {
        let n = ranks.max(1);
        match self {
            Collective::AllReduce => 2 * (n - 1),
            Collective::ReduceScatter | Collective::AllGather => n - 1,
            Collective::SendRecv | Collective::AllToAll => 1,
        }
    }
}

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

    pub(crate) fn index(self) -> usize {
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

    pub(crate) fn index(self) -> usize {
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
    pub fn of_scenario(s: &Scenario) -> Self {
        let nvls = s.hardware_preset == HardwarePreset::DgxH100;
        Self::of(&s.hardware, nvls)
    }

    /// The fabric of `hw`; `nvls` where the NVSwitch reduces (NVSwitch 3).
    pub fn of(hw: &Hardware, nvls: bool) -> Self {
        let generation = Generation::of(hw);
        Self {
            nvlink_bps: hw.nvlink_gbps * 1e9 * generation.nvlink_efficiency(),
            nic_bps: hw.nic_gbps * 1e9 * NIC_EFFICIENCY,
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
    /// Whether traces name its kernel by the algorithm and protocol (NCCL's
    /// calls): a library whose kernels have none sets it false.
    pub shows_kernel: bool,
}

impl CollectiveCall {
    /// The kernel a trace names the call by, where its library has one.
    pub fn trace_kernel(&self) -> Option<Kernel> {
        self.shows_kernel.then(|| self.kernel())
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_bytes_follow_the_bus_factors() {
        assert_eq!(Collective::AllReduce.bytes_per_rank(8, 800.0), 1400.0);
        assert_eq!(Collective::ReduceScatter.bytes_per_rank(8, 800.0), 700.0);
        assert_eq!(Collective::AllGather.bytes_per_rank(4, 400.0), 300.0);
        assert_eq!(Collective::SendRecv.bytes_per_rank(2, 5.0), 5.0);
        assert_eq!(Collective::AllReduce.bytes_per_rank(1, 5.0), 0.0);
        assert_eq!(Collective::AllReduce.steps(16), 30);
        assert_eq!(Collective::AllGather.steps(16), 15);
    }
}
