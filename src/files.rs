//! Every file autorepair reads as an input or writes, through one place, so that no input is
//! lost by an output (docs/design.md, rule 12):
//!
//! - [`read_input`] reads a regular file only (a FIFO, a device or a directory is refused
//!   before it can block or feed us without end), at most [`MAX_INPUT_BYTES`], and says what
//!   the file was when it was read (a [`Stamp`]).
//! - [`write_atomically`] replaces a regular file so that a crash leaves the old content or the
//!   new; writes through a symlink to the file it names, leaving the link a link; writes a
//!   FIFO, a terminal, a device or one of this process's descriptors (`/dev/stdout`) in place;
//!   refuses a directory, a socket or a file with other hard links.
//! - [`replace_unchanged`] replaces a file read earlier only if it is still the one read: a
//!   file someone else replaced or edited meanwhile is not overwritten with stale state.
//! - [`same_file`] tells whether two paths name one file, for the refusal of an output that is
//!   one of the command's inputs.

use rustix::fs::{AtFlags, OFlags};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The most autorepair reads from one input file. A fleet file of 100,000 Ganeti instances has
/// about 33 MB (docs/benchmarks.md); anything near this bound is not a file of ours (or a
/// device given by mistake), and reading it whole would take the memory of the host.
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// What a file was when it was read: its identity and the size and time of its last change.
/// A file with the same stamp has not been replaced nor, as far as its clock can tell,
/// written since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: i64,
    mtime_nsec: i64,
    /// A hash of the content read or written, when known: a save of the same bytes over the
    /// same file writes nothing.
    content: Option<u64>,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
            content: None,
        }
    }

    fn with_content(self, bytes: &[u8]) -> Stamp {
        Stamp {
            content: Some(content_hash(bytes)),
            ..self
        }
    }

    /// Whether `meta` is still the file this stamp was taken of, unchanged.
    fn still(&self, meta: &std::fs::Metadata) -> bool {
        Stamp {
            content: self.content,
            ..Stamp::of(meta)
        } == *self
    }
}

fn content_hash(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// An input file as read: its text and what the file was.
#[derive(Debug)]
pub struct Input {
    pub text: String,
    pub stamp: Stamp,
}

/// Reads the regular file `path` (through symlinks) as UTF-8 text. Refuses, with an error
/// naming what the path is, anything that is not a regular file (but `/dev/null`, empty), and a file larger than
/// [`MAX_INPUT_BYTES`]. The error names no path: the caller says which file of its own it
/// was (the flag, the key).
pub fn read_input(path: &Path) -> std::io::Result<Input> {
    let (bytes, stamp) = read_input_bytes(path)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    Ok(Input { text, stamp })
}

/// [`read_text`] of an optional file: `None` only when nothing is at `path`. A symlink whose
/// target is gone is an error (see [`dangling_link`]), not an absent file.
pub fn read_optional_text(path: impl AsRef<Path>) -> std::io::Result<Option<String>> {
    match read_text(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether anything is at `path`, a symlink whose target is gone included; an error when that
/// cannot be told. For a marker whose presence means "hold back" (a disabled integration), a
/// link that lost its target still holds back, where `Path::exists` would say nothing is there.
pub fn something_at(path: &Path) -> std::io::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// [`read_input`]'s text alone, for a file read once and never written back.
pub fn read_text(path: impl AsRef<Path>) -> std::io::Result<String> {
    read_input(path.as_ref()).map(|input| input.text)
}

/// [`read_input`], for bytes that need not be text (a certificate).
pub fn read_input_bytes(path: &Path) -> std::io::Result<(Vec<u8>, Stamp)> {
    let mut file = open_regular(path)?;
    // A file written while we read it would give a mix of two versions: read again until its
    // stamp is the same before and after. (Not its size against the bytes read: /proc's files
    // say 0.)
    for _ in 0..5 {
        let before = file.metadata()?;
        if before.size() > MAX_INPUT_BYTES {
            return Err(too_large(before.size()));
        }
        let mut bytes = Vec::with_capacity(before.size() as usize);
        (&mut file)
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_INPUT_BYTES {
            return Err(too_large(bytes.len() as u64));
        }
        let after = file.metadata()?;
        if Stamp::of(&before) == Stamp::of(&after) {
            let stamp = Stamp::of(&after).with_content(&bytes);
            return Ok((bytes, stamp));
        }
        file = open_regular(path)?;
    }
    Err(std::io::Error::other(
        "it kept changing while it was read: try again when the program writing it is done",
    ))
}

fn too_large(size: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        format!(
            "it has {size} bytes or more, above the {} MiB autorepair reads from one file: give the right file",
            MAX_INPUT_BYTES >> 20
        ),
    )
}

/// Opens `path` for reading if it is a regular file. Opened without blocking, so that a FIFO
/// with no writer cannot hang us before we see it is one.
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::CLOEXEC).bits() as i32)
        .open(path)
        .map_err(|e| dangling_link(path, e))?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    // /dev/null reads as empty at once: `--config /dev/null` is how one says "no file".
    let null = kind.is_char_device() && meta.rdev() == rustix::fs::makedev(1, 3);
    if !kind.is_file() && !null {
        return Err(not_regular(kind));
    }
    // Reads of a regular file never block; clear the flag all the same, for what follows.
    rustix::fs::fcntl_setfl(&file, OFlags::empty())?;
    Ok(file)
}

/// A symlink whose target is gone is not an absent file, and its error is not `NotFound`: the
/// file it stood for governs something (a stored query, the config, a record), and every
/// reader that takes "not found" for "none" would let go of what that file held.
fn dangling_link(path: &Path, e: std::io::Error) -> std::io::Error {
    if e.kind() != std::io::ErrorKind::NotFound {
        return e;
    }
    match std::fs::read_link(path) {
        Ok(target) => std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "it is a symlink to {}, which does not exist: restore the file, or remove the link",
                target.display()
            ),
        ),
        Err(_) => e,
    }
}

fn not_regular(kind: std::fs::FileType) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "it is {}, not a regular file: autorepair reads only regular files",
            describe(kind)
        ),
    )
}

/// Whether `path` is a regular file that [`read_input`] would read, for files another
/// library reads (a kubeconfig): the same refusal before it can block.
pub fn require_regular(path: &Path) -> std::io::Result<()> {
    open_regular(path).map(drop)
}

fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "a regular file"
    }
}

/// Whether `a` and `b` name the same existing file (the same device and inode, through
/// links). A path that does not exist names no file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// Opens (creating it) the lock file `path`: a regular file, or an error saying what it is
/// instead. Without blocking, so that a FIFO named as the lock cannot hang us.
pub fn open_lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    // Read and write: a FIFO opened so never blocks nor fails for want of a reader, and is
    // then seen for what it is.
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .custom_flags((OFlags::NONBLOCK | OFlags::CLOEXEC).bits() as i32)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "it is {}, not a regular file: a lock file must be one",
                describe(kind)
            ),
        ));
    }
    Ok(file)
}

/// Where a write to a path lands.
#[derive(Debug, PartialEq, Eq)]
enum Destination {
    /// A regular file, or no file yet, at its real path (the end of any symlinks): replaced.
    Replace(PathBuf),
    /// A FIFO, a terminal or another character device, or one of this process's descriptors:
    /// written where it is. Replacing it would take it from its reader (or, as root, replace
    /// `/dev/stdout` with a file).
    InPlace(PathBuf),
}

/// Symlinks followed before a path is taken for a loop, as the kernel's own limit.
const MAX_SYMLINKS: usize = 40;

/// Follows `path`'s symlinks, one at a time, to what a write should do there.
fn destination(path: &Path) -> std::io::Result<Destination> {
    let mut current = path.to_owned();
    for _ in 0..MAX_SYMLINKS {
        let meta = match std::fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Destination::Replace(current));
            }
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let link = std::fs::read_link(&current)?;
            let next = if link.is_absolute() {
                link
            } else {
                // Relative to the link's directory as the kernel resolves it, through any
                // symlinked directory on the way.
                let parent = current
                    .parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                std::fs::canonicalize(parent)?.join(link)
            };
            // /dev/stdout, /dev/fd/N, /proc/self/fd/N: a descriptor this process holds, maybe
            // a pipe or a file the shell opened for appending; the path the kernel shows for
            // it is not a file to replace.
            if next.starts_with("/proc") || next.starts_with("/dev/fd") {
                return Ok(Destination::InPlace(current));
            }
            current = next;
            continue;
        }
        if kind.is_file() {
            if meta.nlink() > 1 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "it has {} hard links: replacing it would leave the other names on the old content; keep one name (a symlink may give it others)",
                        meta.nlink()
                    ),
                ));
            }
            return Ok(Destination::Replace(current));
        }
        if kind.is_fifo() || kind.is_char_device() {
            return Ok(Destination::InPlace(current));
        }
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("it is {}: give the name of a file to write", describe(kind)),
        ));
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_SYMLINKS} symbolic links lead from it: a loop?"
    )))
}

fn write_in_place(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // Appending: a descriptor the shell opened (`>>`, or `>` before other output) keeps what
    // is already there.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(OFlags::CLOEXEC.bits() as i32)
        .open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// Writes `bytes` to `path` so that a crash leaves the old content or the new, never half:
/// the bytes go to a temporary file in `path`'s directory, which is synced, renamed over `path`,
/// and the directory synced (without that last sync a power loss can undo the rename, and a
/// step recorded as started before its command ran would read as not started again). The
/// directory must be writable: the file is replaced, never rewritten in place.
///
/// - A symlink is followed to the file it names, which is replaced there: the link stays.
/// - A FIFO, a character device (a terminal, `/dev/null`) or a descriptor of this process
///   (`/dev/stdout`) is written in place; a directory, a socket or a block device is refused,
///   and so is a file with other hard links (replacing it would split them).
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
    write_to(path, bytes, None, None).map(drop)
}

/// [`write_atomically`], for a file others read whatever the umask (a web server serving a
/// page, a metrics collector): it gets `mode` before it takes `path`'s place.
pub fn write_atomically_mode(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    write_to(path, bytes, Some(mode), None).map(drop)
}

/// [`write_atomically`] over a file read earlier, whose [`Stamp`] `read` is: if the file is no
/// longer the one read (replaced, edited, removed), nothing is written and the error says so.
/// Returns the stamp of the file written, for the next write of the same process.
pub fn replace_unchanged(path: &Path, bytes: &[u8], read: &Stamp) -> std::io::Result<Stamp> {
    write_to(path, bytes, None, Some(read))
}

/// Saves a file of ours that a process may write many times: over the file it read (`read`,
/// then each save's own stamp) with [`replace_unchanged`], or, for a file it creates
/// (`None`), with [`write_atomically`]. `read` becomes the stamp of what was written. Bytes
/// equal to those read (or last saved) are not written: a pass that changed nothing leaves the
/// file as it was (its time included), or as someone else made it meanwhile.
pub fn save(path: &Path, bytes: &[u8], read: &mut Option<Stamp>) -> std::io::Result<()> {
    // Nothing of ours to keep: whatever the file is now (changed by someone else or not), it
    // stays as it is.
    if read.is_some_and(|stamp| stamp.content == Some(content_hash(bytes))) {
        return Ok(());
    }
    *read = Some(write_to(path, bytes, None, read.as_ref())?);
    Ok(())
}

fn write_to(
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
    read: Option<&Stamp>,
) -> std::io::Result<Stamp> {
    let real = match destination(path)? {
        Destination::InPlace(there) => {
            write_in_place(&there, bytes)?;
            return Ok(Stamp::of(&std::fs::metadata(&there)?));
        }
        Destination::Replace(real) => real,
    };
    let old = match std::fs::metadata(&real) {
        Ok(meta) => {
            refuse_read_only(path, &meta)?;
            Some(meta)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let keep = match mode {
        Some(mode) => Some(Kept { mode, owner: None }),
        None => old.map(|m| Kept {
            mode: m.permissions().mode() & 0o7777,
            owner: Some((m.uid(), m.gid())),
        }),
    };
    write_atomically_with(&real, bytes, keep, read)
}

struct Kept {
    mode: u32,
    owner: Option<(u32, u32)>,
}

fn refuse_read_only(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<()> {
    let mode = meta.permissions().mode() & 0o7777;
    // Opening for writing asks the kernel whether this user may write it; nothing is changed.
    let open = std::fs::OpenOptions::new().write(true).open(path);
    if let Err(e) = &open
        && e.kind() == std::io::ErrorKind::ReadOnlyFilesystem
    {
        return Err(std::io::Error::new(
            e.kind(),
            format!(
                "{} is on a read-only file system: autorepair cannot replace it; remount it read-write, or use --dry-run",
                path.display()
            ),
        ));
    }
    if mode & 0o222 != 0 && open.is_ok() {
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

fn write_atomically_with(
    path: &Path,
    bytes: &[u8],
    keep: Option<Kept>,
    read: Option<&Stamp>,
) -> std::io::Result<Stamp> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{} names no file", path.display())))?;
    let leftovers = Leftovers::of(&name.to_string_lossy());
    leftovers.remove_dead(dir);
    // The temporary file's name means nothing to whoever reads the error: name the directory,
    // with the system's words (an OS error carries no path; the temporary-file crate's errors
    // carry its name) and what to do.
    let unwritable_dir = |e: std::io::Error| {
        // A mount is no directory's mode: chmod cannot help there.
        if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem {
            return std::io::Error::new(
                e.kind(),
                format!(
                    "{} is on a read-only file system: autorepair cannot write there; remount it read-write, or use --dry-run",
                    dir.display()
                ),
            );
        }
        let said = if e.raw_os_error().is_some() {
            e.to_string()
        } else {
            std::io::Error::from(e.kind()).to_string()
        };
        let advice = match e.kind() {
            std::io::ErrorKind::PermissionDenied => {
                ": the file is replaced, not rewritten, so its directory must be writable"
            }
            _ => "",
        };
        std::io::Error::new(
            e.kind(),
            format!("cannot create a file in {} ({said}){advice}", dir.display()),
        )
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
    let written = Stamp::of(&file.metadata()?).with_content(bytes);
    // As late as can be: what changes the file between this look and the rename is lost, and
    // that window is the kernel's, not a pass's.
    if let Some(read) = read {
        let now = std::fs::metadata(path).ok();
        if !now.is_some_and(|m| read.still(&m)) {
            return Err(std::io::Error::other(
                "it changed while this pass ran (another program replaced, edited or removed it): nothing was written; the next pass reads it as it is now",
            ));
        }
    }
    tmp.persist(path)?;
    std::fs::File::open(dir)?.sync_all()?;
    Ok(written)
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
            // What a named file would meet as well: said with the system's own error.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::PermissionDenied
                        | std::io::ErrorKind::NotFound
                        | std::io::ErrorKind::NotADirectory
                        | std::io::ErrorKind::ReadOnlyFilesystem
                        | std::io::ErrorKind::StorageFull
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

    fn fifo(path: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
    }

    /// What is at `path`, without following a link: its kind, and a regular file's bytes.
    fn what(path: &Path) -> (&'static str, Vec<u8>) {
        let meta = std::fs::symlink_metadata(path).unwrap();
        let kind = describe(meta.file_type());
        let bytes = if meta.is_file() {
            std::fs::read(path).unwrap()
        } else {
            Vec::new()
        };
        (kind, bytes)
    }

    #[test]
    fn a_write_follows_links_to_the_file_and_leaves_what_is_not_a_file_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("real"), "old").unwrap();
        std::os::unix::fs::symlink("real", d.join("link")).unwrap();
        std::os::unix::fs::symlink("link", d.join("link-to-link")).unwrap();
        std::os::unix::fs::symlink("not-yet", d.join("dangling")).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink("../real", d.join("sub/up")).unwrap();
        for (given, lands) in [
            ("link", "real"),
            ("link-to-link", "real"),
            ("dangling", "not-yet"),
            ("sub/up", "real"),
        ] {
            write_atomically(&d.join(given), given.as_bytes()).unwrap();
            assert_eq!(
                what(&d.join(given)).0,
                "a symbolic link",
                "{given} stays a link"
            );
            assert_eq!(std::fs::read(d.join(lands)).unwrap(), given.as_bytes());
        }
        // A FIFO's reader gets the bytes; the FIFO stays.
        fifo(&d.join("fifo"));
        let reader = {
            let path = d.join("fifo");
            std::thread::spawn(move || std::fs::read(path).unwrap())
        };
        write_atomically(&d.join("fifo"), b"through").unwrap();
        assert_eq!(reader.join().unwrap(), b"through");
        assert_eq!(what(&d.join("fifo")).0, "a FIFO");
        // A character device is written, not replaced.
        write_atomically_mode(Path::new("/dev/null"), b"x", 0o644).unwrap();
        assert_eq!(what(Path::new("/dev/null")).0, "a character device");
    }

    #[test]
    fn a_write_refuses_what_it_cannot_write_whole_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("dir")).unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(d.join("socket")).unwrap();
        std::fs::write(d.join("linked"), "old").unwrap();
        std::fs::hard_link(d.join("linked"), d.join("second-name")).unwrap();
        std::os::unix::fs::symlink("loop-b", d.join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", d.join("loop-b")).unwrap();
        for (given, says) in [
            ("dir", "it is a directory"),
            ("socket", "it is a socket"),
            ("linked", "2 hard links"),
            ("loop-a", "symbolic links lead from it"),
        ] {
            let before = entries(d);
            let e = write_atomically(&d.join(given), b"new")
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{given}: {e}");
            assert_eq!(entries(d), before, "{given}");
        }
        assert_eq!(std::fs::read(d.join("second-name")).unwrap(), b"old");
        // An error names the directory the user's file is in, never our temporary file.
        let e = write_atomically(&d.join("missing/page.html"), b"x")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("No such file or directory") && !e.contains(".autorepair-"),
            "{e}"
        );
    }

    #[test]
    fn an_input_that_is_not_a_regular_file_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fifo(&d.join("fifo"));
        std::fs::create_dir(d.join("dir")).unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(d.join("socket")).unwrap();
        for (given, says) in [
            (d.join("fifo"), "a FIFO"),
            (d.join("dir"), "a directory"),
            (PathBuf::from("/dev/zero"), "a character device"),
            (PathBuf::from("/dev/urandom"), "a character device"),
        ] {
            let e = read_input(&given).unwrap_err();
            assert_eq!(
                e.kind(),
                std::io::ErrorKind::InvalidInput,
                "{}",
                given.display()
            );
            assert!(e.to_string().contains(says), "{}: {e}", given.display());
        }
        // A socket cannot even be opened; what matters is that nothing blocks.
        assert!(read_input(&d.join("socket")).is_err());
        assert_eq!(read_input(Path::new("/dev/null")).unwrap().text, "");
        // A sparse file past the bound is refused by its size, before a byte is read.
        let big = std::fs::File::create(d.join("big")).unwrap();
        big.set_len(MAX_INPUT_BYTES + 1).unwrap();
        let e = read_input(&d.join("big")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge, "{e}");
        std::fs::write(d.join("binary"), [0xff, 0xfe]).unwrap();
        assert!(
            read_input(&d.join("binary"))
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
    }

    #[test]
    fn a_file_changed_after_it_was_read_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.json");
        let theirs = dir.path().join("theirs.json");
        type Change = fn(&Path, &Path);
        let changes: [(&str, Change); 4] = [
            ("replaced by a rename", |path, theirs| {
                std::fs::write(theirs, "theirs").unwrap();
                std::fs::rename(theirs, path).unwrap();
            }),
            ("edited in place, longer", |path, _| {
                std::fs::write(path, "read, then edited").unwrap();
            }),
            ("edited in place, same size", |path, _| {
                // A write in the same second, of the same size: the nanoseconds tell.
                std::fs::write(path, "READ").unwrap();
            }),
            ("removed", |path, _| std::fs::remove_file(path).unwrap()),
        ];
        for (how, change) in changes {
            std::fs::write(&path, "read").unwrap();
            let read = read_input(&path).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
            change(&path, &theirs);
            let left = std::fs::read(&path).ok();
            let e = replace_unchanged(&path, b"ours", &read.stamp).unwrap_err();
            assert!(
                e.to_string().contains("changed while this pass ran"),
                "{how}: {e}"
            );
            assert_eq!(
                std::fs::read(&path).ok(),
                left,
                "{how}: left as they made it"
            );
            assert_eq!(
                entries(dir.path()).len(),
                usize::from(left.is_some()),
                "{how}"
            );
        }
        // Unchanged, it is written, and each save's stamp lets the next one write.
        std::fs::write(&path, "read").unwrap();
        let mut stamp = Some(read_input(&path).unwrap().stamp);
        for round in ["one", "two"] {
            save(&path, round.as_bytes(), &mut stamp).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), round.as_bytes());
        }
        // The same bytes again: nothing is written, the file keeps its inode and time.
        let before = std::fs::metadata(&path).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        save(&path, b"two", &mut stamp).unwrap();
        let after = std::fs::metadata(&path).unwrap();
        assert_eq!(
            (after.ino(), after.mtime_nsec()),
            (before.ino(), before.mtime_nsec())
        );
    }

    /// An optional file: absent is `None`; a link to nothing is an error naming its target;
    /// anything else reads as [`read_text`] reads it.
    #[test]
    fn an_optional_file_is_absent_only_when_nothing_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("file"), "text").unwrap();
        std::os::unix::fs::symlink("gone", d.join("dangling")).unwrap();
        std::os::unix::fs::symlink("file", d.join("link")).unwrap();
        let cases: [(&str, Result<Option<&str>, &str>); 4] = [
            ("missing", Ok(None)),
            ("file", Ok(Some("text"))),
            ("link", Ok(Some("text"))),
            (
                "dangling",
                Err("it is a symlink to gone, which does not exist"),
            ),
        ];
        for (name, want) in cases {
            let got = read_optional_text(d.join(name));
            match (&got, want) {
                (Ok(text), Ok(want)) => assert_eq!(text.as_deref(), want, "{name}"),
                (Err(e), Err(want)) => assert!(e.to_string().starts_with(want), "{name}: {e}"),
                _ => panic!("{name}: {got:?}, want {want:?}"),
            }
        }
        // Every reader sees the link to nothing as there and unreadable, never as "not found",
        // which callers take for "none".
        let kind = read_text(d.join("dangling")).unwrap_err().kind();
        assert_ne!(kind, std::io::ErrorKind::NotFound);
        for (name, there) in [
            ("missing", false),
            ("file", true),
            ("link", true),
            ("dangling", true),
        ] {
            assert_eq!(something_at(&d.join(name)).unwrap(), there, "{name}");
        }
    }
}
