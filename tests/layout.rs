//! The layout docs/architecture.md promises: the engine names no family, imports neither a
//! family nor the face, and does no I/O of its own.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("src/engine exists") {
        let path = entry.expect("readable directory").path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

#[test]
fn engine_names_no_family_and_does_no_io() {
    let engine = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
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

/// The Kubernetes code the families share imports none of them (DESIGN §3).
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
