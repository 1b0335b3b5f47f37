//! What a row says of a value: how links and selects write it, how a
//! value typed in a link is read, and the messages that refuse one,
//! naming the valid range as the field reference states it.

use serde_json::Value;

use crate::input::kind::{Choice, Kind};
use crate::input::table::{Field, ScenarioInput};
use crate::model::scenario::Scenario;

/// "1, 2 or 4".
fn listed(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// A number as a message shows it: 1e300 in exponent form rather than its
/// 301 digits.
pub fn shown(value: f64) -> String {
    let plain = value.to_string();
    if plain.len() > 24 {
        format!("{value:e}")
    } else {
        plain
    }
}

impl Field {
    /// The section the field sits in (`"parallel"`), or `""` at the top level.
    pub fn section(&self) -> &'static str {
        self.path.split_once('.').map_or("", |(section, _)| section)
    }

    /// The field's name inside its section (`"tp"`).
    pub fn name(&self) -> &'static str {
        self.path
            .split_once('.')
            .map_or(self.path, |(_, name)| name)
    }

    /// Whether the page shows it as a number box with a slider.
    pub fn is_number(&self) -> bool {
        matches!(self.kind, Kind::Int { .. } | Kind::Real { .. })
    }

    /// Whether the number is whole.
    pub fn is_integer(&self) -> bool {
        matches!(self.kind, Kind::Int { .. } | Kind::IntOf { .. })
    }

    /// The choices of an enumerated field (empty for others).
    pub fn choices(&self) -> &'static [Choice] {
        match self.kind {
            Kind::Enum(choices) | Kind::IntOf { choices, .. } => choices,
            // `overlap.ep` stays a switch on the page (on: the schedule's
            // natural form); its lists are set in JSON and links.
            _ => &[],
        }
    }

    /// The value the input sets, as a number (numbers only).
    pub fn number(&self, input: &ScenarioInput) -> Option<f64> {
        (self.get)(input)?.as_f64()
    }

    /// The value a resolved scenario uses, as a number (numbers only).
    pub fn resolved_number(&self, scenario: &Scenario) -> Option<f64> {
        (self.resolved)(scenario)?.as_f64()
    }

    /// The value as a link or a select writes it: a name, a number, or 1/0.
    pub fn text(value: &Value) -> String {
        match value {
            Value::String(s) => s.clone(),
            Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
            // The empty list of a field of switches is the switch off.
            Value::Array(names) if names.is_empty() => "0".to_string(),
            // A list of options (`Kind::Switches`): their names joined by `+`.
            Value::Array(names) => names
                .iter()
                .map(|n| n.as_str().map_or_else(|| n.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join("+"),
            other => other.to_string(),
        }
    }

    /// Reads a value as links and selects write it ([`Field::text`]); the
    /// message says what is valid.
    pub fn parse_text(&self, raw: &str) -> Result<Value, String> {
        match self.kind {
            Kind::Int { .. } => raw.parse::<u32>().map(Value::from).map_err(|e| {
                // Digits past u32 are a whole number, only too large.
                if *e.kind() == std::num::IntErrorKind::PosOverflow {
                    self.out_of_range(raw)
                } else {
                    self.not_of_kind(&format!("{raw:?}"))
                }
            }),
            Kind::IntOf { .. } => raw
                .parse::<u32>()
                .map(Value::from)
                .map_err(|_| self.not_of_kind(&format!("{raw:?}"))),
            Kind::Real { .. } => raw
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(Value::from)
                .ok_or_else(|| self.not_of_kind(&format!("{raw:?}"))),
            // Links write a switch as 1 or 0 (`Field::text`).
            Kind::Bool => match raw {
                "1" | "true" | "on" => Ok(Value::Bool(true)),
                "0" | "false" | "off" => Ok(Value::Bool(false)),
                _ => Err(format!("{raw:?} is not a switch: valid are 1 or 0")),
            },
            Kind::Enum(choices) if choices.iter().any(|c| c.name == raw) => Ok(Value::from(raw)),
            Kind::Enum(_) => Err(self.not_of_kind(&format!("{raw:?}"))),
            // A field whose select offers no `1` is a list of names
            // (`workload.moe.recompute`): its `0` is the empty list.
            Kind::Switches { choices, .. }
                if matches!(raw, "0" | "false" | "off")
                    && !choices.iter().any(|c| c.name == "1") =>
            {
                Ok(Value::Array(Vec::new()))
            }
            Kind::Switches { options, .. } => match raw {
                "1" | "true" | "on" => Ok(Value::Bool(true)),
                "0" | "false" | "off" => Ok(Value::Bool(false)),
                // A link's query decodes `+` as a space.
                _ if raw.split(['+', ' ']).all(|n| options.contains(&n)) => Ok(Value::Array(
                    raw.split(['+', ' ']).map(Value::from).collect(),
                )),
                _ => Err(self.not_of_kind(&format!("{raw:?}"))),
            },
            // Megatron's string form without its `(...)*n`: entries split
            // at `|` (`Field::link_text`); validation reads each entry.
            Kind::Layout => Ok(Value::Array(raw.split('|').map(Value::from).collect())),
        }
    }

    /// The value as a link writes it: [`Field::text`], but a pipeline
    /// layout's entries joined by `|`, since they hold spaces and names
    /// that a `+` would run together.
    pub fn link_text(&self, value: &Value) -> String {
        match (self.kind, value) {
            (Kind::Layout, Value::Array(entries)) => entries
                .iter()
                .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join("|"),
            _ => Self::text(value),
        }
    }

    /// That a value of this field, as `given` writes it, is not of the
    /// field's kind, and what is valid (JSON's words for a switch: true or
    /// false).
    fn not_of_kind(&self, given: &str) -> String {
        let names = |choices: &[Choice]| -> Vec<&str> { choices.iter().map(|c| c.name).collect() };
        match self.kind {
            Kind::Int { min, max } => {
                format!("{given} is not a whole number: valid is {min} to {max}")
            }
            Kind::Real { min, max } => {
                format!("{given} is not a number: valid is from {min} to {max}")
            }
            Kind::IntOf { choices, noun } => format!(
                "{given} is not {noun}: valid are {} {}",
                listed(&names(choices)),
                self.unit
            ),
            Kind::Bool => format!("{given} is not a switch: valid are true or false"),
            Kind::Enum(choices) => format!(
                "{given} is not valid: valid are {}",
                names(choices).join(", ")
            ),
            Kind::Switches { options, choices } => format!(
                "{given} is not valid: valid are {} a list of {}",
                // A field whose select offers no `1` takes no `true`
                // (`workload.moe.recompute` names its modules).
                if choices.iter().any(|c| c.name == "1") {
                    "false, true, or"
                } else {
                    "false or"
                },
                options
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Kind::Layout => format!(
                "{given} is not a pipeline layout: valid is {}",
                crate::model::pipeline_layout::VALID_FORM
            ),
        }
    }

    /// What is wrong with `value`, given in scenario JSON for this field
    /// and refused by the parser, said as the field reference states what
    /// is valid (the parser's own words name Rust types: "expected u32").
    pub fn json_refusal(&self, value: &Value) -> String {
        let given = match value {
            Value::String(s) => format!("{s:?}"),
            other => other.to_string(),
        };
        // A whole number the parser refused for an integer field is out of
        // range (past u32); anything else is not of the field's kind.
        let whole = value.as_f64().filter(|x| x.fract() == 0.0);
        match (self.kind, whole.map(|x| self.check_number(x))) {
            (Kind::Int { .. }, Some(Err(out_of_range))) => out_of_range,
            _ => self.not_of_kind(&given),
        }
    }

    /// That a number of this field, as `given` writes it, is out of its
    /// range, and what is valid.
    pub fn out_of_range(&self, given: &str) -> String {
        match self.kind {
            Kind::Int { min, max } => format!("{given} is out of range: valid is {min} to {max}"),
            Kind::Real { min, max } => {
                format!("{given} is out of range: valid is from {min} to {max}")
            }
            _ => format!("{given} is out of range: valid is {}", self.kind.describe()),
        }
    }

    /// Whether `value` is in the field's range, and if not what is valid.
    /// Types are the parser's business: a value of another type passes.
    pub fn check_range(&self, value: &Value) -> Result<(), String> {
        match value.as_f64() {
            Some(x) => self.check_number(x),
            None => Ok(()),
        }
    }

    /// Whether the number `x` is in the field's range (a non-finite number
    /// never is), and if not what is valid. Other kinds have no range.
    pub fn check_number(&self, x: f64) -> Result<(), String> {
        match self.kind {
            Kind::Int { min, max } if x < f64::from(min) || x > f64::from(max) => {
                Err(self.out_of_range(&shown(x)))
            }
            Kind::Real { min, max } if !x.is_finite() || x < min || x > max => {
                Err(self.out_of_range(&shown(x)))
            }
            Kind::IntOf { choices, .. } if !choices.iter().any(|c| c.name == shown(x)) => {
                Err(self.not_of_kind(&shown(x)))
            }
            _ => Ok(()),
        }
    }
}
