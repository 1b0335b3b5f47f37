//! Collective libraries: who runs a call, what it costs alone on idle
//! links, what it takes from its GPU (SMs or copy engines, HBM traffic)
//! and what a profiler names its kernels. One trait, [`CollectiveLibrary`],
//! one file per library (`nccl/`, `deepep.rs`, `symmetric_memory.rs`) and
//! one registry line each ([`REGISTRY`]). Which library runs a call
//! follows from the scenario's existing fields (`workload.moe.dispatcher`,
//! `overlap.tp_mode`), never from a field of its own.
//!
//! This layer sits on the model and under the workload: the graph builder
//! asks it for calls, the Kineto export for kernel names, the trace
//! importer for its name rules.

pub mod call;
pub mod deepep;
mod library;
pub mod names;
pub mod nccl;
mod registry;
pub mod symmetric_memory;

pub use call::{CallShape, Collective, CollectiveCall, Fabric};
pub use library::{
    collective_of, CollectiveLibrary, Engine, KernelSite, LibraryRef, LinkRates, Registered,
};
pub use registry::{name_rules, Libraries, REGISTRY};
