//! Starting a child process and waiting for it: no shell (the arguments are a vector, an
//! address appended last), a process group of its own (a timeout kills what it started too),
//! both pipes drained while it runs, and a stop signal or an unrecordable start respected
//! (`super`). Every family that runs commands, and sabakan's apply, goes through here.

use std::io::Read;
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the command is empty: give it in the repair configuration")]
    Empty,
    #[error("cannot start {program}: {cause} (is it installed and executable?)")]
    Spawn { program: String, cause: String },
    #[error("{program} exited with {status}{stderr}")]
    Exit {
        program: String,
        status: String,
        /// `: <first line of stderr>` or empty.
        stderr: String,
    },
    #[error("{program} did not finish within {after:?}: killed")]
    Timeout { program: String, after: Duration },
    #[error("{program} was not started: a stop signal came")]
    Stopped { program: String },
    #[error("{program} was stopped at once: {why}")]
    Unrecorded {
        program: String,
        why: super::RecordError,
    },
}

/// What one attempt printed.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
}

fn wait(mut child: Child, program: &str, timeout: Option<Duration>) -> Result<Output, RunError> {
    // Drain both pipes beside the wait, so a chatty child never blocks on a full pipe.
    let read = |mut pipe: Box<dyn Read + Send>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            let _ = tx.send(s);
        });
        rx
    };
    let out = read(Box::new(child.stdout.take().expect("piped")));
    let err = read(Box::new(child.stderr.take().expect("piped")));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::Spawn {
                    program: program.to_owned(),
                    cause: e.to_string(),
                });
            }
        }
        if let Some(t) = timeout.filter(|t| start.elapsed() >= *t) {
            // The child leads its own process group: kill what it started too (a repair
            // script's ipmitool), not just the script.
            kill_group(&child);
            let _ = child.kill();
            let _ = child.wait();
            return Err(RunError::Timeout {
                program: program.to_owned(),
                after: t,
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // A child that left something running in the background (`ipmitool … &`) may keep the
    // pipes open after it exits: its output is what came within a grace period, never a pass
    // that hangs. Output cut short reads as not `true`, so a health check fails safe.
    let grace = Duration::from_secs(2);
    let stdout = out.recv_timeout(grace).unwrap_or_else(|_| {
        tracing::warn!(
            program,
            "its standard output stayed open after it exited (a background process?): read as empty"
        );
        String::new()
    });
    let stderr = err.recv_timeout(grace).unwrap_or_default();
    if status.success() {
        Ok(Output { stdout })
    } else {
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        Err(RunError::Exit {
            program: program.to_owned(),
            status: status.to_string(),
            stderr: if first.is_empty() {
                String::new()
            } else {
                format!(": {}", first.trim())
            },
        })
    }
}

/// SIGKILL to the child's process group (it leads one: `process_group(0)`). Called before
/// the child is reaped, so its pid, and with it the group id, cannot have been reused.
fn kill_group(child: &Child) {
    let Some(pgid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    if let Err(error) = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL) {
        tracing::warn!(pgid = pgid.as_raw_nonzero().get(), %error, "cannot kill the command's process group");
    }
}

/// One attempt: `argv` plus `address`, killed after `timeout` seconds (0 = no timeout).
pub fn run_once(argv: &[String], address: &str, timeout: u64) -> Result<Output, RunError> {
    run_recorded(argv, address, timeout, |_| Ok(()))
}

/// As [`run_once`], telling `started` the child's pid as soon as it runs (to record it where
/// a later process finds it); a child that cannot be recorded is killed before it does
/// anything much, with its process group. A stop signal lets the child end (its timeout
/// bounds the wait); after one, no child is started.
pub fn run_recorded(
    argv: &[String],
    address: &str,
    timeout: u64,
    started: impl FnOnce(u32) -> Result<(), super::RecordError>,
) -> Result<Output, RunError> {
    let (program, args) = argv.split_first().ok_or(RunError::Empty)?;
    let Some(running) = super::Running::starting() else {
        return Err(RunError::Stopped {
            program: program.clone(),
        });
    };
    use std::os::unix::process::CommandExt;
    let mut child = Process::new(program)
        .process_group(0)
        .args(args)
        .arg(address)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| RunError::Spawn {
            program: program.clone(),
            cause: e.to_string(),
        })?;
    running.started(child.id());
    let what = format!("{program} {address}");
    let recorded = super::record_child(child.id(), &what);
    let record = recorded.as_ref().ok().cloned().flatten();
    if let Err(why) = recorded.and_then(|_| started(child.id())) {
        if let Some(r) = &record {
            super::forget_child(r);
        }
        kill_group(&child);
        let _ = child.kill();
        let _ = child.wait();
        return Err(RunError::Unrecorded {
            program: program.clone(),
            why,
        });
    }
    let done = wait(
        child,
        program,
        (timeout > 0).then(|| Duration::from_secs(timeout)),
    );
    if let Some(r) = &record {
        super::forget_child(r);
    }
    drop(running);
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::child::{RecordError, write_record};

    fn script(name: &str) -> String {
        format!("{}/fixtures/machines/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    fn argv(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_address_is_the_last_argument_and_no_shell_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let a = "10.0.0.1;touch${IFS}pwned";
        run_once(
            &argv(&[&script("log-args"), log.to_str().unwrap(), "x y"]),
            a,
            5,
        )
        .unwrap();
        let got = std::fs::read_to_string(&log).unwrap();
        assert_eq!(got, format!("x y\n{a}\n"));
        assert!(!dir.path().join("pwned").exists());
    }

    #[test]
    fn a_command_past_its_timeout_is_killed() {
        let start = Instant::now();
        let e = run_once(&argv(&[&script("sleep-then-true"), "30"]), "a", 1).unwrap_err();
        assert!(matches!(e, RunError::Timeout { .. }), "{e}");
        assert!(start.elapsed() < Duration::from_secs(10));
        // 0 means no timeout.
        run_once(&argv(&[&script("sleep-then-true"), "0"]), "a", 0).unwrap();
    }

    /// Whether the process runs (a zombie waiting for its reaper has ended).
    fn alive(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
    }

    #[test]
    fn a_timeout_kills_what_the_command_started_too() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let e = run_once(
            &argv(&[&script("grandchild-then-wait"), pidfile.to_str().unwrap()]),
            "a",
            1,
        )
        .unwrap_err();
        assert!(matches!(e, RunError::Timeout { .. }), "{e}");
        let pid = std::fs::read_to_string(&pidfile).unwrap();
        let pid = pid.trim();
        assert!(!pid.is_empty());
        // SIGKILL is delivered at once, but the process leaves the table a moment later.
        let start = Instant::now();
        while alive(pid) && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(pid), "the grandchild {pid} outlived the timeout");
    }

    #[test]
    fn a_background_process_holding_the_output_does_not_hang_the_pass() {
        let start = Instant::now();
        let got = run_once(&argv(&[&script("background-then-true")]), "a", 0);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        // What it printed never arrived: read as nothing (a health check fails safe).
        assert!(matches!(&got, Ok(o) if o.stdout.is_empty()), "{got:?}");
    }

    /// A child that cannot be recorded is stopped at once, saying why.
    #[test]
    fn a_child_that_cannot_be_recorded_is_stopped_saying_why() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let unwritable = dir.path().join("missing/record");
        let cmd = argv(&[&script("log-args"), log.to_str().unwrap()]);
        let no_proc = run_recorded(&cmd, "a", 5, |_| Err(RecordError::NoProcEntry));
        assert!(
            matches!(
                &no_proc,
                Err(RunError::Unrecorded {
                    why: RecordError::NoProcEntry,
                    ..
                })
            ),
            "{no_proc:?}"
        );
        let write = run_recorded(&cmd, "a", 5, |pid| {
            write_record(&unwritable, &pid.to_string())
        });
        match &write {
            Err(RunError::Unrecorded {
                program,
                why: RecordError::Write { path, .. },
            }) => {
                assert_eq!((program, path), (&cmd[0], &unwritable));
            }
            other => panic!("{other:?}"),
        }
        let e = write.unwrap_err().to_string();
        assert!(e.contains(&unwritable.display().to_string()), "{e}");
        // Recorded, it runs.
        let recorded = dir.path().join("record");
        run_recorded(&cmd, "a", 5, |pid| {
            write_record(&recorded, &pid.to_string())
        })
        .unwrap();
        assert!(recorded.exists());
    }

    #[test]
    fn a_missing_program_says_so() {
        let e = run_once(&argv(&["/nonexistent/repair"]), "a", 1).unwrap_err();
        assert!(
            e.to_string().contains("cannot start /nonexistent/repair"),
            "{e}"
        );
        assert!(matches!(run_once(&[], "a", 1), Err(RunError::Empty)));
    }
}
