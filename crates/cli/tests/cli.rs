//! The `overlap-lab` command line as scripts use it (interface.md).

mod common;

use std::process::Output;

fn cli(args: &[&str], stdin: Option<&str>) -> Output {
    cli_bytes(args, stdin.map(|s| s.as_bytes().to_vec()))
}

fn cli_bytes(args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    common::run_cli(args, stdin)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn an_axis_that_moves_nothing_has_no_hidden_share_in_the_summary() {
    // one-queue is data parallel only; with one queue its parameter gathers
    // (46 of DP's 122 ms) stay exposed: 62.2% hides.
    let out = cli(&["simulate", "preset:one-queue"], None);
    assert!(out.status.success());
    let text = stdout(&out);
    let row = |axis: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{axis} ")))
            .unwrap_or_else(|| panic!("no {axis} row in {text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("tp")[1..4], ["0.000", "0.000", "-"]);
    assert_eq!(row("pp")[3], "-");
    // A part that is a rounding residual prints unsigned: one-queue's TP
    // and PP rows' under-idle parts printed -0.000.
    assert!(!text.contains("-0.000"), "{text}");
    let dp_hidden: f64 = row("dp")[3].trim_end_matches('%').parse().unwrap();
    assert!((55.0..67.0).contains(&dp_hidden), "{dp_hidden}");
    // The JSON keeps the report's figure: 1 for an axis with nothing exposed.
    let json = stdout(&cli(&["simulate", "--json", "preset:one-queue"], None));
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["axes"]["tp"]["hidden"].as_f64(), Some(1.0));
}

#[test]
fn simulate_json_prints_the_cores_report() {
    let preset = overlap_core::presets::default_preset();
    let out = cli(&["simulate", "--json", "-"], Some(preset.json));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let expected = overlap_core::simulate(&preset.input().resolve().unwrap()).report;
    assert_eq!(
        report["step_time_ms"].as_f64().unwrap(),
        expected.step_time_ms
    );
    assert_eq!(report["speedup"].as_f64().unwrap(), expected.speedup);
    for axis in ["tp", "pp", "dp"] {
        for field in [
            "comm_ms",
            "exposed_ms",
            "hidden",
            "window_ms",
            "contention_ms",
            "under_compute_ms",
            "under_idle_ms",
        ] {
            assert!(report["axes"][axis][field].is_number(), "{axis}.{field}");
        }
    }
    for link in ["nvlink", "network"] {
        assert!(report["links"][link]["busy"].is_number());
        assert!(report["links"][link]["shared"].is_number());
    }
}

#[test]
fn simulate_reads_a_file_and_prints_a_readable_summary() {
    let path = std::env::temp_dir().join("overlap-lab-cli-test.json");
    std::fs::write(&path, r#"{"overlap":{"tp":false}}"#).unwrap();
    let out = cli(&["simulate", path.to_str().unwrap()], None);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("step time") && text.contains("speedup"),
        "{text}"
    );
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_field() {
    for (args, stdin, needle) in [
        (
            vec!["simulate", "-"],
            Some(r#"{"parallel":{"tp":3}}"#),
            "parallel.tp",
        ),
        (
            vec!["simulate", "-"],
            Some(r#"{"parallel":{"tpp":2}}"#),
            "parallel.tpp",
        ),
        (vec!["simulate", "-"], Some("{not json"), "scenario"),
        (vec!["simulate", "/no/such/file.json"], None, "cannot read"),
        (vec!["frobnicate"], None, "unknown command"),
        (vec![], None, "no command given"),
        (
            vec!["link", "-"],
            Some(r#"{"workload":{"layers":100000}}"#),
            "workload.layers",
        ),
        (
            vec!["simulate", "-"],
            Some(r#"{"parallel":{"schedule":"zb-v"}}"#),
            "parallel.virtual_stages",
        ),
    ] {
        let out = cli(&args, stdin);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

#[test]
fn link_prints_the_share_links_query_string() {
    let out = cli(
        &["link", "-"],
        Some(r#"{"overlap":{"tp":false},"sm_tax":0.05}"#),
    );
    assert!(out.status.success());
    assert_eq!(stdout(&out).trim(), "v=1&tp_overlap=0&sm_tax=0.05");
}

#[test]
fn link_picks_the_closest_preset_or_the_one_named() {
    let mut input = overlap_core::presets::find("contention").unwrap().input();
    input.overlap.dp = Some(false);
    let json = serde_json::to_string(&input).unwrap();
    let out = cli(&["link", "-"], Some(&json));
    assert_eq!(stdout(&out).trim(), "v=1&preset=contention&dp_overlap=0");
    let out = cli(
        &["link", "--preset", "didactic", "-"],
        Some(r#"{"sm_tax":0.05}"#),
    );
    assert_eq!(stdout(&out).trim(), "v=1&sm_tax=0.05");
    let out = cli(&["link", "--preset", "nope", "-"], Some("{}"));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn trace_writes_chrome_trace_event_json() {
    let out = cli(&["trace", "preset:contention"], None);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(!v["traceEvents"].as_array().unwrap().is_empty());
}

/// `busbw`: nccl-tests' sizes 8 B to 4 GiB, each simulated, with NCCL's
/// choice; bad options exit 2 with one line naming the option.
#[test]
fn busbw_prints_the_curve_and_refuses_bad_options() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .args(["busbw", "--hardware", "dgx-h100", "--nodes", "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 30, "{text}");
    assert_eq!(rows[0][0], "8");
    assert_eq!(rows[29][0], "4294967296");
    // nccl-tests issue 309's choice on one H100 node.
    assert_eq!(
        (rows[17][0], rows[17][4], rows[17][5]),
        ("1048576", "Ring", "LL")
    );
    assert_eq!(
        (rows[18][0], rows[18][4], rows[18][5]),
        ("2097152", "NVLS", "Simple")
    );
    for (args, option) in [
        (&["busbw", "--nodes", "0"][..], "--nodes"),
        (&["busbw", "--hardware", "tpu"][..], "--hardware"),
        (&["busbw", "--collective", "broadcast"][..], "--collective"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(option) && err.contains("valid"), "{err}");
    }
}

/// `busbw --collective all_to_all --dispatcher deepep`: DeepEP's
/// bottleneck bandwidth per EP size in its benchmark's shape, against its
/// published normal-kernel table (published.md section 10, the data its
/// rates are fitted to: the fit's reproduction within 15%); DeepEP's
/// options elsewhere are refused naming the option.
#[test]
fn busbw_prints_deepeps_bottleneck_bandwidth_against_its_table() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .args([
            "busbw",
            "--collective",
            "all_to_all",
            "--dispatcher",
            "deepep",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    for (row, (ep, path, dispatch, combine)) in rows.iter().zip([
        ("8", "NVLink", 153.0, 158.0),
        ("16", "RDMA", 43.0, 43.0),
        ("32", "RDMA", 58.0, 57.0),
        ("64", "RDMA", 51.0, 50.0),
    ]) {
        assert_eq!((row[0], row[2]), (ep, path), "{text}");
        let gbps = |i: usize| row[i].parse::<f64>().unwrap();
        // Columns: EP, nodes, path, dispatch us, dispatch GB/s, RDMA / NVL
        // (three words), combine us, combine GB/s.
        assert!((gbps(4) - dispatch).abs() <= 0.15 * dispatch, "{text}");
        assert!((gbps(9) - combine).abs() <= 0.15 * combine, "{text}");
    }
    for (args, option) in [
        (&["busbw", "--dispatcher", "deepep"][..], "--collective"),
        (
            &["busbw", "--collective", "all_to_all", "--tokens", "5"][..],
            "--tokens",
        ),
        (
            &[
                "busbw",
                "--collective",
                "all_to_all",
                "--dispatcher",
                "deepep",
                "--nodes",
                "3",
            ][..],
            "--nodes",
        ),
        (
            &[
                "busbw",
                "--collective",
                "all_to_all",
                "--dispatcher",
                "nvshmem",
            ][..],
            "--dispatcher",
        ),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(option) && err.contains("valid"),
            "{args:?}: {err}"
        );
    }
}

/// `sweep`: one row per value, in order, a refused value a row with its
/// message; JSON rows equal `simulate --json` of the same scenario.
#[test]
fn sweep_prints_one_row_per_value_and_matches_simulate() {
    let out = cli(
        &[
            "sweep",
            "preset:didactic",
            "--field",
            "overlap.tp_chunks",
            "--values",
            "2,0,4",
            "--json",
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["field"], "overlap.tp_chunks");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows[1]["error"]
        .as_str()
        .unwrap()
        .contains("overlap.tp_chunks"));
    // didactic's own value is 4: its row is `simulate`'s report.
    let report: serde_json::Value = serde_json::from_str(&stdout(&cli(
        &["simulate", "--json", "preset:didactic"],
        None,
    )))
    .unwrap();
    for key in [
        "step_time_ms",
        "baseline_ms",
        "speedup",
        "compute_ms",
        "bubble_fraction",
    ] {
        assert_eq!(rows[2][key], report[key], "{key}");
    }
    assert_eq!(
        rows[2]["exposed_ms"]["tp"],
        report["axes"]["tp"]["exposed_ms"]
    );
    assert_eq!(rows[2]["memory_gb_total"], report["memory_gb"]["total"]);
    // A range, the CSV header and bad use.
    let csv = stdout(&cli(
        &[
            "sweep",
            "preset:didactic",
            "--field",
            "overlap.tp_chunks",
            "--range",
            "1:4",
            "--csv",
        ],
        None,
    ));
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.starts_with("value,step_time_ms,"));
    for (args, needle) in [
        (
            &[
                "sweep",
                "preset:didactic",
                "--field",
                "nope",
                "--values",
                "1",
            ][..],
            "--field",
        ),
        (
            &["sweep", "preset:didactic", "--field", "overlap.tp_chunks"][..],
            "--values",
        ),
        (
            &[
                "sweep",
                "preset:didactic",
                "--field",
                "parallel.schedule",
                "--range",
                "1:3",
            ][..],
            "--values",
        ),
        (
            &[
                "sweep",
                "preset:didactic",
                "--field",
                "overlap.tp_chunks",
                "--range",
                "4:1",
            ][..],
            "--range",
        ),
    ] {
        let out = cli(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
}
