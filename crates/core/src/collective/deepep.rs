//! DeepEP (DeepSeek-V3 section 3.2.2) as a collective library: the
//! expert-parallel all-to-alls of a scenario whose `workload.moe.dispatcher`
//! is `"deepep"`. Its traffic per peer is `workload::cost::moe`'s (node-limited
//! routing, one InfiniBand crossing per node reached); here is what its
//! kernels hold and what profilers call them.

use std::sync::Arc;

use super::call::{CallShape, Collective, CollectiveCall, Fabric, NIC_EFFICIENCY};
use super::library::{CollectiveLibrary, KernelSite, LibraryRef, LinkRates, Registered};
use super::names::{function, NameRule, OpFrom, TraceOp};
use super::nccl;
use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::model::scenario::{Dispatcher, Scenario};

/// DeepEP, holding `sms` SMs while its kernels run (`workload.moe.deepep_sms`).
#[derive(Debug)]
pub struct DeepEp {
    /// SMs its dispatch and combine kernels occupy: it is given them, not
    /// tuned per call (DeepSeek-V3 3.2.2: 20 of the H800's 132).
    pub sms: u32,
}

/// Fitted to DeepEP's normal-kernel table (deepseek-ai/DeepEP
/// docs/legacy.md, "Normal kernels with NVLink and RDMA forwarding": H800,
/// NVLink 200 GB/s per direction (~160 achievable), CX7 400 Gb/s (~50
/// GB/s), 4096 tokens, hidden 7168, top-4 groups of top-8 of 256 experts,
/// FP8 dispatch, BF16 combine, 24 SMs; the calibration data of
/// published.md section 10), read through the bytes its tests count
/// (tests/legacy/test_internode.py:59-63, 224-227): the "RDMA" bytes are
/// every (token, node reached) pair, the token's own node included, which
/// crosses no NIC; the "NVL" bytes every token a rank receives, its own
/// included. With `workload::cost::moe`'s traffic, what the links actually carry
/// is then 7/8 of the NVL bytes (one node of 8), and of the RDMA bytes
/// (N-1)/N across N nodes; which is why EP 32's 58 GB/s exceeds the NIC.
///
/// The fit, each rate a fraction of its link's line rate:
/// - the NIC, from the NIC-bound rows EP 32 and EP 64 (dispatch 58 and 51,
///   combine 57 and 50 GB/s counted): 58 x 3/4, 51 x 7/8, 57 x 3/4 and
///   50 x 7/8 GB/s carried, 43.5, 44.6, 42.8 and 43.8, mean 43.7 of 50;
const NIC_OF_LINE: f64 = 43.7 / 50.0;
/// - NVLink inside one node, from EP 8 (153 and 158 GB/s counted, 5.25 of
///   the 8 GPUs receiving each token): 7/8 of it carried, 133.9 and 138.3,
///   mean 136.1 of 200;
const NVLINK_INTRANODE_OF_LINE: f64 = 136.1 / 200.0;
/// - NVLink forwarding what arrives over RDMA, from EP 16, the one
///   NVLink-bound internode row (43 GB/s RDMA counted both ways; each of
///   the 1.99 nodes a token reaches forwards it to 3.32 of its 8 GPUs):
///   43 x 3.32 x 7/8 = 124.8 GB/s carried of 200.
const NVLINK_FORWARDING_OF_LINE: f64 = 124.8 / 200.0;
/// SMs at which DeepEP's kernels saturate both links: DeepSeek-V3 section
/// 3.2.2 ("only 20 SMs are sufficient to fully utilize the bandwidths of
/// IB and NVLink"). Fewer slow them in proportion (an assumption: DeepEP
/// publishes its table at 24 SMs only).
const SATURATING_SMS: f64 = 20.0;

impl CollectiveLibrary for DeepEp {
    fn name(&self) -> &'static str {
        "DeepEP"
    }

    fn runs(&self, axis: Axis, kind: Collective) -> bool {
        axis == Axis::Ep && kind == Collective::AllToAll
    }

    /// The exchange's latency and copies as an all-to-all of the group's
    /// shape; the bytes per peer travel as flows of their own
    /// (`workload::cost::moe::all_to_all_traffic`), so only what the kernels hold
    /// is DeepEP's here: the SMs it is given.
    fn call(&self, fabric: &Fabric, shape: &CallShape) -> CollectiveCall {
        CollectiveCall {
            channels: self.sms,
            shows_kernel: false,
            ..nccl::all_to_all(fabric, shape.ranks, shape.per_node, shape.size_bytes)
        }
    }

    /// DeepEP's fitted rates (the constants above): NVLink at its
    /// intranode rate inside one node, at its forwarding rate when the
    /// group spans nodes; each of its link's line rate, which `fabric`
    /// holds at NCCL's ring efficiency.
    fn all_to_all_rates(&self, fabric: &Fabric, shape: &CallShape) -> LinkRates {
        let nvlink_line = fabric.nvlink_bps / fabric.generation.nvlink_efficiency();
        let nic_line = fabric.nic_bps / NIC_EFFICIENCY;
        let nvlink_of_line = if shape.nodes() > 1 {
            NVLINK_FORWARDING_OF_LINE
        } else {
            NVLINK_INTRANODE_OF_LINE
        };
        let sms = (f64::from(self.sms) / SATURATING_SMS).min(1.0);
        LinkRates {
            nvlink_bps: nvlink_line * nvlink_of_line * sms,
            nic_bps: nic_line * NIC_OF_LINE * sms,
        }
    }

    /// DeepEP names its kernels by namespace: `internode` where the
    /// all-to-all crosses the network, `intranode` inside one node
    /// (deep_ep/csrc/kernels/{intranode,internode}.cu).
    fn kernel_name(&self, site: &KernelSite) -> String {
        let scope = if site.across_nodes {
            "internode"
        } else {
            "intranode"
        };
        let function = if site.op == OpKind::Dispatch {
            "dispatch"
        } else {
            "combine"
        };
        format!(
            "void deep_ep::{scope}::{function}<{}>(void*, int, int)",
            site.dtype
        )
    }

    fn stream_name(&self, axis: Axis) -> String {
        format!("{} all-to-all", axis.label())
    }
}

fn select(s: &Scenario) -> Option<LibraryRef> {
    let m = s.moe().filter(|m| m.dispatcher == Dispatcher::Deepep)?;
    Some(Arc::new(DeepEp { sms: m.deepep_sms }))
}

/// DeepEP's registry line.
pub const REGISTERED: Registered = Registered {
    select,
    name_rules: NAME_RULES,
};

const DEEPEP_V1: &str = "DeepEP csrc/kernels/{intranode,internode,internode_ll}.cu \
     (namespaces deep_ep::intranode, ::internode, ::internode_ll; since v2 under deep_ep::legacy)";
const DEEPEP_V2: &str = "DeepEP deep_ep/include/deep_ep/impls/*.cuh (namespace deep_ep::elastic)";

const fn ep(name: &'static str, op: TraceOp, source: &'static str) -> NameRule {
    NameRule {
        pattern: function("deep_ep", name),
        family: "DeepEP",
        op: OpFrom::Fixed(op),
        axis: Some(Axis::Ep),
        source,
    }
}

/// DeepEP's kernels, first version and its legacy namespace, then v2
/// ("elastic"), whose epilogues are local copies and reductions (compute)
/// and whose pipeline send and receive serve PP.
static NAME_RULES: &[NameRule] = &[
    ep("dispatch", TraceOp::Dispatch, DEEPEP_V1),
    ep("combine", TraceOp::Combine, DEEPEP_V1),
    ep("notify_dispatch", TraceOp::Notify, DEEPEP_V1),
    ep("cached_notify_dispatch", TraceOp::Notify, DEEPEP_V1),
    ep("cached_notify_combine", TraceOp::Notify, DEEPEP_V1),
    ep("cached_notify", TraceOp::Notify, DEEPEP_V1),
    ep("clean_low_latency_buffer", TraceOp::Notify, DEEPEP_V1),
    ep("barrier", TraceOp::Barrier, DEEPEP_V1),
    ep("dispatch_impl", TraceOp::Dispatch, DEEPEP_V2),
    ep("hybrid_dispatch_impl", TraceOp::Dispatch, DEEPEP_V2),
    ep("combine_impl", TraceOp::Combine, DEEPEP_V2),
    ep("hybrid_combine_impl", TraceOp::Combine, DEEPEP_V2),
    ep("barrier_impl", TraceOp::Barrier, DEEPEP_V2),
    NameRule {
        axis: Some(Axis::Pp),
        ..ep("pp_send_impl", TraceOp::SendRecv, DEEPEP_V2)
    },
    NameRule {
        axis: Some(Axis::Pp),
        ..ep("pp_recv_impl", TraceOp::SendRecv, DEEPEP_V2)
    },
];
