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
//! The choice is NCCL's; the time of a chosen NVLS AllReduce (or of an NVLS
//! AllGather or ReduceScatter, which NCCL's tuner offers in one node but
//! never picks over the ring there) is what it achieves (`achieved`, fitted
//! to a published AllReduce curve), not NCCL's prediction, which overshoots
//! it in the middle sizes.
//!
//! The choice feeds the simulated flows: a call's latency is paid before its
//! bytes move, and the bandwidth the protocol and algorithm lose travels as
//! extra bytes on the wire, so flows of different calls still share links
//! by weighted max-min. A call's channel count (fewer for small messages)
//! sets the SMs it holds, and its kind the HBM bytes it moves per link byte
//! (`interference`).

mod achieved;
mod tuner;

use std::sync::Arc;

use crate::collective::library::{CollectiveLibrary, KernelSite, LibraryRef, Registered};
use crate::collective::names::{NameRule, OpFrom, Pattern, TraceOp};
use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::model::scenario::{CollectiveOp, Scenario};
use achieved::achieved;
use tuner::{candidate, ring_rate_bps};

pub use crate::collective::call::{
    Algorithm, CallShape, Collective, CollectiveCall, Fabric, Generation, Kernel, Protocol,
    NIC_EFFICIENCY,
};
pub use achieved::{
    nvls_link_bytes, NVLS_ACHIEVED_LATENCY_US, NVLS_LOOP_OVERHEAD_US, NVLS_PEAK_ALG_PER_NVLINK,
    NVLS_PEAK_LINK_SHARE,
};
pub use tuner::{
    HBM_BYTES_PER_LINK_BYTE_COPY, HBM_BYTES_PER_LINK_BYTE_REDUCE, NETWORK_CHANNELS,
    NVLINK_CHANNELS, P2P_CHANNELS,
};

/// The NCCL release whose tuning model this file follows.
pub const NCCL_VERSION: &str = "2.21.5";

/// NCCL's choice: the algorithm and protocol of least predicted time (the
/// first in NCCL's order, Tree, Ring, NVLS, on a tie), timed as it achieves
/// (`achieved`: an NVLS call's calibrated time). A call of one rank,
/// or of no bytes, costs nothing.
pub fn choose(f: &Fabric, shape: &CallShape) -> CollectiveCall {
    let call = predicted(f, shape);
    achieved(f, shape, call)
}

/// NCCL's choice timed as NCCL's tuning model predicts it (tuning.cc), the
/// time the choice is made on.
pub fn predicted(f: &Fabric, shape: &CallShape) -> CollectiveCall {
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
        shows_kernel: true,
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
        .map(|c| achieved(f, shape, c))
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
        shows_kernel: true,
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
        shows_kernel: true,
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
    Nccl.call(
        f,
        &CallShape {
            kind: op.into(),
            ranks,
            per_node,
            size_bytes,
        },
    )
}

/// NCCL as a collective library: it runs every call no other library
/// claims, chosen and costed by its tuning model above.
#[derive(Debug)]
pub struct Nccl;

impl CollectiveLibrary for Nccl {
    fn name(&self) -> &'static str {
        "NCCL"
    }

    fn runs(&self, _axis: Axis, _kind: Collective) -> bool {
        true
    }

    fn call(&self, fabric: &Fabric, shape: &CallShape) -> CollectiveCall {
        match shape.kind {
            Collective::AllToAll => {
                all_to_all(fabric, shape.ranks, shape.per_node, shape.size_bytes)
            }
            _ => choose(fabric, shape),
        }
    }

    /// NCCL names a collective's kernel by the algorithm and protocol its
    /// call runs (src/device/generate.py: `ncclDevKernel_<Coll>_<Op>_<Type>_<Algo>_<Proto>`);
    /// its all-to-all runs its grouped sends as `ncclDevKernel_SendRecv`.
    fn kernel_name(&self, site: &KernelSite) -> String {
        let kernel = site
            .kernel
            .map_or(String::new(), |k| format!("_{}", k.name_suffix()));
        let dtype = site.dtype;
        let signature = "(ncclDevComm*, unsigned long, ncclWork*)";
        match site.op {
            OpKind::AllReduce | OpKind::EmbeddingAllReduce => {
                format!("ncclDevKernel_AllReduce_Sum_{dtype}{kernel}{signature}")
            }
            OpKind::ReduceScatter => {
                format!("ncclDevKernel_ReduceScatter_Sum_{dtype}{kernel}{signature}")
            }
            OpKind::AllGather => format!("ncclDevKernel_AllGather{kernel}{signature}"),
            _ => format!("ncclDevKernel_SendRecv{signature}"),
        }
    }

    fn stream_name(&self, axis: Axis) -> String {
        match axis {
            Axis::Ep => "EP all-to-all".to_string(),
            _ => format!("{} NCCL", axis.label()),
        }
    }
}

fn select(_: &Scenario) -> Option<LibraryRef> {
    Some(Arc::new(Nccl))
}

/// NCCL's registry line.
pub const REGISTERED: Registered = Registered {
    select,
    name_rules: NAME_RULES,
};

/// NCCL's kernels: the name is the collective's, then the reduction, type,
/// algorithm and protocol (NCCL src/device/generate.py).
static NAME_RULES: &[NameRule] = &[
    NameRule {
        pattern: Pattern::Prefix("ncclDevKernel_"),
        family: "NCCL",
        op: OpFrom::NameWord,
        axis: None,
        source:
            "NCCL >= 2.19 src/device/generate.py: ncclDevKernel_<Coll>_<Op>_<Type>_<Algo>_<Proto>",
    },
    NameRule {
        pattern: Pattern::Prefix("ncclSymkDevKernel_"),
        family: "NCCL",
        op: OpFrom::NameWord,
        axis: None,
        source: "NCCL >= 2.27 symmetric kernels: ncclSymkDevKernel_<Coll>_...",
    },
    NameRule {
        pattern: Pattern::Prefix("ncclKernel_"),
        family: "NCCL",
        op: OpFrom::NameWord,
        axis: None,
        source: "NCCL < 2.19: ncclKernel_<Coll>_<Algo>_<Proto>_<Op>_<Type> (HTA's test traces)",
    },
    // HolisticTraceAnalysis 0.5.0 counts every kernel whose name starts
    // with "nccl" as communication (hta/utils/utils.py, NCCL_KERNEL_RE).
    NameRule {
        pattern: Pattern::Prefix("nccl"),
        family: "NCCL",
        op: OpFrom::Fixed(TraceOp::Other),
        axis: None,
        source: "HolisticTraceAnalysis 0.5.0: any kernel named ^nccl is communication",
    },
];

#[cfg(test)]
mod tests;
