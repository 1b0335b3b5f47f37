//! The kinds of link a GPU has, and which way traffic crosses them.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
/// Which fabric a link belongs to.
pub enum LinkClass {
    /// NVLink through the node's switch.
    Nvlink,
    /// The inter-node network (InfiniBand), through the NIC.
    Network,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
/// Which way traffic crosses a link.
pub enum Direction {
    /// Leaving the GPU.
    Out,
    /// Arriving at the GPU.
    In,
}
