//! A task of the step's graph and what describes it: the engine's hot
//! fields (`Task`, 32 bytes), what the timeline shows (`TaskMeta`, built
//! from a builder's `Meta`), what a collective's call takes from its GPUs
//! (`CallUse`), and the GPUs and link resources tasks run on.

use crate::collective::nccl::{CollectiveCall, Kernel};
use crate::model::op::{OpKind, Phase, NONE};

/// Index of a link resource.
pub type ResourceId = u32;

/// A flow's use of one resource: `weight` member transfers cross it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Usage {
    /// The link resource crossed.
    pub resource: ResourceId,
    /// How many member transfers of the flow cross it.
    pub weight: f64,
}

/// Rate per member of a flow alone on its links: its most constrained member's share.
pub fn alone_rate(usage: &[Usage], capacity_bps: impl Fn(ResourceId) -> f64) -> f64 {
    usage
        .iter()
        .map(|u| capacity_bps(u.resource) / u.weight)
        .fold(f64::INFINITY, f64::min)
}

pub(crate) type TaskId = u32;

/// Axis index of a compute task (communication tasks use `Axis::index`):
/// the first index past the axes.
pub(crate) const COMPUTE: u8 = crate::model::axis::Axis::COUNT as u8;

/// What the engine reads for every event: kept small (32 bytes, two to a
/// cache line) so that a task's hot fields share a cache line. Everything
/// else sits in `TaskMeta`.
#[derive(Clone, Debug)]
pub(crate) struct Task {
    /// Compute: seconds at full speed. Communication: bytes per member transfer.
    pub work: f64,
    /// Seconds of the op's leading phase: a compute op's memory-bound
    /// kernels at full HBM bandwidth (the rest is compute-bound, model.md
    /// section 3), a collective's latency before its bytes move. One field
    /// because a task has only one of them: read through
    /// [`Task::memory_s`] and [`Task::latency_s`].
    lead_s: f64,
    /// Communication: index of its link usage pattern.
    pub pattern: u32,
    /// The GPU whose lane owns it (sender, for a pipeline send).
    pub gpu: u32,
    /// Communication: members (simulated GPUs) in `Graph::members[start..start+len]`.
    pub members_start: u32,
    pub members_len: u16,
    pub axis: u8,
    /// Communication: what moves its bytes (read at every start and end,
    /// without touching `TaskMeta`).
    pub runs_on: RunsOn,
}

/// What moves a collective's bytes, as far as the GPU's SMs are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunsOn {
    /// An NCCL kernel (collective or point-to-point) on its call's
    /// channels, one SM each (`Graph::channels`).
    Sms,
    /// Copy engines (DMA), which take no SM: PyTorch's SymmetricMemory
    /// Async TP steps ("[Distributed w/ TorchTitan] Introducing Async
    /// Tensor Parallelism in PyTorch", PyTorch dev-discuss, 2024: the
    /// decomposed steps are copy-engine transfers, so they do not contend
    /// with the GEMM for SMs).
    CopyEngine,
}

// Two tasks to a cache line.
const _: () = assert!(std::mem::size_of::<Task>() == 32);

impl Task {
    /// A compute op on `gpu`: `time_s` at full speed, of which `memory_s`
    /// are memory-bound kernels.
    pub fn compute(gpu: u32, time_s: f64, memory_s: f64) -> Self {
        Self {
            work: time_s,
            lead_s: memory_s,
            pattern: 0,
            gpu,
            members_start: 0,
            members_len: 0,
            axis: COMPUTE,
            runs_on: RunsOn::Sms,
        }
    }

    /// A collective of `axis` moving `bytes` per member transfer over
    /// `pattern` after `latency_s`, among `Graph::members[start..start+len]`
    /// (the first, `gpu`, owns it), on SMs.
    pub fn comm(
        axis: u8,
        pattern: u32,
        bytes: f64,
        latency_s: f64,
        gpu: u32,
        members: (u32, u16),
    ) -> Self {
        Self {
            work: bytes,
            lead_s: latency_s,
            pattern,
            gpu,
            members_start: members.0,
            members_len: members.1,
            axis,
            runs_on: RunsOn::Sms,
        }
    }

    /// Compute: seconds of the op (at full speed) that are memory-bound
    /// kernels. Communication: none.
    pub fn memory_s(&self) -> f64 {
        if self.axis == COMPUTE {
            self.lead_s
        } else {
            0.0
        }
    }

    /// Communication: latency paid before the bytes move. Compute: none.
    pub fn latency_s(&self) -> f64 {
        if self.axis == COMPUTE {
            0.0
        } else {
            self.lead_s
        }
    }

    /// Communication: sets the latency paid before the bytes move.
    pub fn set_latency_s(&mut self, latency_s: f64) {
        debug_assert!(self.axis != COMPUTE, "a compute op has no latency");
        self.lead_s = latency_s;
    }
}

/// What the timeline shows of a task; not read by the event loop.
#[derive(Clone, Debug)]
pub(crate) struct TaskMeta {
    /// Compute: FLOPs executed.
    pub flops: f64,
    pub op: OpKind,
    pub phase: Phase,
    /// Collective: the NCCL kernel its call runs.
    pub kernel: Option<Kernel>,
    pub micro_batch: u32,
    pub layer: u32,
    pub chunk: u32,
}

const _: () = assert!(std::mem::size_of::<TaskMeta>() == 24);

/// Where a simulated GPU sits in the cluster.
#[derive(Clone, Debug)]
pub(crate) struct GpuInfo {
    pub rank: u32,
    pub node: u32,
    pub stage: u32,
    pub dp_rank: u32,
    pub tp_rank: u32,
    pub represents: u32,
}

#[cfg(test)]
impl GpuInfo {
    /// GPU `rank` alone in its node and its pipeline stage, standing for
    /// itself: the GPUs of the engine's hand-built test graphs.
    pub fn lone(rank: u32) -> Self {
        Self {
            rank,
            node: rank,
            stage: rank,
            dp_rank: 0,
            tp_rank: 0,
            represents: 1,
        }
    }
}

/// A link resource of the graph's network.
#[derive(Clone, Debug)]
pub(crate) struct ResourceInfo {
    pub gpu: Option<usize>,
    pub class: crate::model::link::LinkClass,
    pub direction: crate::model::link::Direction,
    pub capacity_bps: f64,
}

/// What an op is, for the timeline.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meta {
    pub op: OpKind,
    pub phase: Phase,
    pub micro_batch: u32,
    pub layer: u32,
    pub chunk: u32,
    /// Collective: the NCCL kernel its call runs (`None` for compute and
    /// pipeline sends, whose kernel has no algorithm).
    pub kernel: Option<Kernel>,
    /// Collective: the SMs and HBM traffic of its call (`Meta::call`);
    /// without one, `CallUse::of_op`.
    pub call: Option<CallUse>,
}

/// What a collective's call takes from its GPUs besides the links: its NCCL
/// channels (one thread block, one SM each) and the HBM bytes it moves per
/// link byte (model.md 2b).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CallUse {
    pub channels: u8,
    pub hbm_per_link_byte: f64,
}

impl CallUse {
    /// The use of `call`.
    pub fn of(call: &CollectiveCall) -> Self {
        Self {
            channels: call
                .channels
                .min(crate::workload::graph::interference::CHANNEL_SLOTS as u32 - 1)
                as u8,
            hbm_per_link_byte: call.hbm_bytes_per_link_byte,
        }
    }

    /// A collective built without its call (hand-built graphs): a send
    /// holds NCCL's point-to-point channels and copies; another collective
    /// NCCL's most channels on NVLink, reducing if its op reduces.
    pub fn of_op(op: OpKind) -> Self {
        use crate::collective::nccl as cc;
        let (channels, hbm) = match op {
            OpKind::Send => (cc::P2P_CHANNELS, cc::HBM_BYTES_PER_LINK_BYTE_COPY),
            OpKind::AllReduce | OpKind::ReduceScatter => {
                (cc::NVLINK_CHANNELS, cc::HBM_BYTES_PER_LINK_BYTE_REDUCE)
            }
            _ => (cc::NVLINK_CHANNELS, cc::HBM_BYTES_PER_LINK_BYTE_COPY),
        };
        Self {
            channels: channels as u8,
            hbm_per_link_byte: hbm,
        }
    }
}

impl TaskMeta {
    pub fn new(m: Meta, flops: f64) -> Self {
        Self {
            flops,
            op: m.op,
            phase: m.phase,
            kernel: m.kernel,
            micro_batch: m.micro_batch,
            layer: m.layer,
            chunk: m.chunk,
        }
    }
}

impl Meta {
    pub fn new(op: OpKind, phase: Phase) -> Self {
        Self {
            op,
            phase,
            micro_batch: NONE,
            layer: NONE,
            chunk: 0,
            kernel: None,
            call: None,
        }
    }

    pub fn mb(mut self, micro_batch: u32) -> Self {
        self.micro_batch = micro_batch;
        self
    }

    pub fn layer(mut self, layer: u32) -> Self {
        self.layer = layer;
        self
    }

    pub fn chunk(mut self, chunk: u32) -> Self {
        self.chunk = chunk;
        self
    }

    pub fn op(mut self, op: OpKind) -> Self {
        self.op = op;
        self
    }

    /// A collective's meta with the kernel, channels and HBM traffic of its call.
    pub fn call(mut self, call: &CollectiveCall) -> Self {
        self.kernel = call.trace_kernel();
        self.call = Some(CallUse::of(call));
        self
    }
}

/// A collective laid out on the cluster's links: its link usage pattern,
/// the bytes each member moves, the latency paid before they move, and the
/// NCCL kernel its call runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    pub pattern: u32,
    pub bytes: f64,
    pub latency_s: f64,
    pub kernel: Option<Kernel>,
    /// The channels and HBM traffic of its call.
    pub call: CallUse,
}
