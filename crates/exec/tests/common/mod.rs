//! Finding the adapter templates and the interpreters they need.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Once, OnceLock};
use std::time::Duration;

use toolcert_exec::{ExecOptions, ExecSubject};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the workspace root exists")
}

/// The path of a broken subject script.
pub fn subject_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/subjects").join(name)
}

/// Whether `TOOLCERT_SKIP_CROSS_LANG` is set: the tests that need python3, node or npm then
/// return at once, and the first says why on stderr (past the test harness's capture). CI
/// never sets it.
pub fn cross_lang_skipped() -> bool {
    static SAID: Once = Once::new();
    let skip = std::env::var_os("TOOLCERT_SKIP_CROSS_LANG").is_some_and(|v| !v.is_empty() && v != "0");
    if skip {
        SAID.call_once(|| {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: the toolcert-exec tests that run Python and Node subjects \
                 (TOOLCERT_SKIP_CROSS_LANG is set; they need python3 >= 3.11, node >= 20 and npm)"
            );
        });
    }
    skip
}

/// Fails clearly when a program the tests need is missing.
pub fn require(program: &str, why: &str) {
    let found = Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`{program}` is not installed or does not run; {why} \
         (set TOOLCERT_SKIP_CROSS_LANG=1 to skip the tests that need it)"
    );
}

pub fn python() -> &'static str {
    require("python3", "the Python adapter template and the broken test subjects need Python 3.11");
    "python3"
}

/// The Python template's command.
pub fn python_command() -> String {
    format!("{} {}", python(), shell_quote(&root().join("examples/adapters/python/adapter.py")))
}

pub fn python_adapter() -> ExecSubject {
    let cmd = python_command();
    ExecSubject::spawn(&cmd, ExecOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Builds the TypeScript template once per test binary (`npm ci` when its dependencies are
/// missing, then `tsc`), and gives its command.
pub fn typescript_command() -> String {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        require("node", "the TypeScript adapter template runs on Node.js 20");
        require("npm", "the TypeScript adapter template is built with npm (npm ci && npx tsc)");
        let dir = root().join("examples/adapters/typescript");
        let run = |args: &[&str]| -> Result<(), String> {
            let out = Command::new("npm").args(args).current_dir(&dir).output().map_err(|e| e.to_string())?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "`npm {}` in {} failed:\n{}{}",
                    args.join(" "),
                    dir.display(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
        };
        // (`npm ci` again when the link to the toolcert-adapter package, node/, is missing.)
        if !dir.join("node_modules/.bin/tsc").exists() || !dir.join("node_modules/toolcert-adapter").exists()
        {
            run(&["ci", "--no-audit", "--no-fund"])?;
        }
        run(&["exec", "--", "tsc", "-p", "."])?;
        Ok(dir.join("dist/adapter.js"))
    });
    match built {
        Ok(script) => format!("node {}", shell_quote(script)),
        Err(e) => panic!("{e}"),
    }
}

pub fn typescript_adapter() -> ExecSubject {
    let cmd = typescript_command();
    ExecSubject::spawn(&cmd, ExecOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Options with short timeouts, for subjects that misbehave.
pub fn impatient() -> ExecOptions {
    ExecOptions { timeout: Duration::from_millis(1500), restarts: 3, ..ExecOptions::default() }
}

pub fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}
