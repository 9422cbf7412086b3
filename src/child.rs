//! The child processes the watcher starts (repair commands, health checks, sabakan's apply
//! command), and a stop signal while one runs.
//!
//! A child leads a process group of its own (a timeout kills what it started too), so a
//! signal sent to the watcher alone never reaches it: before this module, SIGTERM ended the
//! watcher and left its command running under PID 1, and the next pass judged a command that
//! had not ended. Once a child was started, SIGTERM and SIGINT are caught: with no child
//! running the process ends at once, as the default action would have ended it; with one,
//! the watcher waits for it (its timeout bounds the wait), records what it did, starts no
//! other and stops. A second signal stops the children's process groups and ends the process.
//!
//! A loop that stops by itself at safe points (`run --loop` on a live cluster) asks
//! [`catch_stop`] with `graceful`: the first signal then only raises the flag.
//!
//! [`Identity`] names a process beyond its pid, for a record that outlives the watcher (a
//! pass killed with SIGKILL leaves its child running): the pid and the start time the kernel
//! gives it, so that a pid reused by another process is not taken for the child.

mod run;
pub use run::{Output, RunError, run_once, run_recorded};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

const LOG_TARGET: &str = "autorepair::child";

/// The stop flag, raised by the first signal.
fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

static GRACEFUL: AtomicBool = AtomicBool::new(false);

/// Children starting or running: `None` between the decision to start one and its pid, so a
/// signal in between does not end the process under a child about to run.
static RUNNING: Mutex<Vec<(u64, Option<u32>)>> = Mutex::new(Vec::new());

fn running() -> std::sync::MutexGuard<'static, Vec<(u64, Option<u32>)>> {
    RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether a stop signal came.
pub fn stop_requested() -> bool {
    flag().load(Ordering::SeqCst)
}

/// Catches SIGTERM and SIGINT from now on (once per process; `graceful` once asked stays).
/// Returns the stop flag.
pub fn catch_stop(graceful: bool) -> Arc<AtomicBool> {
    if graceful {
        GRACEFUL.store(true, Ordering::SeqCst);
    }
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(start_signal_thread);
    flag().clone()
}

fn start_signal_thread() {
    // The handlers are installed here, before this returns and a child can be started: a
    // thread that installed them later would leave a window in which SIGTERM still ended the
    // process under its child (a loaded machine made it wide). The thread only waits on them.
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    else {
        tracing::warn!(target: LOG_TARGET, "cannot catch SIGTERM: a stop may leave a command running");
        return;
    };
    let handlers = {
        use tokio::signal::unix::{SignalKind, signal};
        let _inside = rt.enter();
        signal(SignalKind::terminate()).and_then(|t| Ok((t, signal(SignalKind::interrupt())?)))
    };
    let Ok((mut term, mut int)) = handlers else {
        tracing::warn!(target: LOG_TARGET, "cannot catch SIGTERM: a stop may leave a command running");
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            rt.block_on(async {
                for n in 0.. {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = int.recv() => {}
                    }
                    signalled(n);
                }
            });
        });
    if let Err(e) = spawned {
        tracing::warn!(target: LOG_TARGET, error = %e, "cannot start the signal thread");
    }
}

fn signalled(n: u32) {
    // Raised under the lock `Running::starting` takes: a child is either listed here, or
    // never started.
    let children: Vec<Option<u32>> = {
        let all = running();
        flag().store(true, Ordering::SeqCst);
        all.iter().map(|(_, pid)| *pid).collect()
    };
    if n > 0 {
        stop_groups(&children);
        std::process::exit(143);
    }
    if children.is_empty() && !GRACEFUL.load(Ordering::SeqCst) {
        std::process::exit(143);
    }
    if children.is_empty() {
        tracing::info!(target: LOG_TARGET, "stop signal: stopping once the write under way is done (a second signal stops at once)");
    } else {
        let pids: Vec<String> = children.iter().flatten().map(u32::to_string).collect();
        tracing::warn!(
            target: LOG_TARGET,
            "stop signal: waiting for the command under way (pid {}) to end, within its timeout, then stopping; a second signal stops it and its process group",
            pids.join(", ")
        );
    }
}

/// SIGTERM to each child's process group, SIGKILL to what is left a second later.
fn stop_groups(children: &[Option<u32>]) {
    let groups: Vec<rustix::process::Pid> = children
        .iter()
        .flatten()
        .filter_map(|p| i32::try_from(*p).ok())
        .filter_map(rustix::process::Pid::from_raw)
        .collect();
    if groups.is_empty() {
        return;
    }
    for signal in [rustix::process::Signal::TERM, rustix::process::Signal::KILL] {
        for g in &groups {
            let _ = rustix::process::kill_process_group(*g, signal);
        }
        if signal == rustix::process::Signal::TERM {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    tracing::warn!(target: LOG_TARGET, "second stop signal: the commands under way were stopped");
}

/// A child starting, then running, while it lives: what a stop signal waits for.
pub struct Running {
    id: u64,
}

impl Running {
    /// Before the spawn: catches the stop signals from now on. `None` when a stop was asked:
    /// no child is started after it.
    pub fn starting() -> Option<Running> {
        catch_stop(false);
        let mut all = running();
        if stop_requested() {
            return None;
        }
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        all.push((id, None));
        Some(Running { id })
    }

    /// The child runs as `pid` (its process group too).
    pub fn started(&self, pid: u32) {
        if let Some(s) = running().iter_mut().find(|(id, _)| *id == self.id) {
            s.1 = Some(pid);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        running().retain(|(id, _)| *id != self.id);
    }
}

/// A process, by its pid and the time it started (field 22 of `/proc/PID/stat`, in clock
/// ticks since boot): a pid the kernel gave to another process since does not match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    pub pid: u32,
    pub start: u64,
}

impl Identity {
    /// The process `pid`, if it runs (a zombie has ended).
    pub fn of(pid: u32) -> std::io::Result<Option<Identity>> {
        Ok(Identity::stat(pid)?.and_then(|(running, id)| running.then_some(id)))
    }

    /// A child of this process not yet waited for, ended or not: its pid cannot have been
    /// given to another process.
    pub fn of_child(pid: u32) -> std::io::Result<Option<Identity>> {
        Ok(Identity::stat(pid)?.map(|(_, id)| id))
    }

    /// A child of this process just started, as its record holds it: [`Self::of_child`],
    /// which must find it.
    pub fn of_started(pid: u32) -> Result<Identity, RecordError> {
        Identity::of_child(pid)
            .map_err(RecordError::Proc)?
            .ok_or(RecordError::NoProcEntry)
    }

    /// Whether `pid` runs, and its identity.
    fn stat(pid: u32) -> std::io::Result<Option<(bool, Identity)>> {
        let stat = match crate::files::read_text(format!("/proc/{pid}/stat")) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        // The name, in parentheses, may hold spaces and parentheses: the fields follow the
        // last ')'. There, field 3 (the state) comes first and field 22 twentieth.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let bad = || {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("/proc/{pid}/stat: no state and start time in {stat:?}"),
            )
        };
        let state = fields.first().ok_or_else(bad)?;
        let start = fields
            .get(19)
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)?;
        Ok(Some((
            !matches!(*state, "Z" | "X" | "x"),
            Identity { pid, start },
        )))
    }

    /// Whether this very process still runs.
    pub fn alive(&self) -> std::io::Result<bool> {
        Ok(Identity::of(self.pid)? == Some(*self))
    }

    /// As a record keeps it: `PID START`.
    pub fn to_record(&self) -> String {
        format!("{} {}\n", self.pid, self.start)
    }

    /// The first line of a record (what follows says what the process is, for messages).
    pub fn from_record(text: &str) -> Option<Identity> {
        let mut words = text.lines().next()?.split_whitespace();
        let id = Identity {
            pid: words.next()?.parse().ok()?,
            start: words.next()?.parse().ok()?,
        };
        words.next().is_none().then_some(id)
    }
}

/// What a record of a child says when read: none, the child still running, one that ended
/// (or a pid now another process's), or a record that cannot be read.
#[derive(Debug)]
pub enum Recorded {
    Nothing,
    /// The child, and what its record says it is (empty when it says nothing).
    Running(Identity, String),
    Ended,
    Unreadable(String),
}

pub fn read_record(path: &Path) -> Recorded {
    let text = match crate::files::read_text(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Recorded::Nothing,
        Err(e) => return Recorded::Unreadable(e.to_string()),
    };
    let Some(id) = Identity::from_record(&text) else {
        return Recorded::Unreadable(format!("not `PID START`: {:?}", text.trim_end()));
    };
    match id.alive() {
        Ok(true) => Recorded::Running(id, text.lines().skip(1).collect::<Vec<_>>().join(" ")),
        Ok(false) => Recorded::Ended,
        Err(e) => Recorded::Unreadable(format!("cannot tell whether pid {} runs: {e}", id.pid)),
    }
}

/// Where this process records the children it starts, while a pass holds the fleet's lock.
static RECORD: Mutex<Option<PathBuf>> = Mutex::new(None);

fn record_slot() -> std::sync::MutexGuard<'static, Option<PathBuf>> {
    RECORD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The record of the command a pass under the fleet's lock runs: `LOCK.command`, beside the
/// lock (and the brake), so every run on the fleet from this host finds it.
pub fn record_path(lock: &Path) -> PathBuf {
    let mut name = lock.as_os_str().to_owned();
    name.push(".command");
    PathBuf::from(name)
}

/// A command an earlier pass started and that may still run: a pass killed with SIGKILL
/// leaves its command running (in a process group of its own, out of the signal's reach), and
/// a pass that judged its step meanwhile would call failed a repair still under way.
#[derive(Debug, thiserror::Error)]
pub enum EarlierCommand {
    #[error(
        "a command an earlier pass started still runs (pid {pid}{what}, recorded in {}): this pass did not act, so that its step is judged once the command has ended; if it hangs, stop it (kill -- -{pid})",
        record.display()
    )]
    Running {
        record: PathBuf,
        pid: u32,
        what: String,
    },
    #[error(
        "{}: {why}: it records a command an earlier pass started, which may still run, so this pass did not act; once no repair command of this fleet runs, remove {}",
        record.display(),
        record.display()
    )]
    Unreadable { record: PathBuf, why: String },
    #[error("cannot remove {}, the record of a command that has ended: make its directory writable", record.display())]
    Remove {
        record: PathBuf,
        source: std::io::Error,
    },
}

/// While it lives, every child this process starts is recorded in [`record_path`] until it
/// ends (and one that cannot be recorded is stopped before it does anything much).
#[must_use]
pub struct Recording(());

impl Drop for Recording {
    fn drop(&mut self) {
        *record_slot() = None;
    }
}

/// Records the children started from now on beside `lock` (which this process holds), once
/// no command an earlier holder recorded there still runs. Fails closed on a record it cannot
/// read.
pub fn record_beside(lock: &Path) -> Result<Recording, EarlierCommand> {
    let record = record_path(lock);
    match read_record(&record) {
        Recorded::Nothing => {}
        Recorded::Ended => {
            tracing::info!(target: LOG_TARGET, "the command recorded in {} has ended: its pass was stopped before it, and this pass judges its step", record.display());
            match std::fs::remove_file(&record) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(EarlierCommand::Remove { record, source }),
            }
        }
        Recorded::Running(id, what) => {
            return Err(EarlierCommand::Running {
                record,
                pid: id.pid,
                what: if what.is_empty() {
                    String::new()
                } else {
                    format!(": {what}")
                },
            });
        }
        Recorded::Unreadable(why) => return Err(EarlierCommand::Unreadable { record, why }),
    }
    *record_slot() = Some(record);
    Ok(Recording(()))
}

/// Records the child `pid` (started as `what`) where [`record_beside`] said, if a pass asked.
/// Returns the record to remove once the child has ended.
pub fn record_child(pid: u32, what: &str) -> Result<Option<PathBuf>, RecordError> {
    let Some(record) = record_slot().clone() else {
        return Ok(None);
    };
    let id = Identity::of_started(pid)?;
    // One line: a name with a newline in it must not make the record unreadable.
    let what: String = what
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    write_record(&record, &format!("{}{what}\n", id.to_record()))?;
    Ok(Some(record))
}

/// Why a child just started cannot be recorded: it is then killed at once
/// ([`run_recorded`]), since a pass killed later would leave it running unknown.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Its `/proc/PID/stat` cannot be read or makes no sense (the error names the file when
    /// it read it).
    #[error("{0}")]
    Proc(std::io::Error),
    #[error("it has no /proc entry")]
    NoProcEntry,
    #[error("cannot record it in {}: {error}", path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// Writes `text` as the record `path` of a child just started.
pub fn write_record(path: &Path, text: &str) -> Result<(), RecordError> {
    crate::files::write_atomically(path, text.as_bytes()).map_err(|error| RecordError::Write {
        path: path.to_owned(),
        error,
    })
}

/// Removes the record of a child that has ended.
pub fn forget_child(record: &Path) {
    if let Err(e) = std::fs::remove_file(record)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(target: LOG_TARGET, "cannot remove {}: {e}; the next pass finds the command ended", record.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_is_the_pid_and_its_start_time() {
        let me = Identity::of(std::process::id()).unwrap().unwrap();
        assert!(me.alive().unwrap());
        let other_start = Identity {
            start: me.start + 1,
            ..me
        };
        assert!(
            !other_start.alive().unwrap(),
            "a pid reused is another process"
        );
        assert_eq!(Identity::from_record(&me.to_record()), Some(me));
        for bad in ["", "12", "12 x", "x 12", "12 34 56", "-1 3"] {
            assert_eq!(Identity::from_record(bad), None, "{bad:?}");
        }
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Ended but not reaped: a zombie, which runs no more.
        let start = std::time::Instant::now();
        while Identity::of(pid).unwrap().is_some() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(Identity::of(pid).unwrap(), None);
        // Not yet waited for, its pid is still its own: it can be recorded.
        assert!(Identity::of_child(pid).unwrap().is_some());
        child.wait().unwrap();
    }

    #[test]
    fn a_record_says_what_it_can_and_fails_closed_on_what_it_cannot() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec");
        assert!(matches!(read_record(&path), Recorded::Nothing));
        let me = Identity::of(std::process::id()).unwrap().unwrap();
        let cases: &[(String, &str)] = &[
            (me.to_record(), "running"),
            (
                format!("{}/usr/bin/repair 10.0.0.1\n", me.to_record()),
                "running",
            ),
            (
                Identity {
                    start: me.start + 1,
                    ..me
                }
                .to_record(),
                "ended",
            ),
            ("4194304 1\n".into(), "ended"),
            ("garbage\n".into(), "unreadable"),
            (String::new(), "unreadable"),
        ];
        for (text, want) in cases {
            std::fs::write(&path, text).unwrap();
            let got = match read_record(&path) {
                Recorded::Nothing => "nothing",
                Recorded::Running(..) => "running",
                Recorded::Ended => "ended",
                Recorded::Unreadable(_) => "unreadable",
            };
            assert_eq!(got, *want, "{text:?}");
        }
    }
}
