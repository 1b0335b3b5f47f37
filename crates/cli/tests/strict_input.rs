//! The command line refuses what the interface says it refuses: more than
//! one JSON value, arrays for objects, input over the size limit, and every
//! misuse of its arguments, each with exit status 2 and one short line.

mod common;

use std::io::Read;
use std::process::{Command, Output, Stdio};

fn cli(args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    common::run_cli(args, stdin)
}

/// Asserts exit status 2, nothing on standard output and one line on
/// standard error that contains `needle`; returns that line.
fn refused(args: &[&str], stdin: Option<&[u8]>, needle: &str) -> String {
    let out = cli(args, stdin.map(<[u8]>::to_vec));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("overlap-lab: "), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    err
}

/// A directory of its own for a test that needs files with given names.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("overlap-lab-strict-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn trailing_data_after_the_scenario_is_refused() {
    refused(
        &["link", "-"],
        Some(br#"{"sm_tax":0.1} {"sm_tax":0.9}"#),
        "exactly one JSON object",
    );
}

#[test]
fn arrays_in_place_of_objects_are_refused() {
    refused(
        &["simulate", "-"],
        Some(br#"[{"preset":"dgx-h100","nodes":1},{},{"tp":8,"pp":1,"dp":1}]"#),
        "scenario: an array is given where an object is expected",
    );
    refused(
        &["link", "-"],
        Some(br#"{"hardware":["dgx-h100",4]}"#),
        "hardware: an array is given where an object is expected",
    );
}

#[cfg(unix)]
#[test]
fn an_endless_file_is_refused_at_the_size_limit() {
    // Without the limit this reads until memory runs out: the test would
    // not finish rather than fail.
    refused(&["simulate", "/dev/zero"], None, "at most 1 MiB");
}

#[test]
fn standard_input_over_the_size_limit_is_refused() {
    let limit = overlap_core::scenario::MAX_INPUT_BYTES;
    let mut big = br#"{"sm_tax":0.1}"#.to_vec();
    big.resize(limit + 1, b' ');
    refused(&["simulate", "-"], Some(&big), "at most 1 MiB");
    // At the limit exactly, it is read.
    big.truncate(limit);
    let out = cli(&["link", "-"], Some(big));
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_fifty_megabyte_mode_string_gets_one_short_line() {
    let json = format!(r#"{{"workload":{{"mode":"{}"}}}}"#, "x".repeat(50 << 20));
    let line = refused(&["simulate", "-"], Some(json.as_bytes()), "1 MiB");
    assert!(line.len() < 200, "{line}");
}

#[test]
fn a_long_value_under_the_limit_is_echoed_cut() {
    let json = format!(r#"{{"workload":{{"mode":"{}"}}}}"#, "x".repeat(500_000));
    let line = refused(&["simulate", "-"], Some(json.as_bytes()), "workload.mode");
    assert!(line.len() < 400, "{line}");
    assert!(line.contains("xxxxxxxx…"), "the cut is marked: {line}");
}

#[test]
fn text_that_is_not_utf8_is_refused() {
    refused(&["simulate", "-"], Some(b"{\"sm_tax\":\xff}"), "not UTF-8");
}

#[test]
fn a_file_named_like_the_preset_is_read() {
    let dir = scratch("didactic");
    std::fs::write(dir.join("didactic"), r#"{"sm_tax":0.05}"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .args(["link", "--preset", "didactic", "didactic"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "v=1&sm_tax=0.05"
    );
    // The same with --preset=ID, and with the file first.
    for args in [
        ["link", "--preset=didactic", "didactic"],
        ["link", "didactic", "--preset=didactic"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "v=1&sm_tax=0.05"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_file_named_like_an_option_is_read_after_a_double_dash() {
    let dir = scratch("dash");
    std::fs::write(dir.join("--json"), r#"{"sm_tax":0.05}"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .args(["link", "--", "--json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "v=1&sm_tax=0.05"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn every_misuse_exits_2_with_one_line() {
    let long = "y".repeat(100_000);
    for (args, needle) in [
        (vec![], "no command given"),
        (
            vec!["frobnicate"],
            "unknown command \"frobnicate\": valid are simulate",
        ),
        (vec!["simulate"], "simulate needs a FILE"),
        (vec!["simulate", "a.json", "b.json"], "one too many"),
        (vec!["simulate", "--jsn", "-"], "not an option of simulate"),
        (
            vec!["simulate", "--preset", "didactic", "-"],
            "belongs to link",
        ),
        (vec!["link", "--json", "-"], "belongs to simulate"),
        (vec!["link", "--preset"], "--preset needs a preset name"),
        (
            vec!["link", "--preset", "a", "--preset", "b", "-"],
            "given twice",
        ),
        (
            vec!["link", "--preset", "nope", "preset:didactic"],
            "unknown preset",
        ),
        (vec!["trace", "--json", "-"], "belongs to simulate"),
        (vec!["presets", "extra"], "presets takes no FILE"),
        (vec!["published", "--json"], "published takes no options"),
        (vec!["simulate", "preset:nope"], "unknown preset \"nope\""),
        (
            vec!["simulate", "/no/such/file.json"],
            "cannot read /no/such/file.json",
        ),
        (vec!["simulate", "/"], "cannot read /"),
        (vec![long.as_str()], "unknown command"),
        (vec!["simulate", "a\nb"], "cannot read a\\nb"),
    ] {
        let line = refused(&args, None, needle);
        // One line, even where it lists every preset's id (24 of them).
        assert!(line.len() < 600, "{args:?}: {line}");
    }
}

#[test]
fn help_goes_to_standard_output_and_succeeds() {
    for args in [&["help"][..], &["--help"], &["-h"], &["simulate", "--help"]] {
        let out = cli(args, None);
        assert!(out.status.success(), "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains("Usage: overlap-lab"), "{args:?}: {text}");
    }
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    // The trace is far larger than a pipe's buffer, so the binary is still
    // writing when the reader goes away.
    let mut child = Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .args(["trace", "preset:contention"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_opened_as_given() {
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch("bytes");
    let name = std::ffi::OsStr::from_bytes(b"scenario-\xff.json");
    std::fs::write(dir.join(name), r#"{"sm_tax":0.05}"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .arg("link")
        .arg(name)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "v=1&sm_tax=0.05"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_byte_order_mark_before_the_scenario_is_skipped() {
    let out = cli(
        &["link", "-"],
        Some("\u{feff}{\"sm_tax\":0.05}".as_bytes().to_vec()),
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "v=1&sm_tax=0.05"
    );
}

#[cfg(unix)]
#[test]
fn an_argument_that_is_not_utf8_is_refused_not_panicked() {
    use std::os::unix::ffi::OsStrExt;
    let out = Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .arg(std::ffi::OsStr::from_bytes(b"simul\xffate"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown command"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}
