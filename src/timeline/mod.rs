//! The timeline on the page: the canvas backend of the display list, the
//! animation loop, and the panel with its pointer and keyboard handling.

pub mod canvas;
pub mod frame;
pub mod panel;
pub mod theme;
