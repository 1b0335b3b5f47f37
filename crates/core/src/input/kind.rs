//! What a field's row says of its values: its type and valid range
//! (`Kind`), the names an enumerated field takes (`Choice`), where its
//! default comes from (`DefaultFrom`), and how a number typed on the page
//! becomes one of its values (`FieldValue`). Plain data, below the table
//! that uses it (`input::table`).

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::model::hardware::HardwarePreset;
use crate::model::scenario::{
    Attention, CollectiveOp, CpMode, Dispatcher, DpSharding, GradSync, Interference, Mlp, Mode,
    Precision, Recompute, Schedule, TpMode, WorkloadKind,
};

/// One value an enumerated field may take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// Its name in scenario JSON and in share links (`"1f1b"`).
    pub name: &'static str,
    /// What the page's select shows for it.
    pub label: &'static str,
}

/// A field's type, with what is valid for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A whole number in `min..=max`.
    Int {
        /// The smallest valid value.
        min: u32,
        /// The largest valid value.
        max: u32,
    },
    /// A finite number in `min..=max`.
    Real {
        /// The smallest valid value.
        min: f64,
        /// The largest valid value.
        max: f64,
    },
    /// A whole number from a short list (`grad_bytes`: 1, 2 or 4).
    IntOf {
        /// The valid values, by name, with their labels.
        choices: &'static [Choice],
        /// What a value is, for the message ("a gradient width").
        noun: &'static str,
    },
    /// true or false; `1`/`0` in links.
    Bool,
    /// One name from a list.
    Enum(&'static [Choice]),
    /// A switch, or a list of named options (`overlap.ep`): `false`,
    /// `true`, or the options' names, joined by `+` in links. The choices
    /// are the values a select offers: `0`, `1`, then the lists.
    Switches {
        /// The values a select offers.
        choices: &'static [Choice],
        /// The options a list may name.
        options: &'static [&'static str],
    },
    /// A list of strings, one per virtual pipeline stage
    /// (`parallel.pipeline_layout`); joined by `|` in links, as Megatron's
    /// string form joins them.
    Layout,
}

/// Where a missing field's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultFrom {
    /// One value for every scenario (`Field::default_value` states it).
    Fixed,
    /// The hardware preset's datasheet.
    HardwarePreset,
    /// Depends on the workload kind: the transformer's layout, or one TP
    /// group on one node for the micro-benchmark.
    WorkloadKind,
    /// None: the field is absent unless given, and its absence has a meaning
    /// of its own (`sm_tax`: the modelled interference applies).
    Absent,
    /// Follows other fields of the same scenario, as the text says
    /// (`kv_heads`: "heads"), so that editing those keeps it consistent.
    Derived(&'static str),
}

/// A field's value type: how a number from the page becomes one. Every
/// type a row holds implements it; only numbers convert.
pub trait FieldValue: Serialize + DeserializeOwned + Sized {
    /// The value for a number typed on the page, if this is a number type.
    fn from_number(_value: f64) -> Option<Self> {
        None
    }
}

impl FieldValue for u32 {
    fn from_number(value: f64) -> Option<Self> {
        // Saturating: the page checks whole numbers first, validation the range.
        Some(value.round().clamp(0.0, f64::from(u32::MAX)) as u32)
    }
}

impl FieldValue for f64 {
    fn from_number(value: f64) -> Option<Self> {
        Some(value)
    }
}

impl FieldValue for bool {}
impl FieldValue for crate::model::pipeline_layout::PipelineLayout {}
impl FieldValue for crate::model::ep_overlap::EpOverlap {}
impl FieldValue for crate::model::recompute_modules::RecomputeModules {}
impl FieldValue for HardwarePreset {}
impl FieldValue for WorkloadKind {}
impl FieldValue for Mode {}
impl FieldValue for Recompute {}
impl FieldValue for Schedule {}
impl FieldValue for Interference {}
impl FieldValue for Mlp {}
impl FieldValue for TpMode {}
impl FieldValue for Attention {}
impl FieldValue for DpSharding {}
impl FieldValue for GradSync {}
impl FieldValue for Dispatcher {}
impl FieldValue for Precision {}
impl FieldValue for CpMode {}
impl FieldValue for CollectiveOp {}

impl Kind {
    /// The type and valid range as the field reference states them.
    pub fn describe(&self) -> String {
        let names = |choices: &[Choice]| -> Vec<String> {
            choices.iter().map(|c| format!("`{}`", c.name)).collect()
        };
        match *self {
            Kind::Int { min, max } => format!("whole number, {min} to {max}"),
            Kind::Real { min, max } => format!("number, {min} to {max}"),
            Kind::IntOf { choices, .. } => format!("one of {}", names(choices).join(", ")),
            Kind::Bool => "true or false (`1` or `0` in links)".to_string(),
            Kind::Enum(choices) => format!("one of {}", names(choices).join(", ")),
            Kind::Switches { options, .. } => format!(
                "true or false, or a list of {} (`1`, `0` or the names joined by `+` in links)",
                options
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Kind::Layout => format!(
                "absent (the even split), or {} (entries joined by `|` in links)",
                crate::model::pipeline_layout::VALID_FORM
            ),
        }
    }
}

/// `choices![("gpipe", "GPipe"), ...]`: an enum's values and their labels.
macro_rules! choices {
    ($(($name:literal, $label:literal)),* $(,)?) => {
        &[$($crate::input::kind::Choice { name: $name, label: $label }),*]
    };
}
pub(crate) use choices;

/// `named_choices!(Schedule)`: the choices of an enum that names and
/// labels its own values (`ALL`, `name()`, `label()`, all `const`), so that
/// its names are spelled once, in the model.
macro_rules! named_choices {
    ($enum:ident) => {{
        const N: usize = $enum::ALL.len();
        let mut out = [$crate::input::kind::Choice {
            name: "",
            label: "",
        }; N];
        let mut i = 0;
        while i < N {
            out[i] = $crate::input::kind::Choice {
                name: $enum::ALL[i].name(),
                label: $enum::ALL[i].label(),
            };
            i += 1;
        }
        out
    }};
}
pub(crate) use named_choices;
