//! PyTorch's SymmetricMemory as a collective library: the ring steps of
//! Async TP (`overlap.tp_mode: "async"` with sequence parallelism and TP
//! overlap on), each a copy-engine transfer of one sequence slice to the
//! ring neighbour under a GEMM piece.

use std::sync::Arc;

use super::call::{CallShape, Collective, CollectiveCall, Fabric};
use super::library::{CollectiveLibrary, Engine, KernelSite, LibraryRef, Registered};
use super::names::{function, NameRule, OpFrom, Pattern, TraceOp};
use super::nccl;
use crate::model::axis::Axis;
use crate::model::scenario::{Scenario, TpMode, Workload};

/// SymmetricMemory's copy-engine transfers.
#[derive(Debug)]
pub struct SymmetricMemory;

impl CollectiveLibrary for SymmetricMemory {
    fn name(&self) -> &'static str {
        "SymmetricMemory"
    }

    fn runs(&self, axis: Axis, kind: Collective) -> bool {
        axis == Axis::Tp && kind == Collective::SendRecv
    }

    /// A step moves one slice to one peer inside the node: the link's
    /// latency and bandwidth, as a point-to-point send. Traces and tooltips
    /// have shown each step by the point-to-point call it stands in for
    /// (Ring, Simple).
    fn call(&self, fabric: &Fabric, shape: &CallShape) -> CollectiveCall {
        nccl::send(fabric, shape.size_bytes, shape.nodes() > 1)
    }

    fn engine(&self) -> Engine {
        Engine::CopyEngines
    }

    /// Kineto names a peer-to-peer copy "Memcpy PtoP"; the Kineto export
    /// has so far named the steps by the NCCL call they replace, which
    /// HolisticTraceAnalysis counts as communication (it counts only
    /// `^nccl` kernels).
    fn kernel_name(&self, site: &KernelSite) -> String {
        nccl::Nccl.kernel_name(site)
    }

    fn stream_name(&self, axis: Axis) -> String {
        nccl::Nccl.stream_name(axis)
    }
}

fn select(s: &Scenario) -> Option<LibraryRef> {
    let Workload::Transformer(t) = &s.workload else {
        return None;
    };
    let decomposed = s.overlap.tp && t.sequence_parallel && s.overlap.tp_mode == TpMode::Async;
    decomposed.then(|| Arc::new(SymmetricMemory) as LibraryRef)
}

/// SymmetricMemory's registry line.
pub const REGISTERED: Registered = Registered {
    select,
    name_rules: NAME_RULES,
};

const SYMM_OPS: &str = "PyTorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu";
const SYMM_SIGNALS: &str = "PyTorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemory.cu \
     (barrier, put_signal, wait_signal; Async TP orders its copies with them)";

const fn symm(name: &'static str, op: TraceOp, source: &'static str) -> NameRule {
    NameRule {
        pattern: function("", name),
        family: "SymmetricMemory",
        op: OpFrom::Fixed(op),
        axis: None,
        source,
    }
}

/// Its collectives (torch.ops.symm_mem.*, in an anonymous namespace), its
/// signals, and the copy-engine copies Async TP moves its shards with.
static NAME_RULES: &[NameRule] = &[
    symm("one_shot_all_reduce_kernel", TraceOp::AllReduce, SYMM_OPS),
    symm("two_shot_all_reduce_kernel", TraceOp::AllReduce, SYMM_OPS),
    symm("two_shot_all_reduce_kernel_inplace", TraceOp::AllReduce, SYMM_OPS),
    symm("multimem_all_reduce_kernel", TraceOp::AllReduce, SYMM_OPS),
    symm("multimem_one_shot_all_reduce_kernel", TraceOp::AllReduce, SYMM_OPS),
    symm("multimem_all_gather_kernel", TraceOp::AllGather, SYMM_OPS),
    symm("barrier_kernel", TraceOp::Barrier, SYMM_SIGNALS),
    symm("put_signal_kernel", TraceOp::Barrier, SYMM_SIGNALS),
    symm("wait_signal_kernel", TraceOp::Barrier, SYMM_SIGNALS),
    NameRule {
        pattern: Pattern::Prefix("Memcpy PtoP"),
        family: "P2P",
        op: OpFrom::Fixed(TraceOp::Copy),
        axis: None,
        source: "Kineto's name for CUPTI's peer-to-peer memcpy kind (libkineto, memcpyKindString: \"PtoP\")",
    },
];
