//! Share links (interface.md): the scenario in a query string with readable
//! names, only the fields that differ from the chosen preset, and a format
//! version. The field table (`input::fields`) drives both directions, so a
//! field can never be written under one name and read under another.
//!
//! Reading never fails as a whole: every field that cannot be used is
//! reported (named by its link key, with what is valid) and the preset's
//! value stays in its place.

use serde_json::{Map, Value};

use crate::input::error::{FieldError, ScenarioError};
use crate::input::fill;
use crate::input::parse::{MAX_INPUT_BYTES, MAX_INPUT_MIB};
use crate::input::presets;
use crate::input::table::{self, Field, ScenarioInput, FIELDS};
use crate::model::scenario::Scenario;

/// The format this code writes. Readers accept every version up to it.
pub const VERSION: u32 = 1;

/// The most problems one link lists; a last entry counts the rest, so that
/// a link of a million bad parameters shows a short list.
pub const MAX_LINK_ERRORS: usize = 20;

/// The link key of a scenario field path such as "parallel.tp".
pub fn key_for_path(path: &str) -> Option<&'static str> {
    table::find(path).map(|f| f.key)
}

/// The field's value in scenario JSON, following its dotted path
/// (`parallel.tp`, `workload.moe.experts`).
fn get<'v>(v: &'v Value, f: &Field) -> Option<&'v Value> {
    f.path.split('.').try_fold(v, |at, name| at.get(name))
}

/// Sets (or with `None` removes) the field's value in scenario JSON,
/// making the objects on its path as needed.
fn set(v: &mut Value, f: &Field, value: Option<Value>) {
    let (outer, name) = f.path.rsplit_once('.').unwrap_or(("", f.path));
    let mut obj = v.as_object_mut().expect("scenario JSON is an object");
    for part in outer.split('.').filter(|p| !p.is_empty()) {
        obj = obj
            .entry(part)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("sections are objects");
    }
    match value {
        Some(x) => {
            obj.insert(name.to_string(), x);
        }
        None => {
            obj.remove(name);
        }
    }
}

/// A resolved scenario written back as complete input: every field set.
pub fn complete_input(s: &Scenario) -> ScenarioInput {
    fill::complete_input(s)
}

/// Resolves an input: [`ScenarioInput::resolve`], or a caller's remembered
/// resolutions of it.
pub type Resolver<'r> = &'r dyn Fn(&ScenarioInput) -> Result<Scenario, ScenarioError>;

/// What the input says, completed from its resolution where it resolves.
fn full_value(input: &ScenarioInput, resolved: Option<&Scenario>) -> Value {
    let completed = match resolved {
        Some(s) => complete_input(s),
        None => input.clone(),
    };
    serde_json::to_value(completed).expect("scenario input serialises")
}

/// Percent-encodes what a query value may not hold as it is.
fn escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let decoded = (b == b'%' && i + 2 < bytes.len())
            .then(|| Some(hex(bytes[i + 1])? * 16 + hex(bytes[i + 2])?))
            .flatten();
        match (b, decoded) {
            (_, Some(d)) => {
                out.push(d);
                i += 3;
            }
            (b'+', None) => {
                out.push(b' ');
                i += 1;
            }
            (b, None) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query string (without `?`) of `input` relative to preset `preset`
/// (the default preset when `None`), followed by the view's `key=value` pairs.
pub fn encode(input: &ScenarioInput, preset: Option<&str>) -> String {
    encode_with_view(input, preset, &[])
}

/// [`encode`], followed by the view's `key=value` pairs (zoom, tour chapter, ...).
pub fn encode_with_view(
    input: &ScenarioInput,
    preset: Option<&str>,
    view: &[(&str, String)],
) -> String {
    encode_resolving(input, preset, view, &ScenarioInput::resolve)
}

/// [`encode_with_view`], resolving the input and its preset's through
/// `resolve`. The page passes the resolutions it keeps: resolving validates
/// the step's cost by building a slice of it, a long task on the largest
/// presets, and the page has resolved both already for the run and its
/// "modified" mark.
pub fn encode_resolving(
    input: &ScenarioInput,
    preset: Option<&str>,
    view: &[(&str, String)],
    resolve: Resolver<'_>,
) -> String {
    let preset =
        presets::find(preset.unwrap_or(presets::DEFAULT_ID)).unwrap_or(presets::default_preset());
    let base = full_value(&preset.input(), resolve(&preset.input()).ok().as_ref());
    let scenario = resolve(input).ok();
    let current = full_value(input, scenario.as_ref());
    let mut parts = vec![format!("v={VERSION}")];
    if preset.id != presets::DEFAULT_ID {
        parts.push(format!("preset={}", preset.id));
    }
    for p in FIELDS {
        // A derived field (`kv_heads`, `ffn_hidden`) is left out of the
        // completed input when it has its rule's value, but the preset may
        // set it to another; a link cannot say "absent", and the reader
        // would keep the preset's value: the link states the value the
        // scenario uses.
        let value = get(&current, p).cloned().or_else(|| {
            get(&base, p)?;
            (p.resolved)(scenario.as_ref()?)
        });
        if let Some(value) = value {
            if get(&base, p) != Some(&value) {
                parts.push(format!("{}={}", p.key, escape(&p.link_text(&value))));
            }
        }
    }
    for (k, v) in view {
        parts.push(format!("{}={}", escape(k), escape(v)));
    }
    parts.join("&")
}

/// The shortest query string for `input`: relative to whichever preset it
/// differs from least (the default preset on a tie).
pub fn encode_shortest(input: &ScenarioInput) -> String {
    let mut best = encode(input, None);
    for p in presets::PRESETS {
        let candidate = encode(input, Some(p.id));
        if candidate.len() < best.len() {
            best = candidate;
        }
    }
    best
}

/// What a link says.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    /// The preset the link names (the default preset when it names none or
    /// an unknown one).
    pub preset: &'static str,
    /// The scenario: the preset with the link's usable fields applied.
    pub input: ScenarioInput,
    /// View parameters (`view_keys` the caller accepts), in link order.
    pub view: Vec<(String, String)>,
    /// Every part of the link that could not be used, by link key.
    pub errors: Vec<FieldError>,
}

/// Reads a query string (with or without its `?`). `view_keys` are the
/// non-scenario keys the caller understands (zoom, tour chapter, ...).
///
/// A query longer than [`MAX_INPUT_BYTES`] is not read: it opens the
/// default scenario with one message. Echoed values are clipped as
/// [`FieldError::new`] does, and at most [`MAX_LINK_ERRORS`] problems are
/// listed, then one entry that counts the rest.
pub fn decode(query: &str, view_keys: &[&str]) -> Decoded {
    decode_resolving(query, view_keys, &ScenarioInput::resolve)
}

/// [`decode`], checking the link's edits with `resolve`. The page passes
/// [`ScenarioInput::resolve_unbudgeted`]: its worker checks the step's cost
/// where it runs it (a long task on the largest presets, which the page's
/// first task must not hold), and a link over the budget opens the default
/// scenario with the worker's message, as `interface.md` says of a link
/// refused at run time.
pub fn decode_resolving(query: &str, view_keys: &[&str], resolve: Resolver<'_>) -> Decoded {
    let query = query.strip_prefix('?').unwrap_or(query);
    if query.len() > MAX_INPUT_BYTES {
        return Decoded {
            preset: presets::DEFAULT_ID,
            input: presets::default_preset().input(),
            view: Vec::new(),
            errors: vec![FieldError::new(
                "link",
                &format!(
                    "the link is {} bytes: a link is at most {MAX_INPUT_BYTES} bytes ({MAX_INPUT_MIB} MiB); the default scenario opened",
                    query.len()
                ),
            )],
        };
    }
    let pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (unescape(k), unescape(v)),
            None => (unescape(p), String::new()),
        })
        .collect();
    let mut errors = Vec::new();
    // Problems past the listed ones are only counted: a link of a million
    // bad parameters must not build a million messages.
    let mut unlisted = 0usize;
    let mut fail = |errors: &mut Vec<FieldError>, field: &str, message: String| {
        if errors.len() < MAX_LINK_ERRORS {
            errors.push(FieldError::new(field, &message));
        } else {
            unlisted += 1;
        }
    };

    let mut preset = presets::default_preset();
    if let Some((_, name)) = pairs.iter().find(|(k, _)| k == "preset") {
        match presets::find(name) {
            Some(p) => preset = p,
            None => {
                fail(
                    &mut errors,
                    "preset",
                    format!(
                        "unknown preset {name:?}: valid are {}",
                        presets::listed_ids()
                    ),
                );
            }
        }
    }
    let version_ok = match pairs.iter().find(|(k, _)| k == "v") {
        None => true,
        Some((_, v)) => match v.parse::<u32>() {
            Ok(n) if (1..=VERSION).contains(&n) => true,
            _ => {
                fail(
                    &mut errors,
                    "v",
                    format!("unknown link format version {v:?}: this app reads versions 1 to {VERSION}; the link's scenario fields were not applied"),
                );
                false
            }
        },
    };

    let mut value = serde_json::to_value(preset.input()).expect("presets serialise");
    let mut applied: Vec<&Field> = Vec::new();
    let mut view = Vec::new();
    for (key, raw) in &pairs {
        if key == "v" || key == "preset" {
            continue;
        }
        if let Some(p) = table::by_key(key) {
            if !version_ok {
                continue;
            }
            match p.parse_text(raw) {
                Ok(v) => {
                    set(&mut value, p, Some(v));
                    applied.push(p);
                }
                Err(message) => fail(&mut errors, key, message),
            }
        } else if view_keys.contains(&key.as_str()) {
            view.push((key.clone(), raw.clone()));
        } else {
            fail(
                &mut errors,
                key,
                "unknown link parameter: it was ignored".to_string(),
            );
        }
    }

    // Fields that make the scenario impossible go back to the preset's value,
    // each reported with what would be valid.
    // A link that changes no field is its preset, which resolves (every
    // preset is simulated by `tests/golden.rs`): it is not resolved here,
    // where the page's first task decodes it, but where it is run.
    let original = serde_json::to_value(preset.input()).expect("presets serialise");
    let mut input = ScenarioInput::from_json(&value.to_string()).unwrap_or_else(|_| preset.input());
    let tries = if applied.is_empty() {
        0
    } else {
        FIELDS.len() + 1
    };
    for _ in 0..tries {
        let Err(e) = resolve(&input) else { break };
        let mut reverted = false;
        for fe in &e.errors {
            let key = key_for_path(&fe.field).unwrap_or("scenario");
            if let Some(p) = applied.iter().find(|p| p.key == key) {
                set(&mut value, p, get(&original, p).cloned());
                applied.retain(|q| q.key != key);
                fail(&mut errors, key, fe.message.clone());
                reverted = true;
            }
        }
        input = ScenarioInput::from_json(&value.to_string()).unwrap_or_else(|_| preset.input());
        if !reverted {
            // The remaining problem comes from a combination: drop every edit.
            fail(
                &mut errors,
                "scenario",
                format!("{e}: the preset's values were kept"),
            );
            input = preset.input();
            break;
        }
    }
    if unlisted > 0 {
        errors.push(FieldError::new(
            "link",
            &format!("{unlisted} more problems are not listed"),
        ));
    }
    Decoded {
        preset: preset.id,
        input,
        view,
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_with_three_edits_stays_under_200_characters() {
        for p in presets::PRESETS {
            let mut i = p.input();
            i.overlap.tp = Some(false);
            i.overlap.tp_chunks = Some(16);
            i.sm_tax = Some(0.05);
            let link = encode(&i, Some(p.id));
            assert!(link.len() < 200, "{}: {link}", p.id);
            let back = decode(&link, &[]);
            assert!(back.errors.is_empty(), "{link}: {:?}", back.errors);
            assert_eq!(back.input.resolve(), i.resolve(), "{link}");
        }
    }

    #[test]
    fn the_shortest_link_picks_the_closest_preset() {
        let mut i = presets::find("contention").unwrap().input();
        i.overlap.dp = Some(false);
        assert_eq!(encode_shortest(&i), "v=1&preset=contention&dp_overlap=0");
        assert_eq!(encode_shortest(&presets::default_preset().input()), "v=1");
    }

    #[test]
    fn the_default_scenario_is_just_the_version() {
        assert_eq!(encode(&presets::default_preset().input(), None), "v=1");
    }

    #[test]
    fn a_broken_link_keeps_the_preset_and_names_each_bad_field() {
        let d = decode("?v=1&tp=banana&layers=-3", &[]);
        assert_eq!(d.preset, presets::DEFAULT_ID);
        assert_eq!(
            d.input.resolve(),
            presets::default_preset().input().resolve()
        );
        let fields: Vec<&str> = d.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["tp", "layers"]);
        assert!(d.errors[0].message.contains("whole number"));
    }

    #[test]
    fn digits_past_u32_are_out_of_range_as_typed() {
        let d = decode("?v=1&layers=99999999999999999999&tp=1e3", &[]);
        let said: Vec<(&str, &str)> = d
            .errors
            .iter()
            .map(|e| (e.field.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                (
                    "layers",
                    "99999999999999999999 is out of range: valid is 1 to 4096"
                ),
                ("tp", "\"1e3\" is not a whole number: valid is 1 to 64"),
            ]
        );
    }

    #[test]
    fn an_impossible_value_is_refused_with_what_is_valid() {
        let d = decode("v=1&preset=contention&tp=3&sm_tax=0.05", &[]);
        assert_eq!(d.preset, "contention");
        assert_eq!(d.errors.len(), 1, "{:?}", d.errors);
        assert_eq!(d.errors[0].field, "tp");
        assert_eq!(d.input.resolve().unwrap().sm_tax, Some(0.05));
    }

    #[test]
    fn an_unknown_version_opens_the_preset_it_names() {
        let d = decode("v=9&preset=coconet&tp_chunks=2", &[]);
        assert_eq!(d.preset, "coconet");
        assert_eq!(d.errors[0].field, "v");
        assert_eq!(d.input, presets::find("coconet").unwrap().input());
    }

    #[test]
    fn view_keys_pass_through_and_others_are_reported() {
        let d = decode("v=1&zoom=2.5&chapter=3&what=1", &["zoom", "chapter"]);
        assert_eq!(
            d.view,
            vec![
                ("zoom".into(), "2.5".into()),
                ("chapter".into(), "3".into())
            ]
        );
        assert_eq!(d.errors[0].field, "what");
    }
}
