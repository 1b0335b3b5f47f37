//! What several test files share: the small random scenarios their
//! property tests draw (`small_scenario`), how two reports' figures are
//! compared (`same_figures`), and what they ask of a refused
//! scenario: that it is refused, and that the refusal names a field with a
//! hint of what is valid.
#![allow(dead_code)] // each test file uses the part it needs

pub mod layouts;
pub mod same_figures;
pub mod small_scenario;

use overlap_core::{parse_scenario, ScenarioError};

/// The refusal of a scenario JSON that must not parse.
pub fn refused(json: &str) -> ScenarioError {
    parse_scenario(json).expect_err("should be refused")
}

/// Asserts that the refusal names `field` with a message containing `hint`.
pub fn names(e: &ScenarioError, field: &str, hint: &str) {
    assert!(
        e.errors
            .iter()
            .any(|f| f.field == field && f.message.contains(hint)),
        "expected {field} with \"{hint}\", got: {e}"
    );
}
