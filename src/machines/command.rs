//! Runs the repair configuration's commands: real child processes, no shell, the machine's
//! address appended as the last argument, a timeout that kills the child, retries with an
//! interval. The only code of the family that starts processes.

use super::Command;
pub use crate::child::{RunError, run_once};
use std::time::Duration;

/// A repair or success command: `retries + 1` attempts, `interval` seconds apart; the last
/// attempt's error when all fail.
pub fn run(cmd: &Command, address: &str) -> Result<(), RunError> {
    let mut attempt = 0;
    loop {
        match run_once(&cmd.argv, address, cmd.timeout) {
            Ok(_) => return Ok(()),
            // After a stop signal the watcher stops: it starts no other attempt.
            Err(e) if attempt >= cmd.retries || crate::child::stop_requested() => return Err(e),
            Err(e) => {
                tracing::warn!(command = %cmd, address, attempt = attempt + 1, error = %e, "command failed; retrying");
                attempt += 1;
                std::thread::sleep(Duration::from_secs(cmd.interval));
            }
        }
    }
}

/// CKE's health check: healthy when the command exits 0 and prints `true` (trimmed).
pub fn healthy(argv: &[String], address: &str, timeout: u64) -> Result<bool, RunError> {
    run_once(argv, address, timeout).map(|o| o.stdout.trim() == "true")
}

/// Where the family's commands run: real child processes ([`Processes`]), or the outcomes a
/// simulated world scripts (`super::sim`), so that the backend's record-then-run order is what
/// the chaos simulator tests.
pub trait Runner {
    /// A repair or success command with its retries ([`run`]).
    fn run(&self, cmd: &Command, address: &str) -> Result<(), RunError>;
    /// A health check ([`healthy`]).
    fn healthy(&self, argv: &[String], address: &str, timeout: u64) -> Result<bool, RunError>;
}

/// Real child processes.
pub struct Processes;

impl Runner for Processes {
    fn run(&self, cmd: &Command, address: &str) -> Result<(), RunError> {
        run(cmd, address)
    }
    fn healthy(&self, argv: &[String], address: &str, timeout: u64) -> Result<bool, RunError> {
        healthy(argv, address, timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(name: &str) -> String {
        format!("{}/fixtures/machines/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    fn argv(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_health_check_wants_exit_0_and_true() {
        let dir = tempfile::tempdir().unwrap();
        let cases: &[(&str, Result<bool, &str>)] = &[
            ("true", Ok(true)),
            ("  true\n", Ok(true)),
            ("false", Ok(false)),
            ("TRUE", Ok(false)),
            ("true but", Ok(false)),
            ("", Ok(false)),
        ];
        for (out, want) in cases {
            let f = dir.path().join("out");
            std::fs::write(&f, out).unwrap();
            let got = healthy(
                &argv(&[&script("print-file"), f.to_str().unwrap()]),
                "10.0.0.1",
                5,
            );
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(g, *w, "{out:?}"),
                (g, w) => panic!("{out:?}: got {g:?}, want {w:?}"),
            }
        }
        // Exit status wins over output.
        let e = healthy(&argv(&[&script("exit-with"), "3", "true"]), "10.0.0.1", 5).unwrap_err();
        assert!(e.to_string().contains("exit status: 3"), "{e}");
    }

    #[test]
    fn retries_run_until_one_attempt_succeeds() {
        let dir = tempfile::tempdir().unwrap();
        let counter = dir.path().join("n");
        let cmd = |retries| Command {
            argv: argv(&[&script("fail-times"), counter.to_str().unwrap(), "2"]),
            timeout: 5,
            retries,
            interval: 0,
        };
        // Fails twice, then succeeds: 1 retry is not enough, 2 are.
        let e = run(&cmd(1), "a").unwrap_err();
        assert!(e.to_string().contains("exit status: 1"), "{e}");
        assert_eq!(std::fs::read_to_string(&counter).unwrap().trim(), "2");
        std::fs::remove_file(&counter).unwrap();
        run(&cmd(2), "a").unwrap();
        assert_eq!(std::fs::read_to_string(&counter).unwrap().trim(), "3");
    }
}
