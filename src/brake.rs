//! The operator's brake: a suspend given while a pass runs must stop that pass's repairs within
//! seconds, not once the pass ends (a pass over RAPI may wait many minutes for Ganeti to apply
//! its tag jobs). On a live fleet the admin verb does not wait for the pass's lock: it pulls the
//! brake, a small file beside the lock (`LOCK.brake`) naming the suspended object, and writes
//! its mark at once (the fleet's own store orders the writes). A pass on this host reads the
//! file before each of its writes and while it waits at its end; once it changed since the pass
//! began, the pass writes nothing more and cancels the operations it queued that did not start
//! yet on the targets the suspend covers (docs/design.md, "The brake").
//!
//! The file only stops passes already running on this host, fast. It never holds a pass that
//! begins after it: that pass reads the fleet, whose own marks decide (rule 11), with the
//! suspend writes the fleet took but did not apply yet counted as done (a Ganeti tag job
//! still queued). A suspend the fleet refused, one whose write failed, and one removed by hand
//! since hold nothing. Suspends given on other hosts reach a running pass through the
//! backend's own watch of the fleet (`Backend::suspended_meanwhile`).

use crate::engine::{BackendError, WriteGuard};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The brake file of the fleet whose lock is `lock`.
pub fn path(lock: &Path) -> PathBuf {
    let mut name = lock.as_os_str().to_owned();
    name.push(".brake");
    PathBuf::from(name)
}

/// Pulls the brake of the fleet whose lock is `lock`: `object` was suspended now. The time in
/// nanoseconds and the process id make every pull differ from the one before.
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
    // Replaced whole: a pass never reads half of it.
    crate::files::write_atomically(&path(lock), text.as_bytes())
}

/// A brake pulled while a pass ran: the object suspended and when (seconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    pub object: String,
    pub at: i64,
}

impl Pulled {
    /// A suspend of `object` seen now, in the fleet rather than in the file.
    pub fn now(object: String) -> Pulled {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        Pulled { object, at }
    }

    /// Why the pass stops, for its log and summary.
    pub fn why(&self) -> String {
        format!(
            "{} was suspended at {} (the brake `autorepair suspend` pulls): no repair starts under it",
            self.object,
            humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(self.at.max(0) as u64)
            ),
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
        let at_start = crate::files::read_text(&path).ok();
        Watch { path, at_start }
    }

    /// The brake pulled since the pass began, if any. One small read: cheap enough before each
    /// write. An unreadable file is no pull (the admin verb could not have written it either).
    pub fn pulled(&self) -> Option<Pulled> {
        let now = crate::files::read_text(&self.path).ok()?;
        // The same pull, now marked applied, is no new pull.
        let same = |start: &str| now == start || now.strip_suffix(APPLIED) == Some(start);
        if self.at_start.as_deref().is_some_and(same) {
            return None;
        }
        parse(&now)
    }

    /// Asked before every write of the pass: a pulled brake halts it.
    pub fn guard(&self) -> WriteGuard {
        let watch = self.clone();
        Arc::new(move || match watch.pulled() {
            Some(p) => Err(BackendError::Halted(p.why())),
            None => Ok(None),
        })
    }
}

/// The last line of a brake whose suspend the verb saw applied.
const APPLIED: &str = "applied\n";

/// Marks the brake applied if it still names `object`: the verb saw its suspend in the fleet,
/// whose own mark governs from now on.
pub fn applied(lock: &Path, object: &str) -> std::io::Result<()> {
    let path = path(lock);
    let text = match crate::files::read_text(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if text.ends_with(APPLIED) || parse(&text).is_none_or(|p| p.object != object) {
        return Ok(());
    }
    crate::files::write_atomically(&path, format!("{text}{APPLIED}").as_bytes())
}

/// Lets the brake go if it names `object`: a resume of it undoes the suspend, and a pass running
/// now must not stop for it.
pub fn release(lock: &Path, object: &str) -> std::io::Result<()> {
    let path = path(lock);
    match crate::files::read_text(&path) {
        Ok(text) if parse(&text).is_some_and(|p| p.object == object) => std::fs::remove_file(&path),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn parse(text: &str) -> Option<Pulled> {
    let mut lines = text.lines();
    let object = lines.next().filter(|o| !o.is_empty())?.to_owned();
    let at = lines
        .next()
        .and_then(|t| t.split('.').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_default();
    Some(Pulled { object, at })
}

/// Both guards, in turn: a pass asks the daemon's (stop signal, lease) and the brake.
pub fn both(first: Option<WriteGuard>, brake: WriteGuard) -> WriteGuard {
    match first {
        None => brake,
        // The deadline is the first's: the brake gives none.
        Some(first) => Arc::new(move || {
            let until = first()?;
            brake()?;
            Ok(until)
        }),
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
    fn a_resume_releases_the_brake_of_its_object_only() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("fleet.lock");
        let running = Watch::start(&lock);
        pull(&lock, "group/g1").unwrap();
        release(&lock, "group/other").unwrap();
        assert!(running.pulled().is_some(), "another object");
        release(&lock, "group/g1").unwrap();
        assert_eq!(running.pulled(), None, "resumed");
        assert!(!path(&lock).exists());
    }

    #[test]
    fn an_applied_suspend_stops_no_earlier_pass_twice() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("fleet.lock");
        pull(&lock, "cluster").unwrap();
        let between = Watch::start(&lock);
        applied(&lock, "group/other").unwrap();
        assert_eq!(between.pulled(), None, "another object");
        applied(&lock, "cluster").unwrap();
        assert_eq!(between.pulled(), None, "marking it applied is no new pull");
        applied(&lock, "cluster").unwrap();
        assert_eq!(between.pulled(), None, "twice neither");
        pull(&lock, "cluster").unwrap();
        assert!(between.pulled().is_some(), "a new suspend is");
    }

    #[test]
    fn no_brake_file_is_no_pull() {
        let dir = tempfile::tempdir().unwrap();
        let watch = Watch::start(&dir.path().join("fleet.lock"));
        assert_eq!(watch.pulled(), None);
    }
}
