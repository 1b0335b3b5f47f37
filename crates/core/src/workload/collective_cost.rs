//! What one collective call costs, the way NCCL predicts it (model.md 2b):
//! per call NCCL picks an algorithm (ring, tree across nodes, NVLS on
//! NVSwitch-3 systems) and a protocol (LL, LL128, Simple) as the pair with
//! the least predicted time, where the time is a latency (a base per
//! algorithm and protocol plus one per hop) and the bytes over the bandwidth
//! the protocol reaches on the links. Small messages are latency-bound and
//! choose LL, which moves half the link's bandwidth; so a collective cut into
//! small chunks gets a low bus bandwidth, not only more latencies.
//!
//! The choice feeds the simulated flows: a call's latency is paid before its
//! bytes move, and the protocol's lost bandwidth travels as extra bytes on
//! the wire (LL really sends a flag with every four bytes of data), so flows
//! of different calls still share links by weighted max-min.
//!
//! The structure and the base latencies follow NCCL's published tuning model
//! (NVIDIA/nccl, `src/graph/tuning.cc`, `ncclTopoTuneModel`, releases 2.18
//! to 2.23); the hop latencies there are scaled by the scenario's own
//! `nvlink_latency_us` and `network_latency_us`, which stand for NCCL's ring
//! LL128 hop (1.9 us on NVLink, 4.0 us on the network).

use serde::Serialize;

use crate::workload::collective::Collective;

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

/// Fraction of a link's NCCL bandwidth that a ring with each protocol
/// reaches (tuning.cc: LL at half, LL128 at 0.92, about its 120 of 128 bytes
/// of data per line, Simple at all of it).
const RING_PROTOCOL_FRACTION: [f64; 3] = [0.5, 0.92, 1.0];

/// Tree AllReduce reaches 0.92 of the ring's bus bandwidth (tuning.cc's tree
/// refinement); its LL runs at 1/3.8 of that, its LL128 at 120/128 across nodes.
const TREE_FRACTION: f64 = 0.92;
const TREE_PROTOCOL_FRACTION: [f64; 3] = [1.0 / 3.8, 120.0 / 128.0, 1.0];

/// Fraction of the NVLink bandwidth an NVLS AllReduce moves per GPU:
/// nccl-tests all_reduce_perf on one 8 x H100 node reaches about 480 GB/s of
/// bus bandwidth with NVLS (nccl-tests issues 212, 290, 309), where each GPU
/// sends and receives its buffer once through the switch: 480 / (2 * 7/8) =
/// 274 GB/s of a link that gives rings 0.78 * 450 = 351.
pub const NVLS_FRACTION: f64 = 0.78;

/// Base latency per call, us, by protocol (LL, LL128, Simple): tuning.cc's
/// `baseLat` for Ring and Tree. NVLS has none: its hop latency is the whole.
const RING_BASE_US: [f64; 3] = [6.6, 14.0, 8.4];
const TREE_BASE_US: [f64; 3] = [6.8, 14.0, 8.4];

/// Latency per hop, us, by protocol: tuning.cc's `hwLat` for NVLink and the
/// network. The LL128 ring entries (1.9 and 4.0) are the reference the
/// scenario's latencies scale.
const NVLINK_RING_HOP_US: [f64; 3] = [0.6, 1.9, 3.4];
const NVLINK_TREE_HOP_US: [f64; 3] = [0.6, 1.25, 4.0];
const NVLINK_NVLS_US: f64 = 25.0;
const NET_RING_HOP_US: [f64; 3] = [2.7, 4.0, 14.0];
const NET_TREE_HOP_US: [f64; 3] = [5.0, 8.5, 14.0];
/// The hop each scenario latency field stands for (ring, LL128).
const NVLINK_REFERENCE_HOP_US: f64 = 1.9;
const NET_REFERENCE_HOP_US: f64 = 4.0;

/// Most channels (one thread block each on its own SM) a collective runs
/// with on NVLink: model.md 3 reads 8-32 channels on NVLink in NCCL's logs;
/// NVLS on H100 defaults to 16 (NCCL_NVLS_NCHANNELS).
pub const NVLINK_CHANNELS: u32 = 16;
/// Channels of a call whose ring crosses the network: DeepSeek-V3's report
/// (arXiv 2412.19437, section 3.2.2) saturates InfiniBand and NVLink with 10.
pub const NETWORK_CHANNELS: u32 = 10;
/// Channels of a point-to-point send (NCCL_NCHANNELS_PER_NET_PEER's default, 2).
pub const P2P_CHANNELS: u32 = 2;
/// NCCL gives a call fewer channels while each would move less than this
/// (its enqueue step shrinks the channel count for small messages; 64 KiB is
/// one Simple chunk of a 512-thread channel at NCCL's default step size).
pub const CHANNEL_MIN_BYTES: f64 = 65_536.0;

/// HBM bytes a call moves per byte it sends on a link (model.md 3: NCCL's
/// maintainers estimate 2-3 times): a reducing ring step reads the local
/// buffer and the received chunk and writes the sum (3); a copy step reads
/// and writes once (2); NVLS reductions happen in the switch (2).
const HBM_BYTES_PER_LINK_BYTE_REDUCE: f64 = 3.0;
const HBM_BYTES_PER_LINK_BYTE_COPY: f64 = 2.0;

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
}

impl Fabric {
    /// The fabric of `hw`; `nvls` where the NVSwitch reduces (NVSwitch 3).
    pub fn of(hw: &crate::model::hardware::Hardware, nvls: bool) -> Self {
        Self {
            nvlink_bps: hw.nvlink_gbps * 1e9 * crate::workload::efficiency::NVLINK_EFFICIENCY,
            nic_bps: hw.nic_gbps * 1e9 * crate::workload::efficiency::NIC_EFFICIENCY,
            nvlink_latency_s: hw.nvlink_latency_us * 1e-6,
            network_latency_s: hw.network_latency_us * 1e-6,
            nvls,
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
    /// Bytes each rank holds (nccl-tests' "size").
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

    /// Bus bandwidth the call reaches alone (nccl-tests' busbw), GB/s.
    pub fn bus_gbps(&self, shape: &CallShape) -> f64 {
        if self.time_s <= 0.0 {
            return 0.0;
        }
        shape.kind.bytes_per_rank(shape.ranks, shape.size_bytes) / self.time_s / 1e9
    }
}

/// The ring's per-rank rate alone on the fabric, bytes/s: inside one node
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

/// NCCL's latency and bandwidth of `algorithm` x `protocol` for the call,
/// or `None` where NCCL does not offer the pair.
fn candidate(
    f: &Fabric,
    shape: &CallShape,
    algorithm: Algorithm,
    protocol: Protocol,
) -> Option<CollectiveCall> {
    let n = shape.ranks;
    let nodes = shape.nodes();
    let p = protocol.index();
    let nvlink_scale = f.nvlink_latency_s / (NVLINK_REFERENCE_HOP_US * 1e-6);
    let net_scale = f.network_latency_s / (NET_REFERENCE_HOP_US * 1e-6);
    let ring_bytes = shape.kind.bytes_per_rank(n, shape.size_bytes);
    let reduces = matches!(
        shape.kind,
        Collective::AllReduce | Collective::ReduceScatter
    );
    let (latency_us, wire_bytes, rate_bps, channels) = match algorithm {
        Algorithm::Ring => {
            let steps = shape.kind.steps(n);
            let inter_steps = if nodes <= 1 {
                0
            } else if shape.kind == Collective::AllReduce {
                2 * (nodes - 1)
            } else {
                nodes - 1
            };
            let latency = RING_BASE_US[p]
                + f64::from(steps - inter_steps.min(steps)) * NVLINK_RING_HOP_US[p] * nvlink_scale
                + f64::from(inter_steps) * NET_RING_HOP_US[p] * net_scale;
            let channels = if nodes > 1 {
                NETWORK_CHANNELS
            } else {
                NVLINK_CHANNELS
            };
            (
                latency,
                ring_bytes / RING_PROTOCOL_FRACTION[p],
                ring_rate_bps(f, shape),
                channels,
            )
        }
        Algorithm::Tree => {
            if shape.kind != Collective::AllReduce || nodes <= 1 {
                return None;
            }
            let levels = f64::from(nodes).log2().ceil();
            let latency = TREE_BASE_US[p]
                + 2.0
                    * (f64::from(shape.per_node.saturating_sub(1))
                        * NVLINK_TREE_HOP_US[p]
                        * nvlink_scale
                        + levels * NET_TREE_HOP_US[p] * net_scale);
            (
                latency,
                ring_bytes / (TREE_FRACTION * TREE_PROTOCOL_FRACTION[p]),
                ring_rate_bps(f, shape),
                NETWORK_CHANNELS,
            )
        }
        Algorithm::Nvls => {
            let nvls_kind = matches!(
                shape.kind,
                Collective::AllReduce | Collective::ReduceScatter | Collective::AllGather
            );
            if !f.nvls || nodes > 1 || !nvls_kind || protocol != Protocol::Simple || n < 2 {
                return None;
            }
            // Each GPU sends its data to the switch once and receives the
            // result once: an AllReduce moves its buffer, not 2(n-1)/n of it.
            let bytes = match shape.kind {
                Collective::AllReduce => shape.size_bytes,
                _ => ring_bytes,
            };
            (
                NVLINK_NVLS_US * nvlink_scale,
                bytes / NVLS_FRACTION,
                f.nvlink_bps,
                NVLINK_CHANNELS,
            )
        }
    };
    let hbm = if reduces && algorithm != Algorithm::Nvls {
        HBM_BYTES_PER_LINK_BYTE_REDUCE
    } else {
        HBM_BYTES_PER_LINK_BYTE_COPY
    };
    let latency_s = latency_us * 1e-6;
    let channels = channels.min(((shape.size_bytes / CHANNEL_MIN_BYTES).ceil() as u32).max(1));
    Some(CollectiveCall {
        algorithm,
        protocol,
        channels,
        hbm_bytes_per_link_byte: hbm,
        latency_s,
        wire_bytes,
        time_s: latency_s + wire_bytes / rate_bps,
    })
}

/// NCCL's choice: the algorithm and protocol of least predicted time (the
/// first in NCCL's order on a tie). A call of one rank, or of no bytes,
/// costs nothing.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn node(nvlink_gbps: f64, nvls: bool) -> Fabric {
        Fabric {
            nvlink_bps: nvlink_gbps * 0.78e9,
            nic_bps: 50.0 * 0.94e9,
            nvlink_latency_s: 2e-6,
            network_latency_s: 5e-6,
            nvls,
        }
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
        let f = node(300.0, false);
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
    fn nvls_takes_large_allreduces_on_nvswitch_3() {
        let f = node(450.0, true);
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
            choose(&node(450.0, false), &all_reduce(8, 8, 64e6)).algorithm,
            Algorithm::Ring
        );
    }

    #[test]
    fn tree_wins_latency_bound_allreduces_across_many_nodes() {
        let f = node(300.0, false);
        let shape = all_reduce(64 * 8, 8, 1e6);
        let c = choose(&f, &shape);
        assert_eq!(c.algorithm, Algorithm::Tree);
        // The tree's latency grows with log2 of the nodes, the ring's with the ranks.
        let ring = candidate(&f, &shape, Algorithm::Ring, c.protocol).unwrap();
        assert!(c.latency_s * 4.0 < ring.latency_s);
    }

    #[test]
    fn channels_shrink_for_small_messages() {
        let f = node(300.0, false);
        assert_eq!(choose(&f, &all_reduce(8, 8, 1e9)).channels, NVLINK_CHANNELS);
        assert_eq!(choose(&f, &all_reduce(8, 8, 100e3)).channels, 2);
        assert_eq!(send(&f, 1e6, true).channels, P2P_CHANNELS);
    }

    #[test]
    fn a_single_rank_costs_nothing() {
        let c = choose(&node(300.0, false), &all_reduce(1, 1, 1e6));
        assert_eq!((c.time_s, c.wire_bytes), (0.0, 0.0));
    }
}
