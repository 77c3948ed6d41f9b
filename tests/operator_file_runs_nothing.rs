#![cfg(unix)]
//! `scangen emit --file` and `check --file` only parse the operator file (syn); nothing in it
//! runs. The file is one a user may have been handed, so it is built here to do harm if
//! anything but a parser touched it:
//!
//! * `rustc`, `cargo`, the shells and the C/CUDA compilers on `PATH`, and `RUSTC`, `CARGO`,
//!   `RUSTC_WRAPPER`, `SHELL`, `CC`, `CXX` and `NVCC`, all name a script that leaves a mark;
//! * a `Cargo.toml` with a `build.rs` beside it, which would leave a mark if built;
//! * `mod evil;` and `include!("included.rs")` name FIFOs: opening one waits for a writer
//!   forever, so a tool that followed them would hang, and the test fails on its time limit.
//!
//! The CLI is run as the user would run it; the test checks it still does its job, and that no
//! mark appeared and no file was made beside the operator file.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const OPS: &str = r#"
//! An operator file with company.
#![allow(unused)]

use scangen::{scan_op, ScanElement, ScanOp};

mod evil;
include!("included.rs");

macro_rules! shout { () => { std::process::Command::new("sh").arg("-c").arg("touch pwned").status() } }

const _: () = { let _ = shout!(); };

#[derive(Clone, Copy, Debug, PartialEq, ScanElement)]
#[repr(C)]
pub struct Affine {
    pub a: f32,
    pub b: f32,
}

pub struct Compose;

#[scan_op]
impl ScanOp for Compose {
    type Elem = Affine;
    fn identity() -> Affine {
        Affine { a: 1.0, b: 0.0 }
    }
    fn combine(l: Affine, r: Affine) -> Affine {
        Affine { a: l.a * r.a, b: r.a * l.b + r.b }
    }
}

fn main() {
    std::process::Command::new("sh").arg("-c").arg("touch pwned").status().unwrap();
}
"#;

/// Tools a careless implementation might start, by name or through the environment.
const TOOLS: &[&str] = &[
    "rustc", "cargo", "sh", "bash", "dash", "env", "cc", "c++", "gcc", "clang", "nvcc", "ptxas",
    "python3", "rustfmt",
];

/// A script that records that it ran (its name and arguments) in `marks`.
fn marker_script(bin: &Path, name: &str, marks: &Path) -> PathBuf {
    let path = bin.join(name);
    fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"{name} $*\" >> '{}/{name}'\nexit 1\n",
            marks.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status();
    assert!(
        status.is_ok_and(|s| s.success()),
        "mkfifo {}",
        path.display()
    );
}

struct Trap {
    _tmp: tempfile::TempDir,
    /// Holds the operator file and its booby-trapped neighbours.
    dir: PathBuf,
    ops: PathBuf,
    bin: PathBuf,
    marks: PathBuf,
}

impl Trap {
    fn new() -> Trap {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, bin, marks) = (
            tmp.path().join("ops"),
            tmp.path().join("bin"),
            tmp.path().join("marks"),
        );
        for d in [&dir, &bin, &marks] {
            fs::create_dir(d).unwrap();
        }
        for tool in TOOLS {
            marker_script(&bin, tool, &marks);
        }
        let ops = dir.join("ops.rs");
        fs::write(&ops, OPS).unwrap();
        mkfifo(&dir.join("evil.rs"));
        mkfifo(&dir.join("included.rs"));
        fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"trap\"\nversion = \"0.0.0\"\nbuild = \"build.rs\"\n[lib]\npath = \"ops.rs\"\n",
        )
        .unwrap();
        fs::write(
            dir.join("build.rs"),
            format!(
                "fn main() {{ std::fs::write(\"{}/build.rs\", \"ran\").unwrap(); }}\n",
                marks.display()
            ),
        )
        .unwrap();
        Trap {
            _tmp: tmp,
            dir,
            ops,
            bin,
            marks,
        }
    }

    /// `scangen <args>` with the traps set, its working directory the operator's directory.
    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scangen"));
        cmd.args(args)
            .current_dir(&self.dir)
            .env("PATH", &self.bin)
            .env("SCANGEN_CACHE_DIR", self.marks.join("cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (var, tool) in [
            ("RUSTC", "rustc"),
            ("CARGO", "cargo"),
            ("RUSTC_WRAPPER", "rustc"),
            ("SHELL", "sh"),
            ("CC", "cc"),
            ("CXX", "c++"),
            ("NVCC", "nvcc"),
        ] {
            cmd.env(var, self.bin.join(tool));
        }
        let mut child = cmd.spawn().expect("starting scangen");
        // Drain both pipes while waiting: a kernel is more than a pipe buffer (64 KiB), and a
        // child blocked on a full pipe would look like one stuck on a FIFO.
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!(
                    "scangen {args:?} did not finish in 60 s: did it open `mod evil;` or \
                     `include!(\"included.rs\")` (FIFOs) of the operator file?"
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Output {
            status,
            stdout: stdout.join().unwrap(),
            stderr: stderr.join().unwrap(),
        }
    }

    /// Nothing left a mark, and the operator's directory holds only what the test put there
    /// (plus `extra`, files the command was asked to write).
    fn assert_untouched(&self, extra: &[&str]) {
        let marks: Vec<String> = fs::read_dir(&self.marks)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != "cache")
            .collect();
        let ran: Vec<String> = marks
            .iter()
            .map(|m| format!("{m}: {}", fs::read_to_string(self.marks.join(m)).unwrap()))
            .collect();
        assert!(ran.is_empty(), "something ran: {ran:?}");
        let mut names: Vec<String> = fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut expected: Vec<String> = ["Cargo.toml", "build.rs", "evil.rs", "included.rs"]
            .into_iter()
            .chain(["ops.rs"])
            .chain(extra.iter().copied())
            .map(String::from)
            .collect();
        expected.sort();
        assert_eq!(names, expected, "files appeared beside the operator file");
    }
}

fn text(out: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn emit_file_only_parses_the_operator_file() {
    let trap = Trap::new();
    let ops = trap.ops.to_str().unwrap();
    let out = trap.run(&["emit", "--file", ops, "--op", "Compose"]);
    assert!(out.status.success(), "{}", text(&out));
    let cuda = String::from_utf8_lossy(&out.stdout);
    assert!(cuda.contains("scan_combine"), "{}", text(&out));
    assert!(cuda.contains("rs_mul(l.a, r.a)"), "{}", text(&out));
    trap.assert_untouched(&[]);

    let out = trap.run(&[
        "emit",
        "--file",
        "ops.rs",
        "--op",
        "Compose",
        "--algo",
        "blelloch",
        "--exclusive",
        "-o",
        "scan.cu",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    trap.assert_untouched(&["scan.cu"]);

    // An operator the file lacks is an error about the file, still without running anything.
    let out = trap.run(&["emit", "--file", ops, "--op", "Missing"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("operators in the file: Compose"),
        "{}",
        text(&out)
    );
    trap.assert_untouched(&["scan.cu"]);
}

#[test]
fn check_file_only_parses_the_operator_file() {
    let trap = Trap::new();
    let ops = trap.ops.to_str().unwrap();
    // With a GPU this runs the generated CUDA (NVRTC is a library, not a process); without
    // one it says the check needs a GPU. Either way only the file's text was read.
    let out = trap.run(&["check", "--file", ops, "--op", "Compose", "--samples", "64"]);
    let all = text(&out);
    assert!(out.status.success() || all.contains("needs a GPU"), "{all}");
    trap.assert_untouched(&[]);
}
