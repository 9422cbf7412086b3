//! Writing files so that a crash leaves the old or the new content, never half of it.

use rustix::fs::{AtFlags, OFlags};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` so that a crash leaves the old content or the new, never half:
/// the bytes go to a temporary file in `path`'s directory, which is synced, renamed over `path`,
/// and the directory synced (without that last sync a power loss can undo the rename, and a
/// step recorded as started before its command ran would read as not started again). The
/// directory must be writable: the file is replaced, never rewritten in place.
///
/// - A file its owner made read-only (no write permission for this user, or none for anyone,
///   as `chmod 444` leaves it, which root would otherwise ignore) is refused, unchanged.
/// - The new file keeps the permissions, and where this user may set them the owner and group,
///   of the one it replaces (an admin's `chmod 640` survives the watcher's passes); a file that
///   did not exist gets the umask's, as any program's new file does.
/// - The temporary file has no name while it is written (Linux's `O_TMPFILE`), so Ctrl-C or a
///   kill during a long write leaves nothing behind. It is named only for the instant between
///   linking and renaming; should the process die right then, the next write to the same file
///   removes that leftover, recognised by its name and the dead process id in it.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let old = match std::fs::metadata(path) {
        Ok(meta) => {
            refuse_read_only(path, &meta)?;
            Some(meta)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let keep = old.map(|m| Kept {
        mode: m.permissions().mode() & 0o7777,
        owner: Some((m.uid(), m.gid())),
    });
    write_atomically_with(path, bytes, keep)
}

/// [`write_atomically`], for a file others read whatever the umask (a web server serving a
/// page, a metrics collector): it gets `mode` before it takes `path`'s place.
pub fn write_atomically_mode(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    if let Ok(meta) = std::fs::metadata(path) {
        refuse_read_only(path, &meta)?;
    }
    write_atomically_with(path, bytes, Some(Kept { mode, owner: None }))
}

struct Kept {
    mode: u32,
    owner: Option<(u32, u32)>,
}

fn refuse_read_only(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<()> {
    let mode = meta.permissions().mode() & 0o7777;
    // Opening for writing asks the kernel whether this user may write it; nothing is changed.
    let opened = std::fs::OpenOptions::new().write(true).open(path);
    // A mount is no file's mode: chmod cannot help there.
    if let Err(e) = &opened
        && e.kind() == std::io::ErrorKind::ReadOnlyFilesystem
    {
        return Err(read_only_mount(path));
    }
    if mode & 0o222 != 0 && opened.is_ok() {
        return Ok(());
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!(
            "{} is read-only (mode {mode:04o}): autorepair does not replace a file it may not write; make it writable (chmod u+w) to let it, or use --dry-run",
            path.display()
        ),
    ))
}

fn read_only_mount(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ReadOnlyFilesystem,
        format!(
            "{} is on a read-only file system: autorepair cannot replace it; remount it read-write, or use --dry-run",
            path.display()
        ),
    )
}

fn write_atomically_with(path: &Path, bytes: &[u8], keep: Option<Kept>) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{} names no file", path.display())))?;
    let leftovers = Leftovers::of(&name.to_string_lossy());
    leftovers.remove_dead(dir);
    let unwritable_dir = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem {
            read_only_mount(dir)
        } else if e.kind() == std::io::ErrorKind::PermissionDenied {
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot create a file in {} ({e}): the file is replaced, not rewritten, so its directory must be writable",
                    dir.display()
                ),
            )
        } else {
            e
        }
    };
    let mut tmp = Unnamed::create(dir, &leftovers).map_err(unwritable_dir)?;
    let file = tmp.file();
    file.write_all(bytes)?;
    if let Some(keep) = &keep {
        if let Some((uid, gid)) = keep.owner {
            // Only root may give a file away, and only a member may set its group: keep what
            // this user may keep, and the replaced file is at worst owned by whoever ran us.
            let _ = std::os::unix::fs::fchown(&*file, Some(uid), Some(gid))
                .or_else(|_| std::os::unix::fs::fchown(&*file, None, Some(gid)));
        }
        file.set_permissions(std::fs::Permissions::from_mode(keep.mode))?;
    }
    file.sync_all()?;
    tmp.persist(path)?;
    std::fs::File::open(dir)?.sync_all()
}

/// The names this process gives the temporary files of one target file, and the way to find
/// the ones a dead process left: `.NAME.autorepair-PID-RANDOM.tmp`.
struct Leftovers {
    prefix: String,
}

impl Leftovers {
    fn of(name: &str) -> Self {
        // A file name has at most 255 bytes: a long target name is cut, so that its temporary
        // names (about 60 bytes more) still fit.
        let mut end = name.len().min(160);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        Leftovers {
            prefix: format!(".{}.autorepair-", &name[..end]),
        }
    }

    fn name(&self) -> String {
        format!(
            "{}{}-{}.tmp",
            self.prefix,
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        )
    }

    /// Removes the temporary files of this target file that processes no longer running left.
    /// A process that is still running (or a pid that cannot be read) keeps its file: it may
    /// be about to rename it.
    fn remove_dead(&self, dir: &Path) {
        // Without /proc no process can be told dead: remove nothing.
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        if !Path::new("/proc/self").exists() {
            return;
        }
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(rest) = name
                .to_str()
                .and_then(|n| n.strip_prefix(&self.prefix))
                .filter(|r| r.ends_with(".tmp"))
            else {
                continue;
            };
            let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
            let running = |pid: u32| Path::new("/proc").join(pid.to_string()).exists();
            if pid.is_some_and(|pid| pid != std::process::id() && !running(pid)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// tempfile's error names its temporary file (`… at path "/dir/.r.html.autorepair-11897-….tmp"`),
/// a name the user never gave and that no longer exists: keep the cause, name the directory
/// (the caller names the file).
fn without_temporary_name(e: std::io::Error, dir: &Path) -> std::io::Error {
    let text = e.to_string();
    let cause = text.split(" at path ").next().unwrap_or(&text);
    std::io::Error::new(
        e.kind(),
        format!("cannot create a file in {}: {cause}", dir.display()),
    )
}

/// A temporary file in the target's directory: without a name where the file system supports
/// `O_TMPFILE`, else named as [`Leftovers`] says and removed on drop.
enum Unnamed {
    Anonymous {
        file: std::fs::File,
        dir: PathBuf,
        name: String,
    },
    Named(tempfile::NamedTempFile),
}

impl Unnamed {
    fn create(dir: &Path, leftovers: &Leftovers) -> std::io::Result<Self> {
        // Created as open(2) creates a new file, the umask applied; a kept mode replaces it.
        // Naming it later goes through /proc/self/fd: without /proc, a named file from the
        // start.
        let anonymous = if Path::new("/proc/self/fd").is_dir() {
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(OFlags::TMPFILE.bits() as i32)
                .mode(0o666)
                .open(dir)
        } else {
            Err(std::io::ErrorKind::Unsupported.into())
        };
        match anonymous {
            Ok(file) => Ok(Unnamed::Anonymous {
                file,
                dir: dir.to_owned(),
                name: leftovers.name(),
            }),
            // Not every file system has O_TMPFILE (NFS, older kernels): a named file then.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
                ) =>
            {
                Err(e)
            }
            Err(_) => {
                let name = leftovers.name();
                let (prefix, suffix) = name.split_at(name.len() - ".tmp".len());
                tempfile::Builder::new()
                    .prefix(prefix)
                    .suffix(suffix)
                    .rand_bytes(0)
                    .permissions(std::fs::Permissions::from_mode(0o666))
                    .tempfile_in(dir)
                    .map(Unnamed::Named)
                    .map_err(|e| without_temporary_name(e, dir))
            }
        }
    }

    fn file(&mut self) -> &mut std::fs::File {
        match self {
            Unnamed::Anonymous { file, .. } => file,
            Unnamed::Named(t) => t.as_file_mut(),
        }
    }

    fn persist(self, path: &Path) -> std::io::Result<()> {
        match self {
            Unnamed::Named(t) => t.persist(path).map(drop).map_err(|e| e.error),
            Unnamed::Anonymous { file, dir, name } => {
                // linkat(2) cannot replace a file: link it under a name of its own, then rename
                // that over the target. The name exists only between these two calls.
                let linked = dir.join(&name);
                let fd = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
                rustix::fs::linkat(
                    rustix::fs::CWD,
                    fd.as_str(),
                    rustix::fs::CWD,
                    &linked,
                    AtFlags::SYMLINK_FOLLOW,
                )?;
                std::fs::rename(&linked, path).inspect_err(|_| {
                    let _ = std::fs::remove_file(&linked);
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        let dir = tempfile::tempdir().unwrap();
        for before in [0o600, 0o640, 0o644, 0o664] {
            let path = dir.path().join(format!("fleet-{before:o}.json"));
            std::fs::write(&path, "old").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(before)).unwrap();
            write_atomically(&path, b"new").unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"new");
            assert_eq!(mode(&path), before, "{}", path.display());
        }
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_read_only_file_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        // 0444 is read-only even for root, who may write anything: the mode says what the
        // admin meant. 0 likewise.
        for mode in [0o444, 0o400, 0o000] {
            let path = dir.path().join(format!("fleet-{mode:o}.json"));
            std::fs::write(&path, "old").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let before = std::fs::metadata(&path).unwrap();
            let e = write_atomically(&path, b"new").unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
            let e = e.to_string();
            assert!(e.contains(&format!("mode {mode:04o}")), "{e}");
            assert!(e.contains("chmod u+w"), "says what to do: {e}");
            assert!(
                e.contains(&path.display().to_string()),
                "names the file: {e}"
            );
            let after = std::fs::metadata(&path).unwrap();
            assert_eq!((after.ino(), after.mode()), (before.ino(), before.mode()));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"old");
        }
        let page = dir.path().join("page.html");
        std::fs::write(&page, "old").unwrap();
        std::fs::set_permissions(&page, std::fs::Permissions::from_mode(0o444)).unwrap();
        assert!(write_atomically_mode(&page, b"new", 0o644).is_err());
    }

    #[test]
    fn a_file_with_the_longest_name_is_saved_too() {
        let dir = tempfile::tempdir().unwrap();
        // 255 bytes, the most a name may have; its temporary name must fit as well.
        let name = format!("{}.json", "é".repeat(125));
        let path = dir.path().join(&name);
        write_atomically(&path, b"x").unwrap();
        assert_eq!(entries(dir.path()), [name]);
    }

    #[test]
    fn a_save_leaves_no_file_but_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.json");
        for round in 0..3 {
            write_atomically(&path, format!("{round}").as_bytes()).unwrap();
            assert_eq!(entries(dir.path()), ["fleet.json"]);
        }
    }

    #[test]
    fn leftovers_of_dead_processes_are_removed_by_the_next_save() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.json");
        std::fs::write(&path, "old").unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let leftovers = Leftovers::of("fleet.json");
        let dead_left = format!("{}{dead}-0123.tmp", leftovers.prefix);
        // pid 1 runs as long as the machine does: its file may be about to be renamed.
        let alive_left = format!("{}1-4567.tmp", leftovers.prefix);
        // Another file's leftovers, and files that only look alike, are not ours to remove.
        let others = [
            format!(".other.json.autorepair-{dead}-89ab.tmp"),
            format!("{}{dead}-cdef.txt", leftovers.prefix),
            ".tmpAbC123".to_owned(),
        ];
        for name in [&dead_left, &alive_left].into_iter().chain(&others) {
            std::fs::write(dir.path().join(name), "partial").unwrap();
        }
        write_atomically(&path, b"new").unwrap();
        let mut want: Vec<String> = [alive_left, "fleet.json".to_owned()]
            .into_iter()
            .chain(others)
            .collect();
        want.sort();
        assert_eq!(entries(dir.path()), want);
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
    }

    #[test]
    fn a_new_file_gets_the_modes_a_new_file_gets() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours");
        write_atomically(&ours, b"x").unwrap();
        // What the umask makes of a plain new file, whatever this machine's umask is.
        let theirs = dir.path().join("theirs");
        std::fs::write(&theirs, b"x").unwrap();
        assert_eq!(mode(&ours), mode(&theirs));
        let page = dir.path().join("page.html");
        write_atomically_mode(&page, b"x", 0o644).unwrap();
        assert_eq!(mode(&page), 0o644);
    }
}
