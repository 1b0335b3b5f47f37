//! Names of link lanes, the same on the canvas, in the SVG and in tooltips.

use overlap_core::timeline::{Direction, LinkClass, LinkLane};

/// The short name drawn beside a link lane.
pub fn link_name(link: &LinkLane) -> &'static str {
    match (link.gpu, link.class, link.direction) {
        (None, _, _) => "net core",
        (_, LinkClass::Nvlink, Direction::Out) => "NVLink out",
        (_, LinkClass::Nvlink, Direction::In) => "NVLink in",
        (_, LinkClass::Network, Direction::Out) => "NIC out",
        (_, LinkClass::Network, Direction::In) => "NIC in",
    }
}

/// The title of a link's tooltip: its class and direction.
pub fn link_title(link: &LinkLane) -> String {
    let class = match link.class {
        LinkClass::Nvlink => "NVLink",
        LinkClass::Network => "network",
    };
    let dir = match link.direction {
        Direction::Out => "out",
        Direction::In => "in",
    };
    format!("{class} {dir}")
}
