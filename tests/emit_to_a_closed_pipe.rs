//! `scangen emit` into a reader that stops early (`scangen emit --op max | head`): the CLI exits
//! successfully and quietly, where `print!` used to panic on the broken pipe.

use std::io::Read;
use std::process::{Command, Stdio};

#[test]
fn emit_into_a_reader_that_stops_early_exits_cleanly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scangen"))
        .args(["emit", "--op", "max"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("scangen runs");
    // Read one byte, then close the pipe: the kernel source is far longer than a pipe buffer,
    // so the rest of the write meets a closed reader.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).expect("some output");
    drop(stdout);
    let out = child.wait_with_output().expect("scangen exits");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}, stderr:\n{stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "stderr:\n{stderr}");
}
