//! Bad input gets a message that names the field and what is valid; absurd
//! sizes are refused with a stated limit, quickly, and never panic.

use overlap_core::parse_scenario;

mod common;
use common::{names, refused};

#[test]
fn an_unknown_field_is_named_with_its_path() {
    names(
        &refused(r#"{"parallel":{"tpp":2}}"#),
        "parallel.tpp",
        "unknown field",
    );
    names(&refused(r#"{"bogus":1}"#), "bogus", "expected one of");
}

#[test]
fn a_wrong_type_names_the_field() {
    names(
        &refused(r#"{"parallel":{"tp":"banana"}}"#),
        "parallel.tp",
        "\"banana\" is not a whole number: valid is 1 to 64 (line 1, column 26)",
    );
    names(
        &refused(r#"{"workload":{"recompute":"sometimes"}}"#),
        "workload.recompute",
        "\"sometimes\" is not valid: valid are none, selective, full",
    );
    names(
        &refused(r#"{"workload":{"layers":-3}}"#),
        "workload.layers",
        "-3 is out of range: valid is 1 to 4096",
    );
}

/// What the parser refuses is said as the field reference states what is
/// valid (`overlap-lab fields`), never in the parser's own words for Rust
/// types ("expected u32", "expected f64") or as "expected value".
#[test]
fn a_refused_value_is_told_what_is_valid_for_its_field() {
    for (json, field, message) in [
        (
            r#"{"workload":{"layers":3.5}}"#,
            "workload.layers",
            "3.5 is not a whole number: valid is 1 to 4096",
        ),
        (
            r#"{"workload":{"layers":99999999999}}"#,
            "workload.layers",
            "99999999999 is out of range: valid is 1 to 4096",
        ),
        (
            r#"{"workload":{"layers":true}}"#,
            "workload.layers",
            "true is not a whole number: valid is 1 to 4096",
        ),
        (
            r#"{"overlap":{"bucket_mb":"big"}}"#,
            "overlap.bucket_mb",
            "\"big\" is not a number: valid is from 0.1 to 100000",
        ),
        (
            r#"{"sm_tax":"x"}"#,
            "sm_tax",
            "\"x\" is not a number: valid is from 0 to 0.9",
        ),
        (
            r#"{"overlap":{"tp":"yes"}}"#,
            "overlap.tp",
            "\"yes\" is not a switch: valid are true or false",
        ),
        (
            r#"{"overlap":{"tp":1}}"#,
            "overlap.tp",
            "1 is not a switch: valid are true or false",
        ),
        (
            r#"{"workload":{"recompute":true}}"#,
            "workload.recompute",
            "true is not valid: valid are none, selective, full",
        ),
        (
            r#"{"parallel":{"schedule":"zb3"}}"#,
            "parallel.schedule",
            "\"zb3\" is not valid: valid are gpipe, 1f1b, interleaved",
        ),
        (
            r#"{"hardware":{"preset":"dgx-b200"}}"#,
            "hardware.preset",
            "valid are dgx2-v100, dgx-a100, dgx-h100",
        ),
        (
            r#"{"overlap":{"grad_bytes":"two"}}"#,
            "overlap.grad_bytes",
            "\"two\" is not a gradient width: valid are 1, 2 or 4 bytes",
        ),
        (
            r#"{"interference":"maybe"}"#,
            "interference",
            "\"maybe\" is not valid: valid are modelled, off",
        ),
    ] {
        let e = refused(json);
        names(&e, field, message);
        for parser_words in [
            "expected u32",
            "expected f64",
            "expected a boolean",
            "expected value",
            "invalid type",
        ] {
            assert!(!e.to_string().contains(parser_words), "{json}: {e}");
        }
    }
    // A number too large for JSON to read has no value to show; its range
    // is still said.
    names(
        &refused(r#"{"workload":{"layers":1e400}}"#),
        "workload.layers",
        "the number is too large to read (line 1, column 27): valid is a whole number, 1 to 4096",
    );
    names(
        &refused(r#"{"parallel":{"schedule":1e999}}"#),
        "parallel.schedule",
        "the number is too large to read (line 1, column 25): valid is one of `gpipe`, `1f1b`",
    );
    // A field given twice is still refused as given twice, not for its value.
    names(
        &refused(r#"{"workload":{"layers":4,"layers":5}}"#),
        "workload.layers",
        "duplicate field",
    );
}

#[test]
fn malformed_json_is_refused_not_panicked() {
    names(&refused(r#"{"parallel": "#), "parallel", "EOF");
    // A syntax error inside a section names the section, not "workload.?".
    names(
        &refused(r#"{"workload":{"layers":4,}}"#),
        "workload",
        "trailing comma",
    );
    names(
        &refused(""),
        "scenario",
        "the input is empty: a scenario is one JSON object",
    );
    names(&refused(" \n"), "scenario", "{} is the default scenario");
}

#[test]
fn the_gpu_count_must_match_the_parallel_degrees() {
    let e = refused(r#"{"hardware":{"nodes":2},"parallel":{"tp":4,"pp":2,"dp":4}}"#);
    names(&e, "parallel.dp", "valid dp is 2");
}

#[test]
fn counts_of_one_read_in_the_singular() {
    // One node of eight: "8 GPUs (1 node x 8)", not "1 nodes".
    let e = refused(r#"{"hardware":{"nodes":1},"parallel":{"tp":8,"pp":2,"dp":1}}"#);
    names(&e, "parallel.pp", "the cluster has 8 GPUs (1 node x 8)");
    let e =
        refused(r#"{"hardware":{"nodes":2,"gpus_per_node":1},"parallel":{"tp":2,"pp":1,"dp":1}}"#);
    names(&e, "parallel.tp", "does not fit a node of 1 GPU:");
    let e = refused(r#"{"workload":{"layers":1},"parallel":{"pp":2}}"#);
    names(&e, "workload.layers", "1 layer cannot fill");
    let e = refused(r#"{"workload":{"seq":1},"overlap":{"tp":true,"tp_chunks":4}}"#);
    names(
        &e,
        "overlap.tp_chunks",
        "4 chunks of a GEMM with 1 row: valid is 1 to 1",
    );
    let e = refused(
        r#"{"workload":{"global_batch":3,"micro_batch":2},"parallel":{"tp":4,"pp":4,"dp":1}}"#,
    );
    names(
        &e,
        "workload.global_batch",
        "micro-batches of 2 over 1 replica: valid are multiples of 2",
    );
    let e = refused(r#"{"workload":{"heads":1,"kv_heads":1},"parallel":{"tp":2}}"#);
    names(&e, "parallel.tp", "tp 2 does not divide the 1 head:");
    names(
        &e,
        "workload.kv_heads",
        "1 key/value head cannot be split over tp 2",
    );
    // Left to its rule, the refused value is said to be derived, and from
    // what; given, it is not.
    let e = refused(r#"{"workload":{"heads":3,"hidden":4095},"parallel":{"tp":4}}"#);
    names(
        &e,
        "workload.kv_heads",
        "(workload.kv_heads is not given, so it is derived as heads: set it, or change what it is derived from)",
    );
    let e = refused(r#"{"workload":{"heads":1,"kv_heads":1},"parallel":{"tp":2}}"#);
    assert!(
        e.errors.iter().all(|f| !f.message.contains("derived")),
        "{e}"
    );
    let e = refused(r#"{"parallel":{"schedule":"zb-v"}}"#);
    names(
        &e,
        "parallel.virtual_stages",
        "1 virtual stage with schedule \"zb-v\"",
    );
    assert_eq!(overlap_core::counted(1, "GPU"), "1 GPU");
    assert_eq!(overlap_core::counted(0, "GPU"), "0 GPUs");
    assert_eq!(overlap_core::counted(3072, "GPU"), "3072 GPUs");
}

#[test]
fn tp_chunks_get_one_message_each_problem() {
    // Over the field's range: that alone is said, not the GEMM's rows too.
    let e = refused(r#"{"overlap":{"tp":true,"tp_chunks":100000}}"#);
    let on_chunks: Vec<_> = e
        .errors
        .iter()
        .filter(|f| f.field == "overlap.tp_chunks")
        .collect();
    assert_eq!(on_chunks.len(), 1, "{e}");
    names(&e, "overlap.tp_chunks", "valid is 1 to 64");
    // Within the range but more chunks than the GEMM has rows.
    let e =
        refused(r#"{"workload":{"seq":16,"micro_batch":1},"overlap":{"tp":true,"tp_chunks":32}}"#);
    names(
        &e,
        "overlap.tp_chunks",
        "32 chunks of a GEMM with 16 rows: valid is 1 to 16",
    );
}

#[test]
fn tp_stays_inside_a_node() {
    let e = refused(r#"{"hardware":{"nodes":2},"parallel":{"tp":16,"pp":1,"dp":1}}"#);
    names(&e, "parallel.tp", "1, 2, 4, 8");
}

#[test]
fn a_batch_that_does_not_divide_is_refused() {
    let e = refused(r#"{"workload":{"global_batch":7}}"#);
    names(&e, "workload.global_batch", "multiples of 2");
}

#[test]
fn every_stage_needs_a_layer() {
    // Uneven shares are valid (interface.md); an empty stage is not.
    assert!(parse_scenario(r#"{"workload":{"layers":9}}"#).is_ok());
    let e = refused(r#"{"workload":{"layers":3},"parallel":{"pp":4,"dp":1}}"#);
    names(&e, "workload.layers", "valid is 4 or more");
}

#[test]
fn every_problem_is_reported_at_once() {
    let e = refused(r#"{"sm_tax":2,"overlap":{"tp_chunks":0,"grad_bytes":3}}"#);
    names(&e, "sm_tax", "0 to 0.9");
    names(&e, "overlap.tp_chunks", "1 to 64");
    names(&e, "overlap.grad_bytes", "1, 2 or 4");
}

#[test]
fn absurd_sizes_are_refused_with_a_stated_limit() {
    let started = std::time::Instant::now();
    names(
        &refused(
            r#"{"hardware":{"nodes":125000,"gpus_per_node":8},"parallel":{"tp":8,"pp":1,"dp":1000000}}"#,
        ),
        "hardware.nodes",
        "1 to 8192",
    );
    names(
        &refused(
            r#"{"hardware":{"nodes":8192,"gpus_per_node":16},"parallel":{"tp":8,"pp":1,"dp":16384}}"#,
        ),
        "hardware.nodes",
        "at most 65536 GPUs",
    );
    names(
        &refused(r#"{"workload":{"layers":100000}}"#),
        "workload.layers",
        "1 to 4096",
    );
    names(
        &refused(r#"{"workload":{"micro_batch":1000000000}}"#),
        "workload.micro_batch",
        "1 to 65536",
    );
    // Inside every field's range, but too many operations to simulate.
    names(
        &refused(
            r#"{"workload":{"layers":4096,"global_batch":100000000},"parallel":{"pp":2,"dp":2}}"#,
        ),
        "workload.global_batch",
        "limit of",
    );
    assert!(
        started.elapsed().as_secs() < 5,
        "refusals must be immediate"
    );
}

#[test]
fn the_largest_accepted_scenario_still_simulates() {
    // Just under the timeline's limit: it runs, timeline and all, in
    // bounded memory.
    let s = parse_scenario(
        r#"{"hardware":{"nodes":64},"workload":{"layers":64,"hidden":1024,"heads":8,"seq":512,"global_batch":2048},
            "parallel":{"tp":8,"pp":8,"dp":8},"overlap":{"tp":false}}"#,
    )
    .unwrap();
    assert!(overlap_core::workload::estimated_ops(&s) <= overlap_core::MAX_TIMELINE_OPS);
    let sim = overlap_core::Simulator::default()
        .try_simulate(&s)
        .expect("within the timeline's limit");
    assert!(sim.report.step_time_ms > 0.0);
}

#[test]
fn extreme_but_valid_values_give_finite_figures() {
    for json in [
        r#"{"hardware":{"peak_tflops":0.001,"hbm_gbps":0.001,"nvlink_gbps":0.001,"nic_gbps":0.001,
            "nvlink_latency_us":10000,"network_latency_us":10000,"oversubscription":64},"sm_tax":0.9}"#,
        r#"{"hardware":{"peak_tflops":100000,"hbm_gbps":1000000,"nvlink_gbps":100000,"nic_gbps":100000,
            "nvlink_latency_us":0,"network_latency_us":0},"sm_tax":0}"#,
        r#"{"workload":{"hidden":262144,"heads":4096,"seq":1048576,"vocab":10000000,"micro_batch":65536,
            "global_batch":131072,"layers":2}}"#,
    ] {
        let s = parse_scenario(json).unwrap();
        let r = overlap_core::simulate(&s).report;
        assert!(
            r.step_time_ms.is_finite() && r.step_time_ms > 0.0,
            "{json}: {r:?}"
        );
        assert!(r.speedup.is_finite() && r.mfu.is_finite(), "{json}: {r:?}");
    }
}

// Strict parsing: the interface says a scenario is one JSON object whose
// sections are objects; these were once accepted.

#[test]
fn trailing_data_after_the_scenario_is_refused() {
    names(
        &refused(r#"{"sm_tax":0.1} {"sm_tax":0.9}"#),
        "scenario",
        "exactly one JSON object",
    );
    names(
        &refused(r#"{"sm_tax":0.1} x"#),
        "scenario",
        "exactly one JSON object",
    );
    // Whitespace after the object is not data.
    assert!(parse_scenario("{\"sm_tax\":0.1}\n\n  ").is_ok());
}

#[test]
fn an_array_in_place_of_the_scenario_is_refused() {
    names(
        &refused(r#"[{"preset":"dgx-h100","nodes":1},{},{"tp":8,"pp":1,"dp":1}]"#),
        "scenario",
        "an object is expected",
    );
    names(&refused("[]"), "scenario", "an object is expected");
    names(&refused("5"), "scenario", "an object is expected");
    names(&refused("null"), "scenario", "an object is expected");
}

#[test]
fn an_array_in_place_of_a_section_is_refused() {
    names(
        &refused(r#"{"hardware":["dgx-h100",4]}"#),
        "hardware",
        "an object is expected",
    );
    for section in ["workload", "parallel", "overlap"] {
        names(
            &refused(&format!(r#"{{"{section}":[]}}"#)),
            section,
            "an object is expected",
        );
    }
    // A scalar field given an array is told what is valid for it.
    names(
        &refused(r#"{"sm_tax":[0.1]}"#),
        "sm_tax",
        "[0.1] is not a number: valid is from 0 to 0.9",
    );
    names(
        &refused(r#"{"parallel":{"tp":[8]}}"#),
        "parallel.tp",
        "[8] is not a whole number: valid is 1 to 64",
    );
}

#[test]
fn an_object_in_place_of_a_value_is_refused() {
    // serde_json would read {"gpipe": null} as the name "gpipe".
    names(
        &refused(r#"{"parallel":{"schedule":{"gpipe":null}}}"#),
        "parallel.schedule",
        "a single value is expected",
    );
    names(
        &refused(r#"{"hardware":{"preset":{"dgx-h100":null}}}"#),
        "hardware.preset",
        "a single value is expected",
    );
    names(
        &refused(r#"{"sm_tax":{}}"#),
        "sm_tax",
        "{} is not a number: valid is from 0 to 0.9",
    );
}

#[test]
fn input_over_the_size_limit_is_refused_with_the_limit() {
    let limit = overlap_core::scenario::MAX_INPUT_BYTES;
    let padded = format!("{{\"sm_tax\":0.1}}{}", " ".repeat(limit));
    names(
        &refused(&padded),
        "scenario",
        &format!("at most {limit} bytes"),
    );
    // Just under the limit still parses.
    let fits = format!("{{\"sm_tax\":0.1}}{}", " ".repeat(limit - 20));
    assert!(parse_scenario(&fits).is_ok());
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    text.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

#[test]
fn a_long_value_is_echoed_cut_to_80_characters() {
    let echo = overlap_core::scenario::MAX_ECHO_CHARS;
    let cap = overlap_core::scenario::MAX_MESSAGE_CHARS;
    let long = "q".repeat(900_000);
    let half = &long[..400_000];
    for json in [
        format!(r#"{{"workload":{{"mode":"{long}"}}}}"#),
        format!(r#"{{"workload":{{"layers":"{long}"}}}}"#),
        format!(r#"{{"hardware":{{"{long}":1}}}}"#),
        format!(r#"{{"{long}":1}}"#),
        format!(r#"{{"parallel":{{"schedule":"{half}\n{half}"}}}}"#),
    ] {
        let e = refused(&json);
        let line = e.to_string();
        assert!(
            line.contains('q'),
            "the value is still recognisable: {line}"
        );
        assert!(longest_run(&line, 'q') <= echo, "{}", &line[..200]);
        assert!(
            line.chars().count() <= 2 * (cap + 1),
            "{} chars",
            line.len()
        );
        assert!(!line.contains('\n'), "one line: {line}");
    }
}

#[test]
fn a_fifty_megabyte_mode_string_gets_a_short_message() {
    let json = format!(r#"{{"workload":{{"mode":"{}"}}}}"#, "x".repeat(50 << 20));
    let line = refused(&json).to_string();
    assert!(line.len() < 200, "{line}");
    assert!(line.contains("1 MiB"), "{line}");
}

#[test]
fn a_huge_number_is_shown_in_exponent_form() {
    let e = refused(r#"{"hardware":{"nic_gbps":1e300}}"#);
    names(&e, "hardware.nic_gbps", "1e300 is out of range");
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    names(&refused(&deep), "scenario", "an object is expected");
    names(
        &refused(r#"{"hardware":[[[[[[[[[[]]]]]]]]]]}"#),
        "hardware",
        "an object is expected",
    );
    names(
        &refused(r#"{"hardware":["dgx-h100",[1, 2"#),
        "hardware",
        "an object is expected",
    );
    let deep = format!(
        r#"{{"hardware":{}{}}}"#,
        r#"{"a":"#.repeat(10_000),
        "}".repeat(10_000)
    );
    assert!(parse_scenario(&deep).is_err());
}

#[test]
fn a_field_given_twice_is_refused() {
    names(
        &refused(r#"{"sm_tax":0.1,"sm_tax":0.9}"#),
        "sm_tax",
        "duplicate field",
    );
    names(
        &refused(r#"{"parallel":{"tp":2},"parallel":{"tp":4}}"#),
        "parallel",
        "duplicate field",
    );
}

/// A scenario on one DGX A100 (8 GPUs) with the given parallel section
/// and global batch (micro-batch 1).
fn zero_bubble_case(parallel: &str, global_batch: u32) -> String {
    format!(
        r#"{{"hardware":{{"preset":"dgx-a100","nodes":1}},
        "workload":{{"layers":24,"hidden":1024,"heads":16,"seq":512,"micro_batch":1,"global_batch":{global_batch}}},
        "parallel":{parallel}}}"#
    )
}

#[test]
fn zero_bubble_schedules_refuse_bad_combinations_naming_the_field_and_what_is_valid() {
    // The V schedules run exactly two chunks per GPU.
    for (schedule, v) in [
        ("zb-v", 1),
        ("zb-v", 3),
        ("dualpipe-v", 1),
        ("dualpipe-v", 4),
    ] {
        let json = zero_bubble_case(
            &format!(r#"{{"tp":1,"pp":8,"dp":1,"schedule":"{schedule}","virtual_stages":{v}}}"#),
            32,
        );
        names(&refused(&json), "parallel.virtual_stages", "valid is 2");
    }
    // DualPipeV pairs the pipeline's GPUs: an odd pp is refused (but pp 1,
    // no pipeline, which runs every schedule as 1F1B).
    let json = zero_bubble_case(
        r#"{"tp":2,"pp":3,"dp":1,"schedule":"dualpipe-v","virtual_stages":2}"#,
        32,
    )
    .replace(r#""nodes":1"#, r#""nodes":1,"gpus_per_node":6"#);
    names(&refused(&json), "parallel.pp", "valid are even pp");
    let json = zero_bubble_case(
        r#"{"tp":8,"pp":1,"dp":1,"schedule":"dualpipe-v","virtual_stages":2}"#,
        32,
    );
    let s = overlap_core::parse_scenario(&json).expect("no pipeline: 1F1B");
    assert_eq!(
        s.parallel.schedule,
        overlap_core::scenario::Schedule::OneFOneB
    );
    // The V's warm-up alone runs 2 x pp micro-batches.
    for schedule in ["zb-v", "dualpipe-v"] {
        let json = zero_bubble_case(
            &format!(r#"{{"tp":1,"pp":8,"dp":1,"schedule":"{schedule}","virtual_stages":2}}"#),
            15,
        );
        names(
            &refused(&json),
            "workload.global_batch",
            "at least 2 x pp = 16 micro-batches",
        );
    }
    // ZB-1p and ZB-2p run one chunk per GPU.
    for schedule in ["zb-1p", "zb-2p"] {
        let json = zero_bubble_case(
            &format!(r#"{{"tp":1,"pp":8,"dp":1,"schedule":"{schedule}","virtual_stages":2}}"#),
            32,
        );
        names(
            &refused(&json),
            "parallel.virtual_stages",
            &format!("with \"{schedule}\" valid is 1"),
        );
    }
    // An unknown schedule lists the valid ones, the new ones among them.
    let e = refused(&zero_bubble_case(
        r#"{"tp":1,"pp":8,"dp":1,"schedule":"zb-3p"}"#,
        32,
    ));
    for valid in ["zb-1p", "zb-2p", "zb-v", "dualpipe-v"] {
        assert!(e.to_string().contains(valid), "{valid} not listed: {e}");
    }
}

#[test]
fn a_share_link_with_a_bad_zero_bubble_combination_names_the_field() {
    use overlap_core::share_link::decode;
    // A link is checked as the JSON is: a field whose value cannot be used is
    // named by its link key, a combination that fails as a whole by its
    // path, each with what is valid; the page opens what is left, valid.
    for (query, key, hint) in [
        (
            "v=1&schedule=zb-v&virtual_stages=3",
            "virtual_stages",
            "valid is 2",
        ),
        ("v=1&schedule=zb-v", "parallel.virtual_stages", "valid is 2"),
        (
            "v=1&schedule=dualpipe-v&virtual_stages=2&global_batch=6",
            "global_batch",
            "at least 2 x pp = 4 micro-batches",
        ),
        (
            "v=1&schedule=zb-2p&virtual_stages=2",
            "virtual_stages",
            "valid is 1",
        ),
    ] {
        let decoded = decode(query, &[]);
        assert!(
            decoded
                .errors
                .iter()
                .any(|e| (e.field == key || e.message.starts_with(key)) && e.message.contains(hint)),
            "{query}: expected {key} with \"{hint}\", got {:?}",
            decoded.errors
        );
        assert!(
            decoded.input.resolve().is_ok(),
            "{query} opened no valid scenario"
        );
    }
    let bad = decode("v=1&schedule=zb-9p", &[]);
    assert!(
        bad.errors
            .iter()
            .any(|e| e.field == "schedule" && e.message.contains("dualpipe-v")),
        "{:?}",
        bad.errors
    );
}

/// The one-collective workload's fields: each refusal names its field and
/// what is valid.
#[test]
fn a_collective_workload_s_bad_fields_are_named() {
    names(
        &refused(r#"{"workload":{"kind":"collective","collective":"broadcast"}}"#),
        "workload.collective",
        "valid are all_reduce, all_gather, reduce_scatter, all_to_all",
    );
    names(
        &refused(r#"{"workload":{"kind":"collective","bytes":0}}"#),
        "workload.bytes",
        "valid is from 1 to 1099511627776",
    );
    names(
        &refused(r#"{"workload":{"bytes":1024}}"#),
        "workload.bytes",
        "only applies to workload.kind \"collective\"",
    );
    assert!(parse_scenario(r#"{"workload":{"kind":"collective","bytes":8}}"#).is_ok());
}
