//! What the CLI's test files share: running the binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs the binary with `stdin` written from a thread: a binary that stops
/// reading early (as it must past the size limit) closes the pipe, and the
/// failed write is expected, not a test failure.
pub fn run_cli(args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        if let Some(bytes) = stdin {
            let _ = pipe.write_all(&bytes);
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}
