//! DeepEP (DeepSeek-V3 section 3.2.2) as a collective library: the
//! expert-parallel all-to-alls of a scenario whose `workload.moe.dispatcher`
//! is `"deepep"`. Its traffic per peer is `workload::moe`'s (node-limited
//! routing, one InfiniBand crossing per node reached); here is what its
//! kernels hold and what profilers call them.

use std::sync::Arc;

use super::call::{CallShape, Collective, CollectiveCall, Fabric};
use super::library::{CollectiveLibrary, KernelSite, LibraryRef, Registered};
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

impl CollectiveLibrary for DeepEp {
    fn name(&self) -> &'static str {
        "DeepEP"
    }

    fn runs(&self, axis: Axis, kind: Collective) -> bool {
        axis == Axis::Ep && kind == Collective::AllToAll
    }

    /// The exchange's latency and copies as an all-to-all of the group's
    /// shape; the bytes per peer travel as flows of their own
    /// (`workload::moe::all_to_all_traffic`), so only what the kernels hold
    /// is DeepEP's here: the SMs it is given.
    fn call(&self, fabric: &Fabric, shape: &CallShape) -> CollectiveCall {
        CollectiveCall {
            channels: self.sms,
            shows_kernel: false,
            ..nccl::all_to_all(fabric, shape.ranks, shape.per_node, shape.size_bytes)
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
