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

/// A collective library: how its calls cost, what they hold, and what
/// profilers call them. Implement it in one file and add one line to
/// [`REGISTRY`].
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

/// Every library, most specific first: a call goes to the first selected
/// library that runs it. NCCL runs everything, so it comes last.
pub static REGISTRY: &[Registered] = &[
    super::deepep::REGISTERED,
    super::symmetric_memory::REGISTERED,
    super::nccl::REGISTERED,
];

/// The libraries a scenario's calls run on.
#[derive(Clone, Debug)]
pub struct Libraries {
    selected: Vec<LibraryRef>,
}

impl Default for Libraries {
    /// NCCL alone: what a hand-built graph's collectives run on.
    fn default() -> Self {
        Self {
            selected: vec![Arc::new(super::nccl::Nccl)],
        }
    }
}

impl Libraries {
    /// The libraries the scenario's fields select, in registry order.
    pub fn of(s: &Scenario) -> Self {
        Self {
            selected: REGISTRY.iter().filter_map(|r| (r.select)(s)).collect(),
        }
    }

    /// The same, with `library` first: it runs every call it claims (for
    /// a library outside the registry, such as a test's).
    pub fn with_first(mut self, library: LibraryRef) -> Self {
        self.selected.insert(0, library);
        self
    }

    /// The library that runs calls of `kind` on `axis`.
    pub fn for_call(&self, axis: Axis, kind: Collective) -> &dyn CollectiveLibrary {
        self.selected
            .iter()
            .find(|l| l.runs(axis, kind))
            .expect("NCCL runs every call")
            .as_ref()
    }

    /// The library's place in the selection: a key that tells libraries
    /// apart without comparing them.
    pub fn index_for(&self, axis: Axis, kind: Collective) -> usize {
        self.selected
            .iter()
            .position(|l| l.runs(axis, kind))
            .expect("NCCL runs every call")
    }
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
