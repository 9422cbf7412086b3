//! One pass at a time per fleet: an exclusive lock on a file, held until dropped. The kernel
//! drops it when the process dies, so a killed run never leaves a stale lock.
//!
//! The lock belongs to the fleet, not to the host: two clusters watched from one host never
//! block each other, and every run on the same fleet finds the same lock file.

use std::fs::{File, TryLockError};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where the locks of RAPI clusters live (cleared at boot, like the locks themselves).
pub const RUN_LOCK_DIR: &str = "/run/lock";

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another autorepair run or admin command holds the lock {path}: this one did not act; try again when it ends, or give --wait to wait for it"
    )]
    Busy { path: PathBuf },
    #[error(
        "another autorepair run or admin command still held the lock {} after --wait {}: this one did not act; wait longer, or see what holds it (fuser -v {})",
        path.display(),
        humantime::format_duration(*waited),
        path.display()
    )]
    StillBusy {
        path: PathBuf,
        waited: std::time::Duration,
    },
    // The OS error is the source, printed once by whoever prints the chain.
    #[error("cannot open the lock file {path}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "RAPI URL {url:?} has no host: give it as https://HOST:PORT (or name a lock file with --lock-file)"
    )]
    NoHost { url: String },
}

#[derive(Debug)]
pub struct LockGuard {
    _file: File,
    path: PathBuf,
}

impl LockGuard {
    /// The lock file held: the brake lives beside it (crate::brake).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// [`acquire`], waiting up to `wait` while another holder has it (`None`: not at all). The
/// lock is asked for again every 100 ms: flock(2) cannot wait with a time limit.
pub fn acquire_waiting(
    path: &Path,
    wait: Option<std::time::Duration>,
) -> Result<LockGuard, LockError> {
    // A wait past what the clock can hold (the flags' parser bounds it well below) is a wait
    // without end, never a panic.
    let deadline = wait.map(|w| std::time::Instant::now().checked_add(w));
    loop {
        match acquire(path) {
            Err(LockError::Busy { .. })
                if deadline.is_some_and(|d| d.is_none_or(|d| std::time::Instant::now() < d)) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(LockError::Busy { path }) if wait.is_some() => {
                return Err(LockError::StillBusy {
                    path,
                    waited: wait.unwrap_or_default(),
                });
            }
            other => return other,
        }
    }
}

pub fn acquire(path: &Path) -> Result<LockGuard, LockError> {
    let file = crate::files::open_lock_file(path).map_err(|source| LockError::Io {
        path: path.to_owned(),
        source,
    })?;
    match file.try_lock() {
        Ok(()) => Ok(LockGuard {
            _file: file,
            path: path.to_owned(),
        }),
        Err(TryLockError::WouldBlock) => Err(LockError::Busy {
            path: path.to_owned(),
        }),
        Err(TryLockError::Error(source)) => Err(LockError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// The lock of a fleet file: `FLEET.lock` beside the file it resolves to, so every path that
/// names the same file (relative, absolute, through a symlink) finds the same lock. Fails when
/// the fleet file does not exist, before any lock file is created, and when it has other hard
/// links: those would find locks of their own, and the file's atomic replacement would split
/// them from it. (Not a lock named by the file's inode: every save replaces the file, and so its
/// inode, while the lock must stay one across passes.)
pub fn beside(fleet_file: &Path) -> std::io::Result<PathBuf> {
    let real = std::fs::canonicalize(fleet_file)?;
    let links = std::fs::metadata(&real)?.nlink();
    if links > 1 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "it has {links} hard links: each name would find a lock of its own, and a save would split them; keep one name (a symlink may give it others)"
            ),
        ));
    }
    let mut name = real.into_os_string();
    name.push(".lock");
    Ok(PathBuf::from(name))
}

/// The lock of a cluster reached over RAPI: one per host and port, in [`RUN_LOCK_DIR`], e.g.
/// `/run/lock/autorepair-cluster.example.org:5080.lock`. The port is the one the client really
/// connects to (443 when the URL has none).
pub fn for_url(url: &str) -> Result<PathBuf, LockError> {
    let no_host = || LockError::NoHost {
        url: url.to_owned(),
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| no_host())?;
    let host = parsed.host_str().ok_or_else(no_host)?.to_ascii_lowercase();
    let port = parsed.port_or_known_default().ok_or_else(no_host)?;
    // An IPv6 host comes with brackets and colons: keep the name one plain path component.
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-._".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    Ok(Path::new(RUN_LOCK_DIR).join(format!("autorepair-{host}:{port}.lock")))
}

/// The lock of a Ganeti cluster by its identity (the uuid RAPI's `/2/info` gives), e.g.
/// `/run/lock/autorepair-ganeti-<uuid>.lock`: every URL that reaches the cluster (its name,
/// its master's IP, 127.0.0.1 on the master) finds the same lock.
pub fn for_cluster(uuid: &str) -> PathBuf {
    // The uuid comes from the server: keep it one plain path component whatever it says.
    let uuid: String = uuid
        .trim()
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Path::new(RUN_LOCK_DIR).join(format!("autorepair-ganeti-{uuid}.lock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rapi_cluster_is_locked_by_host_and_port() {
        let cases = [
            (
                "https://cluster.example.org:5080",
                "autorepair-cluster.example.org:5080.lock",
            ),
            (
                "https://Cluster.Example.org:5080/",
                "autorepair-cluster.example.org:5080.lock",
            ),
            (
                "https://cluster.example.org:5081",
                "autorepair-cluster.example.org:5081.lock",
            ),
            (
                "https://other.example.org:5080",
                "autorepair-other.example.org:5080.lock",
            ),
            (
                "https://cluster.example.org",
                "autorepair-cluster.example.org:443.lock",
            ),
            ("https://[::1]:5080", "autorepair-___1_:5080.lock"),
            ("https://192.0.2.7:5080", "autorepair-192.0.2.7:5080.lock"),
        ];
        for (url, want) in cases {
            assert_eq!(
                for_url(url).unwrap(),
                Path::new(RUN_LOCK_DIR).join(want),
                "{url}"
            );
        }
        for bad in ["cluster.example.org:5080", "", "https://"] {
            let e = for_url(bad).unwrap_err().to_string();
            assert!(e.contains("https://HOST:PORT"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_ganeti_cluster_is_locked_by_its_uuid_as_one_path_component() {
        let cases = [
            (
                "0b9a1a51-5d6e-4f5b-9c39-1d0c2f4f2d11",
                "autorepair-ganeti-0b9a1a51-5d6e-4f5b-9c39-1d0c2f4f2d11.lock",
            ),
            // Ganeti's spelling may differ in case and trailing newline, not in identity.
            (" 0B9A1A51-5D6E\n", "autorepair-ganeti-0b9a1a51-5d6e.lock"),
            ("a b", "autorepair-ganeti-a_b.lock"),
            (
                "../../etc/passwd",
                "autorepair-ganeti-______etc_passwd.lock",
            ),
        ];
        for (uuid, want) in cases {
            assert_eq!(
                for_cluster(uuid),
                Path::new(RUN_LOCK_DIR).join(want),
                "{uuid}"
            );
        }
    }

    #[test]
    fn every_path_to_a_fleet_file_finds_the_same_lock() {
        let dir = tempfile::tempdir().unwrap();
        let fleet = dir.path().join("a.json");
        std::fs::write(&fleet, "{}").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&fleet, &link).unwrap();
        let dotted = dir.path().join(".").join("a.json");
        let want = beside(&fleet).unwrap();
        assert!(want.ends_with("a.json.lock"), "{}", want.display());
        for p in [&link, &dotted] {
            assert_eq!(beside(p).unwrap(), want, "{}", p.display());
        }
        let missing = dir.path().join("missing.json");
        assert_eq!(
            beside(&missing).unwrap_err().kind(),
            std::io::ErrorKind::NotFound
        );
        assert!(!dir.path().join("missing.json.lock").exists());
    }

    #[test]
    fn a_lock_excludes_a_second_holder_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let held = acquire(&path).unwrap();
        assert!(matches!(acquire(&path), Err(LockError::Busy { .. })));
        drop(held);
        acquire(&path).unwrap();
    }
}
