//! `overlap-lab import [--json] [--scenario FILE] PATH...` (interface.md):
//! the measured figures of profiler traces, the simulated beside them, and
//! exit status 2 with one line for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "overlap-lab-cli-import-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn json_lists_each_gpus_figures() {
    let v = ok_json(&cli(&["import", "--json", &data("hta/all_to_all")]));
    let gpus = v["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 2);
    for g in gpus {
        for key in [
            "step_ms",
            "compute_ms",
            "comm_ms",
            "exposed_ms",
            "hidden",
            "overlap",
        ] {
            assert!(g[key].is_number(), "{key} in {g}");
        }
        assert!(g["comm_by_kind_ms"]["NCCL AllToAll"].is_number());
        assert!(g["axes"]["unknown"]["exposed_ms"].is_number());
    }
    assert_eq!(v["world_size"], 128);
    assert_eq!(v["over_ranks"]["gpus"], 2);
    assert!(v.get("simulated").is_none());
}

#[test]
fn several_paths_and_a_scenario_beside() {
    let out = cli(&[
        "import",
        "--json",
        "--scenario",
        "preset:didactic",
        &data("hta/process_group/nccl_data.json.gz"),
        &data("hta/all_to_all/sampled_rank-1.json.gz"),
    ]);
    let v = ok_json(&out);
    let ranks: Vec<_> = v["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["rank"].as_u64())
        .collect();
    assert_eq!(ranks, vec![Some(0), Some(1)]);
    assert!(v["simulated"]["step_time_ms"].as_f64().unwrap() > 0.0);
    assert!(v["simulated"]["hta_overlap"].is_number());
    let text = cli(&[
        "import",
        "--scenario",
        "preset:didactic",
        &data("hta/all_to_all"),
    ]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("measured   simulated") && text.contains("HTA overlap"),
        "{text}"
    );
    assert!(text.contains("NCCL AllToAll"), "{text}");
}

#[test]
fn a_round_trip_through_the_kineto_export_reads() {
    let dir = fresh_dir("round-trip");
    let d = dir.to_str().unwrap();
    assert!(cli(&["trace", "--kineto", d, "preset:didactic"])
        .status
        .success());
    let imported = ok_json(&cli(&["import", "--json", d]));
    let report = ok_json(&cli(&["simulate", "--json", "preset:didactic"]));
    let got: Vec<f64> = imported["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["overlap"].as_f64().unwrap())
        .collect();
    let want: Vec<f64> = report["hta_overlap_per_gpu"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        // Whole microseconds in the file: HTA's own tolerance (tests/hta).
        assert!((g - w).abs() < 5e-3, "{g} vs {w}");
    }
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = fresh_dir("bad");
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_string_lossy().into_owned()
    };
    let cut = write(
        "cut.json",
        br#"{"traceEvents": [{"ph": "X", "cat": "kernel""#,
    );
    let shape = write("shape.json", br#"{"traceEvents": 3}"#);
    let cpu = write("cpu.json", br#"{"traceEvents": []}"#);
    let binary = write("binary.json.gz", b"\x1f\x8b\x08\0garbage garbage");
    let huge = dir.join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let huge = huge.to_string_lossy().into_owned();
    let scenario = write("scenario.json", br#"{"parallel": {"tp": 3}}"#);
    for (args, needle) in [
        (vec!["import", cut.as_str()], "ends early"),
        (vec!["import", shape.as_str()], "not a trace"),
        (vec!["import", cpu.as_str()], "no GPU kernels"),
        (vec!["import", binary.as_str()], "gzip"),
        (vec!["import", huge.as_str()], "over the 1 GiB"),
        (vec!["import", "/nonexistent/trace.json"], "cannot read"),
        (vec!["import"], "needs a PATH"),
        (
            vec!["import", "--scenario", scenario.as_str(), cpu.as_str()],
            "tp",
        ),
    ] {
        let out = cli(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn collectives_matched_across_ranks_give_transfer_wait_and_late_ranks() {
    let v = ok_json(&cli(&["import", "--json", &data("hta/all_to_all")]));
    let gpus = v["gpus"].as_array().unwrap();
    for g in gpus {
        let (comm, transfer, wait) = (
            g["comm_ms"].as_f64().unwrap(),
            g["transfer_ms"].as_f64().unwrap(),
            g["wait_ms"].as_f64().unwrap(),
        );
        assert!((transfer + wait - comm).abs() < 1e-9, "{g}");
        assert!(g["axes"]["unknown"]["transfer_ms"].is_number());
        assert!(g["transfer_exposed_ms"].as_f64().unwrap() <= transfer + 1e-9);
    }
    let late = v["over_ranks"]["late_ranks"].as_array().unwrap();
    assert_eq!(late.len(), 2);
    // Most often last first; the idle one caused is the other's wait.
    assert!(late[0]["last"].as_u64() >= late[1]["last"].as_u64());
    let other = |rank: u64| gpus.iter().find(|g| g["rank"] != rank).unwrap();
    for l in late {
        let waited = other(l["rank"].as_u64().unwrap())["wait_ms"]
            .as_f64()
            .unwrap();
        assert!((l["idle_caused_ms"].as_f64().unwrap() - waited).abs() < 1e-9);
    }
    let text = String::from_utf8(cli(&["import", &data("hta/all_to_all")]).stdout).unwrap();
    assert!(
        text.contains("transfer ms   wait ms") && text.contains("late ranks"),
        "{text}"
    );
    assert!(
        text.contains("note: 2 of the world's 128 ranks read"),
        "{text}"
    );
}

#[test]
fn classify_rules_on_the_command_line_and_in_a_file() {
    let excerpt = data("deepseek/train_excerpt.json");
    // Taken out of communication: said, with the candidates.
    let out = cli(&["import", "--classify", "dpsk::ep=compute", &excerpt]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("no communication recognised on rank 0 gpu 0")
            && text.contains("dpsk::ep::internode::combine")
            && text.contains("--classify 'combine=all_to_all:ep'"),
        "{text}"
    );
    let v = ok_json(&cli(&[
        "import",
        "--json",
        "--classify",
        "dpsk::ep=compute",
        &excerpt,
    ]));
    assert_eq!(
        v["gpus"][0]["comm_candidates"][0]["function"],
        "dpsk::ep::internode::combine"
    );
    let messages = v["messages"].as_array().unwrap();
    assert!(messages
        .iter()
        .any(|m| m.as_str().unwrap().contains("no kernel is recognised")));
    // A file of rules, after those given on the line.
    let dir = fresh_dir("rules");
    let rules = dir.join("rules.txt");
    std::fs::write(
        &rules,
        "# DeepSeek's combine as CP, for the test\ncombine<=all_to_all:cp\n",
    )
    .unwrap();
    let v = ok_json(&cli(&[
        "import",
        "--json",
        "--classify-file",
        rules.to_str().unwrap(),
        &excerpt,
    ]));
    assert!(v["gpus"][0]["axes"]["cp"]["comm_ms"].as_f64().unwrap() > 6.5);
    // Bad rules: status 2, one line naming the rule and what is valid.
    std::fs::write(&rules, "ok=compute\nx=alltoall\n").unwrap();
    for (args, needles) in [
        (
            vec!["import", "--classify", "x=alltoall", excerpt.as_str()],
            vec![
                "--classify \"x=alltoall\"",
                "not one of all_reduce",
                "all_to_all",
            ],
        ),
        (
            vec!["import", "--classify", "(x=all_reduce", excerpt.as_str()],
            vec!["(x=all_reduce", "not a regular expression"],
        ),
        (
            vec!["import", "--classify", "x=all_reduce:zz", excerpt.as_str()],
            vec!["axis \"zz\" is not one of tp, pp, dp, ep, cp"],
        ),
        (
            vec![
                "import",
                "--classify-file",
                rules.to_str().unwrap(),
                excerpt.as_str(),
            ],
            vec!["rules.txt line 2: rule \"x=alltoall\"", "not one of"],
        ),
        (
            vec![
                "import",
                "--classify-file",
                "/nonexistent/rules",
                excerpt.as_str(),
            ],
            vec!["cannot read"],
        ),
    ] {
        let out = cli(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {err}");
        }
    }
}

#[test]
fn a_scenario_far_from_the_measured_step_is_flagged() {
    // A two-GPU job's three steps against a preset's: flagged exactly when
    // they differ more than 3-fold.
    let v = ok_json(&cli(&[
        "import",
        "--json",
        "--scenario",
        "preset:didactic",
        &data("hta/process_group/nccl_data.json.gz"),
    ]));
    let measured = v["over_ranks"]["step_ms"].as_f64().unwrap();
    let simulated = v["simulated"]["step_time_ms"].as_f64().unwrap();
    let ratio = measured.max(simulated) / measured.min(simulated);
    let flagged = v["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|m| m.as_str().unwrap().contains("more than 3-fold"));
    assert_eq!(flagged, ratio > 3.0, "{measured} vs {simulated}");
}

#[test]
fn propose_prints_a_scenario_simulate_reads() {
    let out = cli(&["import", "--propose", &data("deepseek/train_excerpt.json")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let notes = String::from_utf8(out.stderr).unwrap();
    assert!(notes.lines().all(|l| l.starts_with("note: ")), "{notes}");
    assert!(notes.contains("edit workload"), "{notes}");
    let scenario: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(scenario["parallel"]["ep"], 64);
    let dir = fresh_dir("propose");
    let file = dir.join("scenario.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let report = ok_json(&cli(&["simulate", "--json", file.to_str().unwrap()]));
    assert!(report["step_time_ms"].as_f64().unwrap() > 0.0);
    // Only the proposal: not beside --json or --scenario.
    let out = cli(&["import", "--propose", "--json", &data("hta/all_to_all")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--json or --propose, not both"), "{err}");
}
