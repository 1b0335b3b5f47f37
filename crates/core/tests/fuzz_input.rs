//! Fuzzing the two readers of user input, the scenario parser and the
//! share-link decoder, for a fixed number of cases on every `cargo test`.
//! Whatever the input: no panic; every message is short, on one line, and
//! repeats no more than `MAX_ECHO_CHARS` of any value; what is accepted has
//! the shape the interface describes and survives a round trip.
//!
//! Inputs mix arbitrary text, JSON built from the scenario's own field
//! names, mangled presets, and long values marked with runs of `q` so that
//! an echo longer than the limit shows as a long run of `q`.

use overlap_core::presets::PRESETS;
use overlap_core::scenario::{MAX_ECHO_CHARS, MAX_MESSAGE_CHARS};
use overlap_core::share_link::{decode, encode_shortest, MAX_LINK_ERRORS};
use overlap_core::{FieldError, ScenarioInput};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// An escape written for a control character may pass the cut by a few
/// characters, and a cut is marked with one more.
const MESSAGE_SLACK_CHARS: usize = 16;

/// The longest run of `q`, the marker the generated long values carry.
fn longest_q_run(text: &str) -> usize {
    text.split(|c| c != 'q').map(str::len).max().unwrap_or(0)
}

/// One refusal as a user sees it: bounded, on one line, echoes clipped.
fn check_message(e: &FieldError) -> Result<(), TestCaseError> {
    for part in [&e.field, &e.message] {
        let chars = part.chars().count();
        prop_assert!(
            chars <= MAX_MESSAGE_CHARS + MESSAGE_SLACK_CHARS,
            "{chars} chars"
        );
        prop_assert!(!part.contains('\n') && !part.contains('\r'), "{part}");
        prop_assert!(longest_q_run(part) <= MAX_ECHO_CHARS, "{part}");
    }
    Ok(())
}

/// Whether a JSON value has the scenario's shape: an object whose values
/// are single values or objects of single values.
fn scenario_shaped(v: &Value) -> bool {
    let scalar = |x: &Value| !x.is_array() && !x.is_object();
    v.as_object().is_some_and(|root| {
        root.values().all(|section| match section {
            Value::Object(fields) => fields.values().all(scalar),
            other => scalar(other),
        })
    })
}

/// Sections and fields as the scenario names them, plus a few it does not.
const SECTIONS: &[&str] = &[
    "hardware", "workload", "parallel", "overlap", "sm_tax", "bogus",
];
const FIELDS: &[&str] = &[
    "preset",
    "nodes",
    "gpus_per_node",
    "nic_gbps",
    "kind",
    "mode",
    "layers",
    "global_batch",
    "recompute",
    "tp",
    "pp",
    "dp",
    "schedule",
    "virtual_stages",
    "tp_chunks",
    "bucket_mb",
    "grad_bytes",
    "sm_tax",
    "nope",
];
const WORDS: &[&str] = &[
    "dgx-h100",
    "dgx-a100",
    "train",
    "inference",
    "gpipe",
    "1f1b",
    "interleaved",
    "full",
    "none",
    "transformer",
    "matmul_allreduce",
];

/// Text with long marked runs and the characters that break naive quoting.
fn tricky_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            (1usize..3000).prop_map(|n| "q".repeat(n)),
            Just("\"".to_string()),
            Just("`".to_string()),
            Just("\\".to_string()),
            Just("\n".to_string()),
            Just(" ".to_string()),
            Just("%0A".to_string()),
            Just("\u{1b}".to_string()),
            "[a-z0-9&=%.-]{0,6}",
        ],
        0..8,
    )
    .prop_map(|parts| parts.concat())
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (0u64..100_000).prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        Just(Value::from(1e300)),
        prop::sample::select(WORDS).prop_map(Value::from),
        tricky_text().prop_map(Value::from),
    ]
}

fn any_json() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(FIELDS), inner), 0..4).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

/// A scenario-like value: known section and field names, values of any
/// shape, now and then an array or a scalar where an object belongs.
fn scenario_json() -> impl Strategy<Value = Value> {
    let section = prop_oneof![
        4 => prop::collection::vec((prop::sample::select(FIELDS), prop_oneof![
            6 => scalar(),
            1 => any_json(),
        ]), 0..5)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>())),
        1 => any_json(),
    ];
    let root = prop::collection::vec((prop::sample::select(SECTIONS), section), 0..5)
        .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
    prop_oneof![8 => root, 1 => any_json()]
}

/// Checks one parse: no panic (the call returns), bounded messages, and for
/// accepted text the shape and the round trips.
fn check_parse(text: &str, expect_shape: Option<&Value>) -> Result<(), TestCaseError> {
    match ScenarioInput::from_json(text) {
        Err(e) => {
            prop_assert!(!e.errors.is_empty());
            for fe in &e.errors {
                check_message(fe)?;
            }
        }
        Ok(input) => {
            if let Some(v) = expect_shape {
                prop_assert!(scenario_shaped(v), "accepted a misshapen scenario: {text}");
            }
            let again = ScenarioInput::from_json(&input.to_json_pretty());
            prop_assert_eq!(again.as_ref(), Ok(&input), "{}", text);
            match input.resolve() {
                Ok(scenario) => {
                    let link = encode_shortest(&input);
                    let back = decode(&link, &[]);
                    prop_assert!(back.errors.is_empty(), "{}: {:?}", link, back.errors);
                    prop_assert_eq!(back.input.resolve().unwrap(), scenario, "{}", link);
                }
                Err(e) => {
                    for fe in &e.errors {
                        check_message(fe)?;
                    }
                }
            }
        }
    }
    Ok(())
}

fn check_link(query: &str) -> Result<(), TestCaseError> {
    let d = decode(query, &["zoom"]);
    prop_assert!(d.errors.len() <= MAX_LINK_ERRORS + 1, "{}", d.errors.len());
    for fe in &d.errors {
        check_message(fe)?;
    }
    prop_assert!(d.input.resolve().is_ok(), "a decoded link always opens");
    Ok(())
}

/// Link keys (a sample of the table) and view keys.
const LINK_KEYS: &[&str] = &[
    "v",
    "preset",
    "hw",
    "nodes",
    "tp",
    "pp",
    "dp",
    "schedule",
    "mode",
    "global_batch",
    "tp_overlap",
    "sm_tax",
    "nic_gbps",
    "zoom",
    "what",
];

fn link_query() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            prop_oneof![
                prop::sample::select(LINK_KEYS).prop_map(String::from),
                tricky_text()
            ],
            prop_oneof![
                "[0-9]{1,4}",
                prop::sample::select(WORDS).prop_map(String::from),
                prop::sample::select(PRESETS).prop_map(|p| p.id.to_string()),
                tricky_text(),
            ],
        ),
        0..40,
    )
    .prop_map(|pairs| {
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn the_parser_survives_arbitrary_text(text in "(?s).{0,400}") {
        check_parse(&text, None)?;
    }

    #[test]
    fn the_parser_refuses_misshapen_json_and_round_trips_the_rest(v in scenario_json()) {
        check_parse(&v.to_string(), Some(&v))?;
        check_parse(&serde_json::to_string_pretty(&v).unwrap(), Some(&v))?;
    }

    #[test]
    fn the_parser_survives_mangled_presets(
        p in 0..PRESETS.len(),
        at in 0usize..4000,
        cut in 0usize..40,
        insert in prop_oneof![
            Just("[".to_string()), Just("]".to_string()), Just("{".to_string()),
            Just("}".to_string()), Just(",".to_string()), Just("\"".to_string()),
            Just(" {} ".to_string()), Just("[1,2]".to_string()), Just("1e999".to_string()),
            tricky_text(),
        ],
    ) {
        let json = PRESETS[p].json;
        let at = json.char_indices().map(|(i, _)| i).nth(at % json.len().max(1)).unwrap_or(0);
        let end = json[at..].char_indices().map(|(i, _)| at + i).nth(cut).unwrap_or(json.len());
        let mangled = format!("{}{insert}{}", &json[..at], &json[end..]);
        check_parse(&mangled, None)?;
    }

    #[test]
    fn the_decoder_survives_arbitrary_text(text in "(?s).{0,400}") {
        check_link(&text)?;
    }

    #[test]
    fn the_decoder_bounds_what_it_reports(query in link_query()) {
        check_link(&query)?;
        check_link(&format!("?v=1&{query}"))?;
    }
}

#[test]
fn a_link_of_many_bad_parameters_lists_a_few_and_counts_the_rest() {
    let query = vec!["what=1"; 50_000].join("&");
    let d = decode(&query, &[]);
    assert_eq!(d.errors.len(), MAX_LINK_ERRORS + 1);
    let last = d.errors.last().unwrap();
    assert_eq!(last.field, "link");
    assert!(
        last.message
            .contains(&format!("{} more", 50_000 - MAX_LINK_ERRORS)),
        "{}",
        last.message
    );
}

#[test]
fn a_link_over_the_size_limit_opens_the_default_with_one_message() {
    let limit = overlap_core::scenario::MAX_INPUT_BYTES;
    let query = format!("v=1&sm_tax=0.05&zoom={}", "9".repeat(limit));
    let d = decode(&query, &["zoom"]);
    assert_eq!(d.errors.len(), 1);
    assert_eq!(d.errors[0].field, "link");
    assert!(
        d.errors[0].message.contains("at most"),
        "{}",
        d.errors[0].message
    );
    assert_eq!(d.input, overlap_core::presets::default_preset().input());
    assert!(d.view.is_empty());
}

#[test]
fn a_link_value_is_echoed_cut() {
    let long = "q".repeat(100_000);
    for query in [
        format!("v=1&tp={long}"),
        format!("v=1&preset={long}"),
        format!("v={long}"),
        format!("v=1&{long}=1"),
        format!("v=1&mode=%22{long}%0A{long}"),
    ] {
        let d = decode(&query, &[]);
        assert!(!d.errors.is_empty(), "{query:.40}");
        for fe in &d.errors {
            assert!(longest_q_run(&fe.field) <= MAX_ECHO_CHARS, "{fe}");
            assert!(longest_q_run(&fe.message) <= MAX_ECHO_CHARS, "{fe}");
            assert!(fe.to_string().contains("qqq"), "still recognisable: {fe}");
            assert!(!fe.message.contains('\n'), "{fe}");
        }
    }
}
