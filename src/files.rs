//! Writing files so that a crash leaves the old or the new content, never half of it.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes `bytes` to a temporary file in `path`'s directory, syncs it, renames it over `path`,
/// and syncs the directory: without that last sync a power loss can undo the rename, and a
/// step recorded as started before its command ran would read as not started again. The
/// directory must be writable: the file is replaced, never rewritten in place.
///
/// The new file keeps the permissions of the one it replaces (an admin's `chmod 640` of a fleet
/// file survives the watcher's passes); a file that did not exist gets the umask's, as any
/// program's new file does.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mode = match std::fs::metadata(path) {
        Ok(meta) => Some(meta.permissions().mode() & 0o7777),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    write_atomically_with(path, bytes, mode)
}

/// [`write_atomically`], for a file others read whatever the umask (a web server serving a
/// page, a metrics collector): it gets `mode` before it takes `path`'s place.
pub fn write_atomically_mode(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    write_atomically_with(path, bytes, Some(mode))
}

fn write_atomically_with(path: &Path, bytes: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Created as open(2) creates a new file, the umask applied; `mode` then replaces that.
    let mut tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    if let Some(mode) = mode {
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    std::fs::File::open(dir)?.sync_all()
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
