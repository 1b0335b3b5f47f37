//! NCCL's tuning model (tuning.cc `ncclTopoTuneModel`,
//! `ncclTopoGetAlgoTime`; enqueue.cc `topoGetAlgoInfo`): each algorithm
//! and protocol's latency and bandwidth on a call's shape, and the
//! channels it runs with. Every constant is NCCL's own at `v2.21.5-1`
//! (see the module above for the files).

use crate::collective::call::{
    Algorithm, CallShape, Collective, CollectiveCall, Fabric, Generation, Protocol,
};

/// tuning.cc `baseLat`, us, by protocol (LL, LL128, Simple). NVLS has none.
pub(super) const RING_BASE_US: [f64; 3] = [6.6, 14.0, 8.4];
pub(super) const TREE_BASE_US: [f64; 3] = [6.8, 14.0, 0.0];

/// tuning.cc `hwLat`, us, per hop, by protocol: NVLink and network rows.
pub(super) const NVLINK_RING_HOP_US: [f64; 3] = [0.6, 1.9, 3.4];
pub(super) const NVLINK_TREE_HOP_US: [f64; 3] = [0.6, 1.25, 28.0];
pub(super) const NVLINK_NVLS_US: f64 = 25.0;
pub(super) const NET_RING_HOP_US: [f64; 3] = [2.7, 4.0, 14.0];
pub(super) const NET_TREE_HOP_US: [f64; 3] = [5.0, 8.5, 28.0];

/// tuning.cc `getNetOverhead`: the post overhead per network step on an
/// Intel host (1 us) and an AMD one (2 us), three times that with Simple; it
/// floors the NVLink hop of a ring that spans nodes.
pub(super) const NET_OVERHEAD_INTEL_US: f64 = 1.0;
pub(super) const NET_OVERHEAD_AMD_US: f64 = 2.0;
pub(super) const NET_OVERHEAD_SIMPLE_FACTOR: f64 = 3.0;

/// The scenario's `nvlink_latency_us` and `network_latency_us` at their
/// preset values (2 and 5) stand for NCCL's hop latencies as they are;
/// edited, they scale NCCL's NVLink and network hops in proportion.
pub(super) const NVLINK_REFERENCE_US: f64 = 2.0;
pub(super) const NET_REFERENCE_US: f64 = 5.0;

/// tuning.cc `llMaxBws`, GB/s: rows Volta / Ampere / Hopper for one node,
/// or, across nodes, Intel / AMD hosts; columns 1 node, 2 nodes, more.
pub(super) const LL_MAX_GBPS: [[f64; 3]; 3] =
    [[39.0, 39.0, 20.4], [87.7, 22.5, 19.0], [141.0, 45.0, 35.0]];
/// tuning.cc `perChMaxRingLL128Bws`, GB/s per channel, [generation][nodes column].
pub(super) const PER_CH_RING_LL128_GBPS: [[f64; 3]; 3] =
    [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0], [36.7, 36.7, 36.7]];
/// tuning.cc `perChMaxTreeLL128Bws`, GB/s per channel.
pub(super) const PER_CH_TREE_LL128_GBPS: [[f64; 3]; 3] =
    [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0], [36.7, 36.7, 29.0]];
/// tuning.cc `perChMaxTreeBws`, GB/s per channel.
pub(super) const PER_CH_TREE_GBPS: [[f64; 3]; 3] =
    [[26.5, 18.5, 10.0], [24.0, 23.6, 17.8], [38.7, 41.4, 36.0]];

/// tuning.cc's refinements of the bus bandwidth: Ring LL at half (capped by
/// `llMaxBws`); Ring LL128 at 0.92 (0.7 with one rank per node); Tree at
/// 0.92, its LL at 1/3.8 of that, its LL128 at 7/9 in one node and 120/128
/// across nodes.
pub(super) const RING_LL_FACTOR: f64 = 0.5;
pub(super) const RING_LL128_FACTOR: f64 = 0.92;
pub(super) const RING_LL128_ONE_PER_NODE_FACTOR: f64 = 0.7;
pub(super) const TREE_FACTOR: f64 = 0.92;
pub(super) const TREE_LL_FACTOR: f64 = 1.0 / 3.8;
pub(super) const TREE_LL128_ONE_NODE_FACTOR: f64 = 7.0 / 9.0;
pub(super) const TREE_LL128_FACTOR: f64 = 120.0 / 128.0;
/// tuning.cc's bus-to-algorithm bandwidth ratio: a tree moves half, NVLS
/// 5/6 (a ring n / nsteps).
pub(super) const TREE_ALG_RATIO: f64 = 0.5;
pub(super) const NVLS_ALG_RATIO: f64 = 5.0 / 6.0;

/// tuning.cc `treeCorrectionFactor`, by protocol, indexed by log2(bytes / 64).
pub(super) const TREE_CORRECTION: [[f64; 23]; 3] = [
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
pub(super) const RING_PLATEAU_FACTOR: f64 = 1.4;
pub(super) const RING_PLATEAU_FACTOR_VOLTA: f64 = 1.9;
pub(super) const RING_PLATEAU_BYTES: f64 = 64.0;

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
pub(super) const CHANNEL_THREADS: [f64; 3] = [512.0, 640.0, 512.0];
pub(super) const THREAD_THRESHOLD_BYTES: [f64; 3] = [8.0, 8.0, 64.0];

/// HBM bytes a call moves per byte it sends on a link (model.md 2b, NCCL's
/// maintainers in NVIDIA/nccl issue 1428: 2-3 times): a reducing ring step
/// reads the local buffer and the received chunk and writes the sum (3); a
/// copy step reads and writes once (2); NVLS reductions happen in the
/// switch (2).
pub const HBM_BYTES_PER_LINK_BYTE_REDUCE: f64 = 3.0;
/// HBM bytes per link byte of a copying call (see the reducing one).
pub const HBM_BYTES_PER_LINK_BYTE_COPY: f64 = 2.0;

/// The ring's bus bandwidth alone on the fabric, bytes/s: inside one node
/// its NVLink; across nodes one rail per GPU of a node, each crossing one
/// NIC and the other rails' NVLink hops (as `workload::Cluster::dp_collective`
/// lays them out), summed over the node's rails.
pub(super) fn ring_rate_bps(f: &Fabric, shape: &CallShape) -> f64 {
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
pub(super) fn max_channels(algorithm: Algorithm, shape: &CallShape) -> u32 {
    match algorithm {
        Algorithm::Nvls => NVLINK_CHANNELS,
        _ if shape.nodes() > 1 => NETWORK_CHANNELS,
        _ => NVLINK_CHANNELS,
    }
}

/// enqueue.cc's channel count for a call of `size_bytes`: ring and tree drop
/// channels while each would get less than its threads' threshold; NVLS
/// runs its fixed count.
pub(super) fn channels_for(algorithm: Algorithm, protocol: Protocol, shape: &CallShape) -> u32 {
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
pub(super) fn nodes_column(nodes: u32) -> usize {
    (nodes.max(1) - 1).min(2) as usize
}

/// floor(log2(x)) for x >= 1, as NCCL's `log2i`.
pub(super) fn log2i(x: u32) -> u32 {
    31 - x.max(1).leading_zeros()
}

/// NCCL's latency (us) and algorithm bandwidth (bytes/s) of `algorithm` x
/// `protocol` for the call, or `None` where NCCL does not offer the pair.
pub(super) fn model(
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
pub(super) fn candidate(
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
        shows_kernel: true,
    })
}
