//! The registry: every collective library, one line each, and the
//! selection of a scenario's libraries from it. A new library is a file
//! implementing `CollectiveLibrary` and a line in [`REGISTRY`].

use std::sync::Arc;

use super::call::Collective;
use super::library::{CollectiveLibrary, LibraryRef, Registered};
use super::names::NameRule;
use super::{deepep, nccl, symmetric_memory};
use crate::model::axis::Axis;
use crate::model::scenario::Scenario;

/// Every library, most specific first: a call goes to the first selected
/// library that runs it. NCCL runs everything, so it comes last.
pub static REGISTRY: &[Registered] = &[
    deepep::REGISTERED,
    symmetric_memory::REGISTERED,
    nccl::REGISTERED,
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
            selected: vec![Arc::new(nccl::Nccl)],
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

/// Every library's rows for the trace importer, in registry order.
pub fn name_rules() -> impl Iterator<Item = &'static NameRule> {
    REGISTRY.iter().flat_map(|r| r.name_rules.iter())
}
