//! Components of the page besides the controls, figures and tour: the
//! compact embedded page, export and share buttons, playback, the table
//! view and the scenario's JSON.

pub mod embed;
pub mod export;
pub mod playback;
pub mod scenario_json;
pub mod share_panel;
pub mod table_view;
