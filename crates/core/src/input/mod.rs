//! What users give: scenario JSON and share links, parsed strictly,
//! completed from presets and defaults, and validated (the operation budget
//! comes from the workload builder's own count). Above `model` and
//! `workload`; nothing below imports it.
//!
//! Inside, each module imports only from those listed before it: refusals
//! (`error`); what a row says of values (`kind`); the declaration macro
//! (`declare`); how rows read the model (`reads`); the table of fields,
//! which declares the input structs (`table`); a row's messages (`field`);
//! input to model and back (`fill`); the checks (`validate`); the parser
//! (`parse`); presets, share links, and the table as users read it
//! (`fields`); the settings a choice brings along (`companions`).

mod checker;
mod cost_budget;
mod declare;
mod error;
mod expert_checks;
mod field;
mod fill;
mod kind;
mod reads;
/// Why combined 1F1B hides nothing with one micro-batch, for the page to say.
pub use reads::ep_nothing_to_pair;
mod table;

pub mod companions;
pub mod fields;
pub mod parse;
pub mod presets;
pub mod share_link;
pub mod trace_size;
pub mod validate;
