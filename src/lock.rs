//! One pass at a time per fleet: an exclusive lock on a file, held until dropped. The kernel
//! drops it when the process dies, so a killed run never leaves a stale lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another autorepair run holds the lock {path}; this one exits without acting")]
    Busy { path: PathBuf },
    #[error("cannot open the lock file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[derive(Debug)]
pub struct LockGuard {
    _file: File,
}

pub fn acquire(path: &Path) -> Result<LockGuard, LockError> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|source| LockError::Io {
            path: path.to_owned(),
            source,
        })?;
    match file.try_lock() {
        Ok(()) => Ok(LockGuard { _file: file }),
        Err(TryLockError::WouldBlock) => Err(LockError::Busy {
            path: path.to_owned(),
        }),
        Err(TryLockError::Error(source)) => Err(LockError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}
