//! Which integration tests can run here, as `cfg`s: a test that needs what this machine lacks is
//! listed by the test runner as ignored, with the reason, instead of passing without doing
//! anything.
//!
//! - `cfg(testbed)`: the Ganeti testbed's env file was sourced for the build
//!   (`AUTOREPAIR_TESTBED_RAPI`), or `AUTOREPAIR_REQUIRE_TESTBED` says it will be up when the
//!   tests run (CI), so the real-cluster tests in tests/it/ganeti.rs run.
//! - `cfg(have_kubectl)`, `cfg(have_prometheus)`, `cfg(have_chromium)`, `cfg(have_pyyaml)`,
//!   `cfg(have_etcd)` (Debian's etcd-server and etcd-client, and openssl), `cfg(have_shells)`
//!   (zsh and fish, whose completions are driven): the tools those
//!   tests drive are installed (on `PATH`; Chromium at `AUTOREPAIR_CHROMIUM` or
//!   `/usr/bin/chromium`; Debian's PyYAML, a YAML 1.1 reader, under `/usr/bin/python3`), or
//!   `AUTOREPAIR_REQUIRE_…` says they must be (CI), and then a missing one fails the test.
//!
//! - `cfg(root)`: the build runs as root (as CI does), so a test may mount a file system of
//!   its own; elsewhere such a test is listed as ignored.
//!
//! The build script runs again when `PATH` or these variables change; after installing a tool
//! under an unchanged `PATH`, `touch build.rs` (CONTRIBUTING.md).
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(testbed)");
    // CI builds while the testbed comes up, and says so with AUTOREPAIR_REQUIRE_TESTBED; the
    // testbed's env file, sourced later, must not make cargo build the tests again.
    println!("cargo::rerun-if-env-changed=AUTOREPAIR_REQUIRE_TESTBED");
    let testbed = if std::env::var_os("AUTOREPAIR_REQUIRE_TESTBED").is_some() {
        true
    } else {
        println!("cargo::rerun-if-env-changed=AUTOREPAIR_TESTBED_RAPI");
        std::env::var_os("AUTOREPAIR_TESTBED_RAPI").is_some()
    };
    if testbed {
        println!("cargo::rustc-cfg=testbed");
    }
    println!("cargo::rustc-check-cfg=cfg(root)");
    // The user a build runs as is the one its tests run as. `id` is POSIX; without it, not root.
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if root {
        println!("cargo::rustc-cfg=root");
    }
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=AUTOREPAIR_CHROMIUM");
    let on_path = |tool: &str| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(tool).is_file()))
    };
    let chromium = std::env::var_os("AUTOREPAIR_CHROMIUM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into());
    let found = [
        (
            "have_kubectl",
            "AUTOREPAIR_REQUIRE_KUBECTL",
            on_path("kubectl"),
        ),
        (
            "have_prometheus",
            "AUTOREPAIR_REQUIRE_PROMETHEUS",
            ["prometheus", "promtool", "prometheus-node-exporter"]
                .into_iter()
                .all(on_path),
        ),
        (
            "have_chromium",
            "AUTOREPAIR_REQUIRE_CHROMIUM",
            chromium.is_file(),
        ),
        (
            "have_etcd",
            "AUTOREPAIR_REQUIRE_ETCD",
            ["etcd", "etcdctl", "openssl"].into_iter().all(on_path),
        ),
        (
            "have_shells",
            "AUTOREPAIR_REQUIRE_SHELLS",
            ["zsh", "fish"].into_iter().all(on_path),
        ),
        (
            "have_pyyaml",
            "AUTOREPAIR_REQUIRE_PYYAML",
            std::path::Path::new("/usr/bin/python3").is_file()
                && std::path::Path::new("/usr/lib/python3/dist-packages/yaml/__init__.py")
                    .is_file(),
        ),
    ];
    for (cfg, require, present) in found {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        println!("cargo::rerun-if-env-changed={require}");
        if present || std::env::var_os(require).is_some() {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
