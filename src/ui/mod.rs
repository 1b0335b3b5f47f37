//! Components of the page: the controls (built from the core's field
//! table), the figures (from its `Metric`), the tour, the compact embedded
//! page, export and share buttons, playback, the table view, the
//! scenario's JSON, the skip links, a phone's sticky figure bar, a
//! measured trace beside the simulated step (`measured`), and the panes
//! beside the timeline, built from one table (`panes`); the page mounted a
//! part at a time (`staged`).

pub mod controls;
pub mod embed;
pub mod export;
pub mod figures;
pub mod measured;
pub mod memory_bar;
pub mod panes;
pub mod playback;
pub mod run_status;
pub mod scenario_json;
pub mod share_panel;
pub mod skip_links;
pub mod staged;
pub mod sticky_figures;
pub mod table_view;
pub mod tour;
pub mod widgets;
