//! Writing files so that a crash leaves the old or the new content, never half of it.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes `bytes` to a temporary file in `path`'s directory, syncs it, renames it over `path`,
/// and syncs the directory: without that last sync a power loss can undo the rename, and a
/// step recorded as started before its command ran would read as not started again. The
/// directory must be writable: the file is replaced, never rewritten in place.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, bytes, None)
}

/// [`write_atomically`], for a file others read (a web server serving a page): it gets `mode`
/// instead of the temporary file's owner-only mode before it takes `path`'s place.
pub fn write_atomically_mode(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    write_atomically_with(path, bytes, Some(mode))
}

fn write_atomically_with(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    if let Some(mode) = mode {
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()
}
