//! Glue to the browser above the timeline: downloads, the address bar and
//! the widget's host.

pub mod address;
pub mod download;
pub mod host;
pub mod panic_notice;
