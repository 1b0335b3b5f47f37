//! The platform-free part of Overlap Lab's page: everything between the
//! core's `Timeline` and pixels that does not need a browser.
//!
//! - [`prepared`], [`layout`], [`scene`], [`morph`], [`lod`]: the timeline
//!   made ready for drawing, where its rows sit, the view window and the
//!   playhead, the morph between runs, and the level of detail;
//! - [`draw`] builds a [`display_list::DisplayList`] from the scene, in
//!   [`palette`] roles; [`svg`] writes it as SVG, and the app's canvas
//!   painter paints the same list;
//! - [`slide`]: the timeline with a caption and a legend, for exports;
//! - [`shown_gpus`]: which GPUs the lanes are drawn for;
//!   [`view_query`]: the view keys of share links; [`panes`]: the
//!   pictures beside the timeline, in one table; [`tip`]: the tooltip's
//!   text; [`format`]: how numbers are written;
//! - [`measured`]: an imported profiler trace above the simulated timeline,
//!   the two sides' figures and where they differ most;
//! - [`tour`]: the guided tour's chapters as data, their text filled from
//!   the figures; [`summary`]: the step in one sentence.
//!
//! No web dependency: every test here runs natively.
#![warn(missing_docs)]

pub mod axis_reading;
pub mod axis_words;
pub mod bus_group;
pub mod bus_plot;
pub mod classify_link;
pub mod display_list;
pub mod draw;
pub mod format;
pub mod layout;
pub mod links;
pub mod lod;
pub mod measured;
pub mod memory_advice;
pub mod morph;
pub mod palette;
pub mod panes;
pub mod plot;
pub mod prepared;
pub mod report_csv;
pub mod scene;
pub mod search_plot;
pub mod shown_gpus;
pub mod slide;
pub mod summary;
pub mod svg;
pub mod sweep_plot;
pub mod table;
pub mod time_window;
pub mod tip;
pub mod tour;
pub mod trace_size;
pub mod view_query;
pub mod why;
pub mod windows;

#[cfg(test)]
mod testing;
