//! Share links (interface.md): the scenario in a query string with readable
//! names, only the fields that differ from the chosen preset, and a format
//! version. One typed table of properties drives both directions, so a
//! field can never be written under one name and read under another.
//!
//! Reading never fails as a whole: every field that cannot be used is
//! reported (named by its link key, with what is valid) and the preset's
//! value stays in its place.

use serde_json::{Map, Value};

use crate::input::parse::{FieldError, ScenarioInput, MAX_INPUT_BYTES, MAX_INPUT_MIB};
use crate::input::presets;
use crate::model::scenario::Scenario;

/// The format this code writes. Readers accept every version up to it.
pub const VERSION: u32 = 1;

/// The most problems one link lists; a last entry counts the rest, so that
/// a link of a million bad parameters shows a short list.
pub const MAX_LINK_ERRORS: usize = 20;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Int,
    Real,
    Bool,
    Enum(&'static [&'static str]),
}

/// One scenario field: its link key and its place in the scenario JSON.
struct Prop {
    key: &'static str,
    path: [&'static str; 2],
    kind: Kind,
}

macro_rules! props {
    ($($key:literal => $section:literal . $field:literal : $kind:expr),* $(,)?) => {
        &[$(Prop { key: $key, path: [$section, $field], kind: $kind }),*]
    };
}

/// Version 1's keys. Add keys freely; never rename or reuse one.
const PROPS: &[Prop] = props![
    "hw" => "hardware"."preset": Kind::Enum(&["dgx2-v100", "dgx-a100", "dgx-h100"]),
    "nodes" => "hardware"."nodes": Kind::Int,
    "gpus_per_node" => "hardware"."gpus_per_node": Kind::Int,
    "peak_tflops" => "hardware"."peak_tflops": Kind::Real,
    "hbm_gbps" => "hardware"."hbm_gbps": Kind::Real,
    "nvlink_gbps" => "hardware"."nvlink_gbps": Kind::Real,
    "nic_gbps" => "hardware"."nic_gbps": Kind::Real,
    "oversubscription" => "hardware"."oversubscription": Kind::Real,
    "nvlink_latency_us" => "hardware"."nvlink_latency_us": Kind::Real,
    "network_latency_us" => "hardware"."network_latency_us": Kind::Real,
    "sms" => "hardware"."sms": Kind::Int,
    "max_connections" => "hardware"."max_connections": Kind::Int,
    "kind" => "workload"."kind": Kind::Enum(&["transformer", "matmul_allreduce"]),
    "mode" => "workload"."mode": Kind::Enum(&["train", "inference"]),
    "layers" => "workload"."layers": Kind::Int,
    "hidden" => "workload"."hidden": Kind::Int,
    "heads" => "workload"."heads": Kind::Int,
    "seq" => "workload"."seq": Kind::Int,
    "vocab" => "workload"."vocab": Kind::Int,
    "micro_batch" => "workload"."micro_batch": Kind::Int,
    "global_batch" => "workload"."global_batch": Kind::Int,
    "recompute" => "workload"."recompute": Kind::Enum(&["none", "selective", "full"]),
    "sequence_parallel" => "workload"."sequence_parallel": Kind::Bool,
    "m" => "workload"."m": Kind::Int,
    "n" => "workload"."n": Kind::Int,
    "k" => "workload"."k": Kind::Int,
    "tp" => "parallel"."tp": Kind::Int,
    "pp" => "parallel"."pp": Kind::Int,
    "dp" => "parallel"."dp": Kind::Int,
    "schedule" => "parallel"."schedule": Kind::Enum(&["gpipe", "1f1b", "interleaved", "zb-1p", "zb-2p", "zb-v", "dualpipe-v"]),
    "virtual_stages" => "parallel"."virtual_stages": Kind::Int,
    "scatter_gather" => "parallel"."scatter_gather": Kind::Bool,
    "tp_overlap" => "overlap"."tp": Kind::Bool,
    "pp_overlap" => "overlap"."pp": Kind::Bool,
    "dp_overlap" => "overlap"."dp": Kind::Bool,
    "tp_chunks" => "overlap"."tp_chunks": Kind::Int,
    "bucket_mb" => "overlap"."bucket_mb": Kind::Real,
    "grad_bytes" => "overlap"."grad_bytes": Kind::Int,
    "sm_tax" => ""."sm_tax": Kind::Real,
    "interference" => ""."interference": Kind::Enum(&["modelled", "off"]),
];

/// The link key of a scenario field path such as "parallel.tp".
pub fn key_for_path(path: &str) -> Option<&'static str> {
    PROPS.iter().find(|p| dotted(p) == path).map(|p| p.key)
}

fn dotted(p: &Prop) -> String {
    if p.path[0].is_empty() {
        p.path[1].to_string()
    } else {
        format!("{}.{}", p.path[0], p.path[1])
    }
}

fn get<'v>(v: &'v Value, p: &Prop) -> Option<&'v Value> {
    if p.path[0].is_empty() {
        v.get(p.path[1])
    } else {
        v.get(p.path[0])?.get(p.path[1])
    }
}

fn set(v: &mut Value, p: &Prop, value: Option<Value>) {
    let obj = v.as_object_mut().expect("scenario JSON is an object");
    let section = if p.path[0].is_empty() {
        obj
    } else {
        obj.entry(p.path[0])
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("sections are objects")
    };
    match value {
        Some(x) => {
            section.insert(p.path[1].to_string(), x);
        }
        None => {
            section.remove(p.path[1]);
        }
    }
}

/// A resolved scenario written back as complete input: every field set.
pub fn complete_input(s: &Scenario) -> ScenarioInput {
    use crate::input::parse::*;
    use crate::model::scenario::*;
    let mut i = ScenarioInput::default();
    let hw = &s.hardware;
    i.hardware = HardwareInput {
        preset: Some(s.hardware_preset),
        nodes: Some(hw.nodes),
        gpus_per_node: Some(hw.gpus_per_node),
        peak_tflops: Some(hw.peak_tflops),
        hbm_gbps: Some(hw.hbm_gbps),
        nvlink_gbps: Some(hw.nvlink_gbps),
        nic_gbps: Some(hw.nic_gbps),
        oversubscription: Some(hw.oversubscription),
        nvlink_latency_us: Some(hw.nvlink_latency_us),
        network_latency_us: Some(hw.network_latency_us),
        sms: Some(hw.sms),
        max_connections: Some(hw.max_connections),
    };
    i.workload = match &s.workload {
        Workload::Transformer(t) => WorkloadInput {
            kind: Some(WorkloadKind::Transformer),
            mode: Some(t.mode),
            layers: Some(t.layers),
            hidden: Some(t.hidden),
            heads: Some(t.heads),
            seq: Some(t.seq),
            vocab: Some(t.vocab),
            micro_batch: Some(t.micro_batch),
            global_batch: Some(t.global_batch),
            recompute: Some(t.recompute),
            sequence_parallel: Some(t.sequence_parallel),
            ..WorkloadInput::default()
        },
        Workload::MatmulAllreduce(mm) => WorkloadInput {
            kind: Some(WorkloadKind::MatmulAllreduce),
            m: Some(mm.m),
            n: Some(mm.n),
            k: Some(mm.k),
            ..WorkloadInput::default()
        },
    };
    let p = &s.parallel;
    i.parallel = ParallelInput {
        tp: Some(p.tp),
        pp: Some(p.pp),
        dp: Some(p.dp),
        schedule: Some(p.schedule),
        virtual_stages: Some(p.virtual_stages),
        scatter_gather: Some(p.scatter_gather),
    };
    let o = &s.overlap;
    i.overlap = OverlapInput {
        tp: Some(o.tp),
        pp: Some(o.pp),
        dp: Some(o.dp),
        tp_chunks: Some(o.tp_chunks),
        bucket_mb: Some(o.bucket_mb),
        grad_bytes: Some(o.grad_bytes),
    };
    i.sm_tax = s.sm_tax;
    i.interference = Some(s.interference);
    i
}

/// What the input says, completed from its resolution where it resolves.
fn full_value(input: &ScenarioInput) -> Value {
    let completed = match input.resolve() {
        Ok(s) => complete_input(&s),
        Err(_) => input.clone(),
    };
    serde_json::to_value(completed).expect("scenario input serialises")
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
        other => other.to_string(),
    }
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

pub fn encode_with_view(
    input: &ScenarioInput,
    preset: Option<&str>,
    view: &[(&str, String)],
) -> String {
    let preset =
        presets::find(preset.unwrap_or(presets::DEFAULT_ID)).unwrap_or(presets::default_preset());
    let base = full_value(&preset.input());
    let current = full_value(input);
    let mut parts = vec![format!("v={VERSION}")];
    if preset.id != presets::DEFAULT_ID {
        parts.push(format!("preset={}", preset.id));
    }
    for p in PROPS {
        if let Some(value) = get(&current, p) {
            if get(&base, p) != Some(value) {
                parts.push(format!("{}={}", p.key, escape(&text(value))));
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
    pub preset: &'static str,
    pub input: ScenarioInput,
    /// View parameters (`view_keys` the caller accepts), in link order.
    pub view: Vec<(String, String)>,
    /// Every part of the link that could not be used, by link key.
    pub errors: Vec<FieldError>,
}

fn parse_value(p: &Prop, raw: &str) -> Result<Value, String> {
    match p.kind {
        Kind::Int => raw
            .parse::<u32>()
            .map(Value::from)
            .map_err(|_| format!("{raw:?} is not a whole number of 0 or more")),
        Kind::Real => raw
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Value::from)
            .ok_or_else(|| format!("{raw:?} is not a number")),
        Kind::Bool => match raw {
            "1" | "true" | "on" => Ok(Value::Bool(true)),
            "0" | "false" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("{raw:?} is not a switch: valid are 1 or 0")),
        },
        Kind::Enum(options) => {
            if options.contains(&raw) {
                Ok(Value::from(raw))
            } else {
                Err(format!(
                    "{raw:?} is not valid: valid are {}",
                    options.join(", ")
                ))
            }
        }
    }
}

/// Reads a query string (with or without its `?`). `view_keys` are the
/// non-scenario keys the caller understands (zoom, tour chapter, ...).
///
/// A query longer than [`MAX_INPUT_BYTES`] is not read: it opens the
/// default scenario with one message. Echoed values are clipped as
/// [`FieldError::new`] does, and at most [`MAX_LINK_ERRORS`] problems are
/// listed, then one entry that counts the rest.
pub fn decode(query: &str, view_keys: &[&str]) -> Decoded {
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
                let names: Vec<&str> = presets::PRESETS.iter().map(|p| p.id).collect();
                fail(
                    &mut errors,
                    "preset",
                    format!("unknown preset {name:?}: valid are {}", names.join(", ")),
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
    let mut applied: Vec<&Prop> = Vec::new();
    let mut view = Vec::new();
    for (key, raw) in &pairs {
        if key == "v" || key == "preset" {
            continue;
        }
        if let Some(p) = PROPS.iter().find(|p| p.key == key) {
            if !version_ok {
                continue;
            }
            match parse_value(p, raw) {
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
    let original = serde_json::to_value(preset.input()).expect("presets serialise");
    let mut input = ScenarioInput::from_json(&value.to_string()).unwrap_or_else(|_| preset.input());
    for _ in 0..=PROPS.len() {
        let Err(e) = input.resolve() else { break };
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
