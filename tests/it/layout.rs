//! The layout docs/architecture.md promises: the engine (a crate of its own, so the compiler
//! already keeps it from importing a family or the face) names no family and does no I/O of its
//! own; and the repository explains itself: no
//! file cites a text outside it.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the directory exists") {
        let path = entry.expect("readable directory").path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// A source file's lines before its test module (`#[cfg(test)] mod …`), which may use anything
/// as a fixture.
fn outside_tests(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].contains("mod "))
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

#[test]
fn engine_names_no_family_and_does_no_io() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Its manifest may name no crate of this workspace: every one of them is a family's or a
    // test fixture's.
    let manifest = std::fs::read_to_string(root.join("crates/engine/Cargo.toml"))
        .expect("crates/engine/Cargo.toml");
    assert!(
        !manifest.contains("path ="),
        "the engine crate must depend on no crate of the workspace:\n{manifest}"
    );
    let engine = root.join("crates/engine/src");
    let files = rust_files(&engine);
    assert!(files.len() >= 5, "found only {files:?}");
    // Words of the families, modules outside the engine, and the I/O the edges own.
    let forbidden = [
        "ganeti",
        "instance",
        "drbd",
        "disk_template",
        "rapi",
        "metal3",
        "sabakan",
        "crate::config",
        "crate::cli",
        "crate::face",
        "crate::admin",
        "crate::report",
        "crate::metrics",
        "std::fs",
        "std::net",
        "std::process",
        "reqwest",
    ];
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            for word in forbidden {
                if lower.contains(word) {
                    found.push(format!("{}:{}: {word}: {line}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the engine must stay family-free:\n{}",
        found.join("\n")
    );
}

/// The Kubernetes code the families share imports none of them (docs/architecture.md).
#[test]
fn shared_kubernetes_code_imports_no_family() {
    let k8s = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/k8s");
    let files = rust_files(&k8s);
    assert!(files.len() >= 4, "found only {files:?}");
    let forbidden = [
        "crate::ganeti",
        "crate::metal3",
        "crate::machines",
        "crate::sabakan",
        "crate::face",
        "super::super",
    ];
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            for word in forbidden {
                if line.contains(word) {
                    found.push(format!("{}:{}: {line}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "src/k8s must not import a family:\n{}",
        found.join("\n")
    );
}

/// The files the repository is made of: git's tracked files where git can tell, else every
/// file outside build output and hidden directories (a source tarball has no `.git`).
fn repository_files(root: &Path) -> Vec<PathBuf> {
    let tracked = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty());
    if let Some(out) = tracked {
        return out
            .stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| root.join(String::from_utf8_lossy(p).as_ref()))
            .collect();
    }
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("readable directory") {
            let path = entry.expect("readable directory").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out
}

/// The repository explains itself: no file cites the texts the project was built from, which
/// a clone does not have (the design brief, its specs and fact sheets). Cite docs/design.md or
/// a docs/ page, or state the fact with its upstream source.
#[test]
fn no_file_cites_texts_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = repository_files(root);
    assert!(files.len() >= 50, "found only {} files", files.len());
    // Spelled in pieces, so that this file does not cite them itself.
    let citations = [
        ["DESIGN", " §"],
        ["DESIGN", ".md"],
        ["shared", "/"],
        ["facts", ".md"],
        ["facts", " §"],
        ["capi-", "facts"],
        ["harep-", "facts"],
        ["rapi-", "facts"],
    ]
    .map(|[a, b]| format!("{a}{b}"));
    let mut found = Vec::new();
    for file in &files {
        // Images and other binary files cite nothing.
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for citation in &citations {
                if line.contains(citation.as_str()) {
                    let path = file.strip_prefix(root).unwrap_or(file);
                    found.push(format!("{}:{}: {citation}: {line}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "these lines cite texts a clone of the repository does not have:\n{}",
        found.join("\n")
    );
}

/// A family imports the engine, the shared code and `crate::plug`, never the face: the face
/// imports the families, and an import back would make one circle of them all
/// (docs/architecture.md).
#[test]
fn families_never_import_the_face() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    // Each registered family's folder is named by the family (the recipe), the example's toy
    // family's too.
    let folders = autorepair::FAMILIES
        .iter()
        .map(|f| autorepair::face::registry::Registered::family(*f))
        .chain(["toy", "plug"]);
    for family in folders {
        let files = rust_files(&src.join(family));
        assert!(!files.is_empty(), "no files under src/{family}");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            for (n, line) in text.lines().enumerate() {
                if line.contains("crate::face") || line.contains("autorepair::face") {
                    found.push(format!("{}:{}: {line}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a family (or the module families plug into) imports the face:\n{}",
        found.join("\n")
    );
}

/// The face reaches a family only through `autorepair::FAMILIES`: outside its tests it names
/// none, but for the two commands that are not a family's fleet (`generate` writes a Ganeti
/// fleet file; `sabakan` is the cluster-config generator, not an engine family).
#[test]
fn the_face_names_no_family() {
    let face = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/face");
    let allowed = [
        "crate::ganeti::generate",
        "crate::ganeti::{",
        "crate::sabakan",
    ];
    let mut found = Vec::new();
    for file in rust_files(&face) {
        let text = std::fs::read_to_string(&file).expect("readable source");
        // A file's test modules (and a tests.rs) may use any family as a fixture.
        let code = outside_tests(&text).join("\n");
        if file.ends_with("tests.rs") {
            continue;
        }
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let names = [
                "crate::ganeti",
                "crate::metal3",
                "crate::machines",
                "crate::toy",
            ]
            .iter()
            .any(|f| line.contains(f));
            if names && !allowed.iter().any(|a| line.contains(a)) {
                found.push(format!("{}:{}: {line}", file.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the face names a family (it should reach it through FAMILIES):\n{}",
        found.join("\n")
    );
}

/// Rule 12 holds by construction: every file the program reads as an input or writes goes
/// through `src/files.rs` (one reader: regular files only, bounded; one writer: atomic, through
/// symlinks, FIFOs in place, no lost update) and the lock through `src/lock.rs`'s use of it.
/// Outside their test modules, no other source file opens, reads, writes or renames a file.
#[test]
fn every_file_is_read_and_written_through_one_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let forbidden = [
        "fs::read_to_string",
        "fs::read(",
        "fs::write(",
        "fs::rename(",
        "fs::copy(",
        "File::create",
        "File::open(",
        "OpenOptions",
        "tempfile::",
        "read_to_end(",
    ];
    let mut found = Vec::new();
    for file in rust_files(&src) {
        if file.ends_with("src/files.rs")
            || file.ends_with("tests.rs")
            || file.components().any(|c| c.as_os_str() == "tests")
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable source");
        for (n, line) in outside_tests(&text).iter().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            // A word, not the end of a longer name (`FleetFile::open(`).
            let names = |word: &str| {
                line.match_indices(word).any(|(at, _)| {
                    !line[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            };
            if let Some(word) = forbidden.iter().find(|w| names(w)) {
                found.push(format!("{}:{}: {word}: {line}", file.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "read and write files through crate::files (src/files.rs):\n{}",
        found.join("\n")
    );
}
