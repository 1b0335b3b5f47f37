//! What users give: scenario JSON and share links, parsed strictly,
//! completed from presets and defaults, and validated (the operation budget
//! comes from the workload builder's own count). Above `model` and
//! `workload`; nothing below imports it.

pub mod fields;
pub mod parse;
pub mod presets;
pub mod share_link;
pub mod validate;
