//! The page's view of the core's field table (`overlap_core::input::fields`):
//! every number control is a [`NumField`] made from its row, so that a
//! label, unit, slider range or accessor is written once, in the core.

use std::sync::LazyLock;

use overlap_core::input::fields::{self, Field, FIELDS};
use overlap_core::scenario::{Scenario, ScenarioInput};

/// A number control's field: its row in the core's table, with the parts a
/// slider and number box use.
#[derive(Clone, Copy)]
pub struct NumField {
    /// Dotted path, exactly as in the core's `FieldError::field`.
    pub field: &'static str,
    /// What the control is called.
    pub label: &'static str,
    /// Unit shown after the number field.
    pub unit: &'static str,
    /// The slider's range and step. The number field accepts any value; the
    /// core says what is valid.
    pub slider: (f64, f64, f64),
    /// Whether only whole numbers are valid.
    pub integer: bool,
    /// Sets the field from a number the user entered.
    pub set: fn(&mut ScenarioInput, f64),
    /// The core's row.
    pub row: &'static Field,
}

impl NumField {
    /// The control of a number row.
    pub const fn of(row: &'static Field) -> NumField {
        NumField {
            field: row.path,
            label: row.label,
            unit: row.unit,
            slider: row.slider,
            integer: matches!(row.kind, fields::Kind::Int { .. }),
            set: row.set_number,
            row,
        }
    }

    /// What the control shows: the user's value if set, else the resolved one.
    pub fn shown(&self, input: &ScenarioInput, resolved: Option<&Scenario>) -> Option<f64> {
        self.row
            .number(input)
            .or_else(|| resolved.and_then(|s| self.row.resolved_number(s)))
    }

    /// The control's element id.
    pub fn id(&self) -> String {
        control_id(self.field)
    }
}

/// The element id of a field's control (`f-parallel-tp`).
pub fn control_id(field: &str) -> String {
    format!("f-{}", field.replace(['.', '_'], "-"))
}

/// Number controls other modules name: the cluster shape and the layout
/// (DP re-derivation), and the knobs the compact embed offers.
pub const NODES: NumField = NumField::of(fields::field("hardware.nodes"));
/// GPUs per node.
pub const GPUS_PER_NODE: NumField = NumField::of(fields::field("hardware.gpus_per_node"));
/// TP degree.
pub const TP: NumField = NumField::of(fields::field("parallel.tp"));
/// PP degree.
pub const PP: NumField = NumField::of(fields::field("parallel.pp"));
/// TP chunks.
pub const TP_CHUNKS: NumField = NumField::of(fields::field("overlap.tp_chunks"));
/// DP bucket size.
pub const BUCKET_MB: NumField = NumField::of(fields::field("overlap.bucket_mb"));
/// SM tax.
pub const SM_TAX: NumField = NumField::of(fields::field("sm_tax"));

/// Every number row as a control, in table order.
static NUMBERS: LazyLock<Vec<NumField>> = LazyLock::new(|| {
    FIELDS
        .iter()
        .filter(|f| f.is_number())
        .map(NumField::of)
        .collect()
});

/// The number control of a path, if the row is a number.
pub fn number(path: &str) -> Option<&'static NumField> {
    NUMBERS.iter().find(|f| f.field == path)
}

/// Whether the panel has a control for the field: every row has one, so an
/// error on any other name goes to the general message box.
pub fn has_control(field: &str) -> bool {
    fields::find(field).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_row_has_a_control_with_its_label() {
        for f in FIELDS.iter().filter(|f| f.is_number()) {
            let n = number(f.path).expect("a control");
            assert_eq!(n.label, f.label);
            assert!(n.slider.0 < n.slider.1, "{}: slider range", f.path);
        }
        assert_eq!(TP.id(), "f-parallel-tp");
        assert_eq!(SM_TAX.id(), "f-sm-tax");
    }

    #[test]
    fn a_number_box_sets_its_field() {
        let mut input = ScenarioInput::default();
        (TP_CHUNKS.set)(&mut input, 8.0);
        (SM_TAX.set)(&mut input, 0.25);
        assert_eq!(input.overlap.tp_chunks, Some(8));
        assert_eq!(input.sm_tax, Some(0.25));
        assert_eq!(TP_CHUNKS.shown(&input, None), Some(8.0));
    }
}
