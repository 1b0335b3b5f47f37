//! Share links: the scenario in a query string (interface.md).

use crate::scenario::ScenarioInput;

/// The query string for a scenario (without the leading `?`).
pub fn encode(input: &ScenarioInput, preset: Option<&str>) -> String {
    let _ = (input, preset);
    String::from("v=1")
}
