//! What the parser says of text that is not the scenario JSON it reads
//! (issue 45): values JSON cannot hold, keys that hold brackets or
//! invisible characters, and `null`, which stands for an absent field.

use overlap_core::input::fields::FIELDS;
use overlap_core::ScenarioInput;

fn refusal(text: &str) -> (String, String) {
    let e = ScenarioInput::from_json(text).expect_err(text);
    let first = e.errors.into_iter().next().unwrap();
    (first.field, first.message)
}

#[test]
fn values_json_cannot_hold_name_the_field_and_its_range() {
    for (text, field, range) in [
        (r#"{"sm_tax":NaN}"#, "sm_tax", "0 to 0.9"),
        (r#"{"sm_tax":Infinity}"#, "sm_tax", "0 to 0.9"),
        (r#"{"sm_tax":-Infinity}"#, "sm_tax", "0 to 0.9"),
        (
            r#"{"hardware":{"nodes":+1}}"#,
            "hardware.nodes",
            "1 to 8192",
        ),
        (
            r#"{"hardware":{"nodes":0x10}}"#,
            "hardware.nodes",
            "1 to 8192",
        ),
        (
            r#"{"hardware":{"nodes":2,"gpus_per_node":0x10}}"#,
            "hardware.gpus_per_node",
            "1 to 64",
        ),
        (r#"{"sm_tax":0x10}"#, "sm_tax", "0 to 0.9"),
        (
            r#"{"parallel":{"schedule":NaN}}"#,
            "parallel.schedule",
            "`1f1b`",
        ),
    ] {
        let (f, m) = refusal(text);
        assert_eq!(f, field, "{text}: {m}");
        assert!(
            m.contains("is not a JSON value") && m.contains(range),
            "{text}: {m}"
        );
        assert!(!m.contains("expected value"), "{text}: {m}");
    }
    // A misspelt word of JSON: named as such, with the field's values.
    for (text, field, valid) in [
        (r#"{"overlap":{"tp":tru}}"#, "overlap.tp", "true or false"),
        (r#"{"overlap":{"dp":False}}"#, "overlap.dp", "true or false"),
        (
            r#"{"hardware":{"nodes":nul}}"#,
            "hardware.nodes",
            "1 to 8192",
        ),
    ] {
        let (f, m) = refusal(text);
        assert_eq!(f, field, "{text}: {m}");
        assert!(
            m.contains("JSON's words are true, false and null") && m.contains(valid),
            "{text}: {m}"
        );
        assert!(!m.contains("expected ident"), "{text}: {m}");
    }
    // Past the value, the scenario's own syntax: no field to name.
    let (f, _) = refusal(r#"{"hardware":{"nodes":1}x}"#);
    assert_eq!(f, "scenario");
}

#[test]
fn a_key_with_brackets_is_an_unknown_field_not_an_array() {
    let (f, m) = refusal(r#"{"hardware":{"nodes[0]":1}}"#);
    assert_eq!(f, "hardware.nodes[0]");
    assert!(m.starts_with("unknown field `nodes[0]`"), "{m}");
    // A real array for a section is still said as that.
    let (f, m) = refusal(r#"{"hardware":[2]}"#);
    assert_eq!(f, "hardware");
    assert!(
        m.contains("an array is given where an object is expected"),
        "{m}"
    );
}

#[test]
fn invisible_and_reordering_characters_in_keys_are_escaped() {
    for c in [
        '\u{202E}', '\u{2066}', '\u{200B}', '\u{200D}', '\u{FEFF}', '\u{061C}', '\u{2028}',
    ] {
        let text = format!(r#"{{"hardware":{{"no{c}des":1}}}}"#);
        let (f, m) = refusal(&text);
        let escaped = c.escape_default().to_string();
        for shown in [&f, &m] {
            assert!(!shown.contains(c), "{c:?} raw in {shown}");
            assert!(shown.contains(&escaped), "{escaped} not in {shown}");
        }
    }
}

/// `null` in a field stands for the field left out (interface.md's
/// defaults apply), for every field of the table; a section given as
/// `null` is refused, naming it (docs/validation.md says the same).
#[test]
fn null_is_an_absent_field_and_not_a_section() {
    let default = ScenarioInput::from_json("{}").unwrap().resolve().unwrap();
    for f in FIELDS {
        // The field's path as nested objects (`workload.moe.experts`
        // inside `workload.moe`), its value null.
        let parts: Vec<&str> = f.path.split('.').collect();
        let opening: String = parts.iter().map(|p| format!(r#"{{"{p}":"#)).collect();
        let text = format!("{opening}null{}", "}".repeat(parts.len()));
        let input = ScenarioInput::from_json(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(input, ScenarioInput::default(), "{text}");
        assert_eq!(input.resolve().unwrap(), default, "{text}");
    }
    for section in ["hardware", "workload", "parallel", "overlap"] {
        let (f, m) = refusal(&format!(r#"{{"{section}":null}}"#));
        assert_eq!(f, section);
        assert!(
            m.contains("null is given where a section is expected"),
            "{m}"
        );
    }
}
