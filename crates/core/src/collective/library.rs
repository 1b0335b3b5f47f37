//! The seam every collective library implements, and the registry that
//! decides which library runs each call of a scenario.

use std::sync::Arc;

use super::call::{CallShape, Collective, CollectiveCall, Fabric, Kernel};
use super::names::NameRule;
use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::model::scenario::Scenario;

/// What a library's kernels run on, besides the links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Thread blocks on SMs, which compute then lacks (model.md 3):
    /// NCCL's channels, DeepEP's SMs.
    Sms,
    /// The copy engines (DMA), which take no SM: PyTorch SymmetricMemory's
    /// copies ("[Distributed w/ TorchTitan] Introducing Async Tensor
    /// Parallelism in PyTorch", PyTorch dev-discuss, 2024).
    CopyEngines,
}

/// One kernel to name as a profiler shows it.
#[derive(Clone, Copy, Debug)]
pub struct KernelSite<'a> {
    /// The op the kernel does most of.
    pub op: OpKind,
    /// The algorithm and protocol its call ran, where the library has them.
    pub kernel: Option<Kernel>,
    /// The element type as kernel names spell it (`bf16`, `f32`, `f16`).
    pub dtype: &'a str,
    /// Whether its group spans nodes.
    pub across_nodes: bool,
}

/// The rates one rank's share of an all-to-all reaches on each link class
/// alone, bytes/s per direction: what the library's kernels achieve, which
/// may fall short of the link's own rate (the fluid network's capacity).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkRates {
    /// Over NVLink.
    pub nvlink_bps: f64,
    /// Over the NIC.
    pub nic_bps: f64,
}

/// A collective library: how its calls cost, what they hold, and what
/// profilers call them. Implement it in one file and add one line to
/// `collective::REGISTRY`.
pub trait CollectiveLibrary: Send + Sync + std::fmt::Debug {
    /// Its name as readers see it ("NCCL", "DeepEP").
    fn name(&self) -> &'static str;

    /// Whether it runs calls of `kind` on `axis` (the registry gives each
    /// call to the first library that does).
    fn runs(&self, axis: Axis, kind: Collective) -> bool;

    /// One call of `shape` alone on idle links of `fabric`: its latency,
    /// wire bytes, time, channels (SMs held), HBM bytes per link byte, and
    /// whether traces name its kernel by an algorithm and protocol.
    fn call(&self, fabric: &Fabric, shape: &CallShape) -> CollectiveCall;

    /// The rates its all-to-all of `shape` reaches per link class. NCCL's
    /// all-to-all runs at the rates its rings reach (`Fabric`): across N
    /// nodes its bus bandwidth is then about N/(N-1) times the NIC's 46-48
    /// GB/s, as NCCL's maintainers state it (published.md section 10;
    /// `tests/bus_bandwidth.rs` checks it).
    fn all_to_all_rates(&self, fabric: &Fabric, _shape: &CallShape) -> LinkRates {
        LinkRates {
            nvlink_bps: fabric.nvlink_bps,
            nic_bps: fabric.nic_bps,
        }
    }

    /// What its kernels run on.
    fn engine(&self) -> Engine {
        Engine::Sms
    }

    /// The kernel's name as a profiler (Kineto) shows it.
    fn kernel_name(&self, site: &KernelSite) -> String;

    /// The name of the stream its kernels of `axis` run on, in a trace.
    fn stream_name(&self, axis: Axis) -> String;
}

/// A library as the registry holds it, shared by the runs of a step.
pub type LibraryRef = Arc<dyn CollectiveLibrary>;

/// A library's registry line: how a scenario selects it, and the rules by
/// which the trace importer knows its kernels (which need no scenario).
pub struct Registered {
    /// The library as `scenario` configures it, or `None` where the
    /// scenario uses it for nothing.
    pub select: fn(&Scenario) -> Option<LibraryRef>,
    /// The importer's rules for its kernels' names, read in registry order.
    pub name_rules: &'static [NameRule],
}

/// The collective a timeline op stands for, as a library's [`runs`]
/// reads it.
///
/// [`runs`]: CollectiveLibrary::runs
pub fn collective_of(op: OpKind) -> Collective {
    match op {
        OpKind::AllReduce | OpKind::EmbeddingAllReduce => Collective::AllReduce,
        OpKind::ReduceScatter => Collective::ReduceScatter,
        OpKind::AllGather => Collective::AllGather,
        OpKind::Dispatch | OpKind::Combine => Collective::AllToAll,
        _ => Collective::SendRecv,
    }
}
