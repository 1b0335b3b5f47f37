//! The scenario as users write it (JSON, share links): `ScenarioInput` has
//! every field optional; `resolve` fills the gaps from the hardware preset
//! and the defaults, then validates. Parsing is strict and bounded. The
//! input structs themselves are declared, field by field, in the table
//! (`input::table`); they are re-exported here, where users look for them.

use serde::Deserialize;
use serde_json::{Map, Value};

pub use crate::input::error::{
    clip_echoes, FieldError, ScenarioError, MAX_ECHO_CHARS, MAX_MESSAGE_CHARS,
};
pub use crate::input::table::{
    HardwareInput, MoeInput, OverlapInput, ParallelInput, ScenarioInput, WorkloadInput,
};

use crate::input::kind::Kind;
use crate::input::table::{self, Field, FIELDS};
use crate::input::validate;
use crate::model::scenario::Scenario;

/// The most scenario text read from one source, in bytes: a file, standard
/// input, a pasted scenario or a share link. The largest preset is under
/// 2 KB, so this leaves room for any hand-written scenario while a stream
/// such as /dev/zero is cut off after this many bytes.
pub const MAX_INPUT_BYTES: usize = MAX_INPUT_MIB << 20;

/// [`MAX_INPUT_BYTES`] in MiB, as messages state it.
pub const MAX_INPUT_MIB: usize = 1;

impl ScenarioInput {
    /// Parses scenario JSON strictly: the text is exactly one JSON object
    /// of at most [`MAX_INPUT_BYTES`], sections are objects (never arrays
    /// read by position), and every field holds a single value. Errors name
    /// the field's path and echo at most [`MAX_ECHO_CHARS`] of any value.
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        if text.len() > MAX_INPUT_BYTES {
            return Err(too_large(text.len()));
        }
        if text.trim().is_empty() {
            // serde would say "EOF while parsing a value at line 1 column 0".
            return Err(ScenarioError::single(
                "scenario",
                "the input is empty: a scenario is one JSON object, such as \
                 {\"parallel\":{\"tp\":4}}; {} is the default scenario"
                    .to_string(),
            ));
        }
        // A first pass reads the text as plain JSON to check the shapes
        // serde's derived structs would accept by position (an array for a
        // struct) and what follows the scenario.
        let mut de = serde_json::Deserializer::from_str(text);
        let plain = Value::deserialize(&mut de);
        if let Ok(value) = &plain {
            refuse_arrays_for_objects(value)?;
            de.end().map_err(|e| {
                ScenarioError::single(
                    "scenario",
                    format!(
                        "more follows the scenario ({e}): the input must be exactly one JSON object"
                    ),
                )
            })?;
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let input = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            use serde_path_to_error::Segment;
            // serde's derived structs read arrays by position, so an index
            // in the path is an array given for an object (a syntax error
            // inside it is reported as that). A key that merely holds
            // brackets (`"nodes[0]"`) is a name, not an index.
            let indexed = e
                .path()
                .iter()
                .position(|seg| matches!(seg, Segment::Seq { .. }));
            if let Some(at) = indexed {
                let field = e
                    .path()
                    .iter()
                    .take(at)
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(".");
                let field = if field.is_empty() {
                    "scenario".to_string()
                } else {
                    field
                };
                // A field whose value is a list (a pipeline layout, EP's
                // options) refused for what one of its items holds.
                let list = table::find(&field)
                    .filter(|row| matches!(row.kind, Kind::Switches { .. } | Kind::Layout));
                let given = plain
                    .as_ref()
                    .ok()
                    .and_then(|v| v.pointer(&format!("/{}", field.replace('.', "/"))));
                if let (Some(row), Some(given)) = (list, given) {
                    return ScenarioError::single(field.as_str(), row.json_refusal(given));
                }
                return ScenarioError::single(
                    field,
                    "an array is given where an object is expected",
                );
            }
            let path = e.path().to_string();
            let inner = e.into_inner();
            let message = inner.to_string();
            // A syntax error has no field (serde_path_to_error says "." or
            // "?"), or names the section it stands in ("workload.?").
            let path = match path.strip_suffix("?").map(|p| p.trim_end_matches('.')) {
                Some("") => ".".to_string(),
                Some(section) => section.to_string(),
                None => path,
            };
            let named = unknown_field_name(&message);
            // A value the parser stopped inside (`0x10` read as 0, then `x`)
            // is reported at its section: the field is the key before it.
            let path = match key_before(text, inner.line(), inner.column()) {
                Some(key) if message.starts_with("expected `,` or `}`") && named.is_none() => {
                    if path == "." {
                        key
                    } else {
                        format!("{path}.{key}")
                    }
                }
                _ => path,
            };
            let field = match (path.as_str(), named.clone()) {
                (".", Some(name)) => name,
                (p, Some(name)) if !p.ends_with(&name) => format!("{p}.{name}"),
                (".", None) => "scenario".to_string(),
                (p, _) => p.to_string(),
            };
            // A known field's value refused: said as the field table states
            // what is valid, with where it stands in the text.
            let given = plain
                .as_ref()
                .ok()
                .filter(|_| named.is_none())
                .and_then(|v| v.pointer(&format!("/{}", field.replace('.', "/"))));
            let unreadable = plain.as_ref().err().map(ToString::to_string);
            let at = format!("(line {}, column {})", inner.line(), inner.column());
            let token = token_at(text, inner.line(), inner.column());
            if let Some(said) = table::find(&field)
                .and_then(|row| field_refusal(row, given, unreadable.as_deref(), &at, &token))
            {
                return ScenarioError::single(field.as_str(), said);
            }
            ScenarioError::single(field, message)
        })?;
        let value = plain.map_err(|e| ScenarioError::single("scenario", e.to_string()))?;
        refuse_objects_for_values(&value)?;
        Ok(input)
    }

    /// The input as indented JSON, only the fields it sets: what the
    /// command line reads back unchanged.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("scenario input always serialises")
    }

    /// Fills every missing field (hardware preset first, then defaults) and validates.
    pub fn resolve(&self) -> Result<Scenario, ScenarioError> {
        validate::resolve(self)
    }

    /// [`resolve`](Self::resolve) but for its last check, the step's cost
    /// budget, which builds slices of the step and of its all-off baseline
    /// (hundreds of milliseconds on the largest presets). For a caller that
    /// shows a scenario's fields at once and runs it elsewhere: whatever
    /// runs it must resolve it in full first (the page's worker does, and
    /// refuses a step over the budget naming the field, as this would have).
    pub fn resolve_unbudgeted(&self) -> Result<Scenario, ScenarioError> {
        validate::resolve_unbudgeted(self)
    }
}

/// What the parser refused of a known field, as the field table states what
/// is valid for it, `at` a place in the text: `value`, the field's JSON where
/// the text is JSON (its type, a whole number past u32, or a name where
/// serde_json's words would be "expected value"); else, where the first
/// pass could not read the text (`unreadable`, its words), a number too
/// large for JSON, whose field's range is still what the reader needs (the
/// typed pass may say only "expected value" of it). `None`: another error,
/// worded as the parser words it.
/// `token`, the text where the parser stopped (see [`token_at`]): a value
/// JSON cannot hold (`NaN`, `Infinity`, `+1`, `0x10`) is refused naming the
/// field and its valid range, not as serde_json's bare "expected value".
fn field_refusal(
    row: &Field,
    value: Option<&Value>,
    unreadable: Option<&str>,
    at: &str,
    token: &str,
) -> Option<String> {
    let article = if row.is_number() { "a " } else { "" };
    match (value, unreadable) {
        (Some(value), _) => Some(format!("{} {at}", row.json_refusal(value))),
        (None, Some(words)) if words.starts_with("number out of range") => Some(format!(
            "the number is too large to read {at}: valid is {article}{}",
            row.kind.describe()
        )),
        // A misspelt `true`, `false` or `null`: serde_json's "expected
        // ident" when the first letter is right, else "expected value".
        (None, Some(words))
            if words.starts_with("expected ident")
                || (words.starts_with("expected value")
                    && token.starts_with(|c: char| c.is_ascii_alphabetic())
                    && !matches!(token.trim_start_matches('-'), "NaN" | "Infinity")) =>
        {
            Some(format!(
            "`{token}` is not a JSON value (JSON's words are true, false and null, in lower \
                 case): valid is {article}{} {at}",
                row.kind.describe()
            ))
        }
        (None, Some(words))
            if words.starts_with("expected value")
                || words.starts_with("invalid number")
                || words.starts_with("expected `,` or `}`") =>
        {
            Some(format!(
                "`{token}` is not a JSON value (JSON writes numbers in decimal, with no \
                 leading + and no hexadecimal, and has no NaN or Infinity): valid is {article}{} {at}",
                row.kind.describe()
            ))
        }
        _ => None,
    }
}

/// The key of the last `"key":` before 1-based `line` and `column` on that
/// line: the field whose value the parser stopped in.
fn key_before(text: &str, line: usize, column: usize) -> Option<String> {
    let row = text.lines().nth(line.saturating_sub(1))?;
    let before: String = row.chars().take(column.saturating_sub(1)).collect();
    let colon = before.rfind(':')?;
    if before[colon + 1..].contains(['}', ',', ']', '{', '[', '"']) {
        return None;
    }
    let head = before[..colon].trim_end().strip_suffix('"')?;
    let open = head.rfind('"')?;
    let key = &head[open + 1..];
    (!key.is_empty() && !key.contains('\\')).then(|| key.to_string())
}

/// The word of `text` at 1-based `line` and `column` (where serde_json
/// stopped), and the word-like characters just before it: what the reader
/// wrote in place of a value. At most 40 characters.
fn token_at(text: &str, line: usize, column: usize) -> String {
    let Some(row) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let chars: Vec<char> = row.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    let word =
        |c: &char| !matches!(c, ',' | '}' | ']' | ':' | '{' | '[' | '"') && !c.is_whitespace();
    let start = chars[..at]
        .iter()
        .rposition(|c| !word(c))
        .map_or(0, |i| i + 1);
    let end = chars[at..]
        .iter()
        .position(|c| !word(c))
        .map_or(chars.len(), |i| at + i);
    chars[start..end].iter().take(40).collect()
}

fn too_large(len_bytes: usize) -> ScenarioError {
    ScenarioError::single(
        "scenario",
        format!(
            "the input is {len_bytes} bytes: a scenario is at most {MAX_INPUT_BYTES} bytes ({MAX_INPUT_MIB} MiB)"
        ),
    )
}

/// The field an "unknown field" or "duplicate field" message names.
fn unknown_field_name(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("duplicate field `"))?;
    Some(rest.split('`').next()?.to_string())
}

/// Whether the top-level `key` is a section (an object of fields). Asking
/// serde keeps this in step with the structs as sections are added.
fn is_section(key: &str) -> bool {
    let mut probe = Map::new();
    probe.insert(key.to_string(), Value::Object(Map::new()));
    serde_json::from_value::<ScenarioInput>(Value::Object(probe)).is_ok()
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// serde's derived structs read an array by position (`[preset, nodes]`):
/// the scenario and its sections must be objects with named fields.
fn refuse_arrays_for_objects(value: &Value) -> Result<(), ScenarioError> {
    let Some(root) = value.as_object() else {
        return Err(ScenarioError::single(
            "scenario",
            format!(
                "{} is given where an object is expected: a scenario is {{\"hardware\": {{...}}, \"parallel\": {{...}}, ...}}",
                kind_of(value)
            ),
        ));
    };
    for (key, section) in root {
        if section.is_null() && is_section(key) {
            return Err(ScenarioError::single(
                key.as_str(),
                "null is given where a section is expected: leave the section out (or write {}) \
                 for its defaults; null stands for an absent value only in a field",
            ));
        }
        if section.is_array() && is_section(key) {
            return Err(ScenarioError::single(
                key.as_str(),
                format!(
                    "an array is given where an object is expected: write its fields by name, as {{\"{}\": ...}}",
                    example_field(key)
                ),
            ));
        }
    }
    Ok(())
}

/// A field of `section` to show in a message: its first number field.
fn example_field(section: &str) -> &'static str {
    FIELDS
        .iter()
        .find(|f| f.section() == section && f.is_number())
        .map_or("field", |f| f.name())
}

/// serde_json reads `{"gpipe": null}` as the enum value `"gpipe"`: every
/// field holds a single value (number, string, true or false), so an object
/// anywhere but a section is refused.
fn refuse_objects_for_values(value: &Value) -> Result<(), ScenarioError> {
    let Some(root) = value.as_object() else {
        return Ok(());
    };
    for (key, section) in root {
        let Some(fields) = section.as_object() else {
            continue;
        };
        if !is_section(key) {
            return Err(single_value_expected(key, section));
        }
        for (name, field) in fields {
            // `workload.moe` is the one object inside a section: its own
            // fields hold single values.
            if let (true, Some(inner)) = (is_subsection(key, name), field.as_object()) {
                for (inner_name, value) in inner {
                    let path = format!("{key}.{name}.{inner_name}");
                    if value.is_object() || (value.is_array() && !takes_list(&path)) {
                        return Err(single_value_expected(&path, value));
                    }
                }
                continue;
            }
            // A field of switches (`overlap.ep`) also takes a list of names,
            // and a pipeline layout is one.
            let path = format!("{key}.{name}");
            let list_ok = field.is_array() && takes_list(&path);
            if field.is_object() || (field.is_array() && !list_ok) {
                return Err(single_value_expected(&path, field));
            }
        }
    }
    Ok(())
}

/// Whether the field at `path` takes a list (a field of switches:
/// `overlap.ep`, `workload.moe.recompute`; a pipeline layout).
fn takes_list(path: &str) -> bool {
    FIELDS
        .iter()
        .any(|f| f.path == path && matches!(f.kind, Kind::Switches { .. } | Kind::Layout))
}

/// Whether `section.name` is an object of fields (`workload.moe`): a
/// field of the table has its path below it.
fn is_subsection(section: &str, name: &str) -> bool {
    let prefix = format!("{section}.{name}.");
    FIELDS.iter().any(|f| f.path.starts_with(&prefix))
}

fn single_value_expected(field: &str, value: &Value) -> ScenarioError {
    ScenarioError::single(
        field,
        format!(
            "{} is given where a single value is expected (a number, a string, true or false)",
            kind_of(value)
        ),
    )
}

/// Parses and resolves in one go.
pub fn parse_scenario(text: &str) -> Result<Scenario, ScenarioError> {
    ScenarioInput::from_json(text)?.resolve()
}
