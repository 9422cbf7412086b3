//! The operator's brake: a suspend given while a pass runs must stop that pass's repairs within
//! seconds, not once the pass ends (a pass over RAPI may wait many minutes for Ganeti to apply
//! its tag jobs). On a live fleet the admin verb does not wait for the pass's lock: it pulls the
//! brake, a small file beside the lock (`LOCK.brake`) naming the suspended object, and writes
//! its mark at once (the fleet's own store orders the writes). A pass on this host reads the
//! file before each of its writes and while it waits at its end; once it changed since the pass
//! began, the pass writes nothing more and cancels the operations it queued that did not start
//! yet on the targets the suspend covers (docs/design.md, "The brake").

use crate::engine::{BackendError, WriteGuard};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The brake file of the fleet whose lock is `lock`.
pub fn path(lock: &Path) -> PathBuf {
    let mut name = lock.as_os_str().to_owned();
    name.push(".brake");
    PathBuf::from(name)
}

/// Pulls the brake of the fleet whose lock is `lock`: `object` was suspended now. The file is
/// replaced whole (written aside, then renamed), so a pass never reads half of it; the time
/// in nanoseconds and the process id make every pull differ from the one before.
pub fn pull(lock: &Path, object: &str) -> std::io::Result<()> {
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let text = format!(
        "{object}\n{}.{:09}\n{}\n",
        at.as_secs(),
        at.subsec_nanos(),
        std::process::id()
    );
    let path = path(lock);
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".{}", std::process::id()));
    std::fs::write(&aside, text)?;
    std::fs::rename(&aside, &path)
}

/// A brake pulled while a pass ran: the object suspended and when (seconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    pub object: String,
    pub at: i64,
}

impl Pulled {
    /// Why the pass stops, for its log and summary.
    pub fn why(&self) -> String {
        format!(
            "{} was suspended at {} while this pass ran (the brake {}): it starts no repair after that",
            self.object,
            humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.at.max(0) as u64)
            ),
            "autorepair suspend pulls"
        )
    }
}

/// What a pass knows of its fleet's brake: the file as it was when the pass began.
#[derive(Debug, Clone)]
pub struct Watch {
    path: PathBuf,
    at_start: Option<String>,
}

impl Watch {
    /// Notes the brake as the pass begins: only a pull after this moment stops it.
    pub fn start(lock: &Path) -> Watch {
        let path = path(lock);
        let at_start = std::fs::read_to_string(&path).ok();
        Watch { path, at_start }
    }

    /// The brake pulled since the pass began, if any. One small read: cheap enough before each
    /// write. An unreadable file is no pull (the admin verb could not have written it either).
    pub fn pulled(&self) -> Option<Pulled> {
        let now = std::fs::read_to_string(&self.path).ok()?;
        if self.at_start.as_deref() == Some(now.as_str()) {
            return None;
        }
        let mut lines = now.lines();
        let object = lines.next().filter(|o| !o.is_empty())?.to_owned();
        let at = lines
            .next()
            .and_then(|t| t.split('.').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_default();
        Some(Pulled { object, at })
    }

    /// Asked before every write of the pass: a pulled brake halts it.
    pub fn guard(&self) -> WriteGuard {
        let watch = self.clone();
        Arc::new(move || match watch.pulled() {
            Some(p) => Err(BackendError::Halted(p.why())),
            None => Ok(()),
        })
    }
}

/// Both guards, in turn: a pass asks the daemon's (stop signal, lease) and the brake.
pub fn both(first: Option<WriteGuard>, brake: WriteGuard) -> WriteGuard {
    match first {
        None => brake,
        Some(first) => Arc::new(move || first().and_then(|()| brake())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pull_after_the_pass_began_stops_it() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("fleet.lock");
        pull(&lock, "group/old").unwrap();
        let watch = Watch::start(&lock);
        assert_eq!(watch.pulled(), None, "a brake pulled before the pass");
        assert!(watch.guard()().is_ok());
        pull(&lock, "group/g1").unwrap();
        let pulled = watch.pulled().expect("pulled during the pass");
        assert_eq!(pulled.object, "group/g1");
        assert!(pulled.at > 1_700_000_000, "{pulled:?}");
        match watch.guard()() {
            Err(BackendError::Halted(why)) => assert!(why.contains("group/g1"), "{why}"),
            other => panic!("not halted: {other:?}"),
        }
        // The same object suspended twice during a pass: the second pull is a change too.
        let again = Watch::start(&lock);
        pull(&lock, "group/g1").unwrap();
        assert!(again.pulled().is_some());
    }

    #[test]
    fn no_brake_file_is_no_pull() {
        let dir = tempfile::tempdir().unwrap();
        let watch = Watch::start(&dir.path().join("fleet.lock"));
        assert_eq!(watch.pulled(), None);
    }
}
