//! What the checks of `validate` and `expert_checks` share: the refusals
//! gathered so far, each field's range from the field table, and the
//! wording of lists and counts in their messages.

use crate::input::error::FieldError;
use crate::input::kind::Kind;
use crate::input::table::FIELDS;
use crate::model::scenario::Scenario;

/// The refusals found so far, each naming its field.
pub(crate) struct Checker {
    pub(crate) errors: Vec<FieldError>,
}

impl Checker {
    pub(crate) fn fail(&mut self, field: &str, message: String) {
        self.errors.push(FieldError::new(field, &message));
    }

    /// Whether `field` is refused already (its range): a second message
    /// for the same value would say the same again.
    pub(crate) fn refused(&self, field: &str) -> bool {
        self.errors.iter().any(|e| e.field == field)
    }

    /// Checks every field of `section` (`""`: the top level) that applies to
    /// the scenario against its range in the field table, in table order.
    /// Returns whether every whole-number field passed: those are the ones
    /// the cross-field checks (layout, divisibility) compute with.
    pub(crate) fn ranges(&mut self, s: &Scenario, section: &str) -> bool {
        let mut whole_ok = true;
        for f in FIELDS.iter().filter(|f| f.section() == section) {
            let Some(value) = (f.resolved)(s) else {
                continue;
            };
            // JSON has no NaN: a non-finite number becomes null.
            let x = value.as_f64().unwrap_or(f64::NAN);
            if !f.is_number() && !matches!(f.kind, Kind::IntOf { .. }) {
                continue;
            }
            if let Err(message) = f.check_number(x) {
                self.fail(f.path, message);
                whole_ok &= !matches!(f.kind, Kind::Int { .. });
            }
        }
        whole_ok
    }
}

/// The divisors of `n` up to `limit`, listed for a message.
pub(crate) fn divisors(n: u32, limit: u32) -> String {
    let list: Vec<String> = (1..=n.min(limit))
        .filter(|d| n.is_multiple_of(*d))
        .map(|d| d.to_string())
        .collect();
    list.join(", ")
}

/// `n` and the noun, plural unless one: "1 node", "8 GPUs" (messages
/// here and the page's captions).
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
