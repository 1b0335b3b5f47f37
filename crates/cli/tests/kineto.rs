//! `overlap-lab trace --kineto DIR FILE` (interface.md): one Kineto-style
//! trace per simulated GPU in DIR.

use std::path::PathBuf;
use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// A fresh directory under the system temp directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("overlap-lab-kineto-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn writes_one_rank_file_per_simulated_gpu() {
    let dir = fresh_dir("didactic");
    let d = dir.to_str().unwrap();
    let out = cli(&["trace", "--kineto", d, "preset:didactic"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scenario = overlap_core::presets::scenario("didactic").unwrap();
    let sim = overlap_core::simulate(&scenario);
    let mut ranks: Vec<u32> = sim.timeline.gpus.iter().map(|g| g.rank).collect();
    ranks.sort();
    let listed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(listed.lines().count(), ranks.len());
    for rank in ranks {
        let text = std::fs::read_to_string(dir.join(format!("rank{rank}.json"))).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["distributedInfo"]["rank"], rank);
    }
    // The same run again into the same directory overwrites its own files.
    let again = cli(&["trace", "--kineto", d, "preset:didactic"]);
    assert!(again.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn refuses_a_directory_holding_other_traces() {
    let dir = fresh_dir("stray");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("rank99.json"), "{}").unwrap();
    let out = cli(&[
        "trace",
        "--kineto",
        dir.to_str().unwrap(),
        "preset:didactic",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("rank99.json") && err.contains("empty directory"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn needs_a_directory_and_one_scenario() {
    let out = cli(&["trace", "--kineto"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--kineto needs a directory"));
    let out = cli(&["trace", "--kineto", "somewhere"]);
    assert_eq!(out.status.code(), Some(2));
}
