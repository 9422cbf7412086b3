//! What several test files share. Each test file compiles this module and uses part of it.
#![allow(dead_code)]

pub mod bin;
pub mod fake_rapi;

use proptest::test_runner::{Config, RngSeed};

/// The property tests' runner settings: `cases` unless `PROPTEST_CASES` says otherwise, and a
/// fixed seed (`default_seed`) so CI is reproducible, unless `PROPTEST_RNG_SEED` gives another
/// number, or `random` to explore new cases locally.
pub fn proptest_config(cases: u32, default_seed: u64) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(cases);
    let rng_seed = match std::env::var("PROPTEST_RNG_SEED").as_deref() {
        Ok("random") => RngSeed::Random,
        Ok(n) => n.parse().unwrap_or(RngSeed::Fixed(default_seed)),
        Err(_) => RngSeed::Fixed(default_seed),
    };
    Config {
        cases,
        failure_persistence: None,
        rng_seed,
        ..Config::default()
    }
}

/// The certificate the fake API server (crates/testsupport, `kube`) serves over TLS.
pub const FAKE_KUBE_CA: &str = testsupport::CA_PEM;

/// A kubeconfig with two contexts: `good` (the fake API server at `server`, trusting its
/// certificate) and `wrong` (nothing listens there); `current` is the current one.
pub fn kubeconfig(server: &str, current: &str) -> String {
    use base64::Engine;
    let ca = base64::engine::general_purpose::STANDARD.encode(FAKE_KUBE_CA);
    format!(
        "apiVersion: v1
kind: Config
current-context: {current}
contexts:
- name: good
  context: {{cluster: fake, user: u}}
- name: wrong
  context: {{cluster: nowhere, user: u}}
clusters:
- name: fake
  cluster: {{server: '{server}', certificate-authority-data: {ca}}}
- name: nowhere
  cluster: {{server: 'https://127.0.0.1:1', certificate-authority-data: {ca}}}
users:
- name: u
  user: {{token: not-a-real-token}}
"
    )
}

/// Runs kubectl with these words (no shell) against the kubeconfig `config`, with a home
/// directory (its cache) of its own; says whether it succeeded, and its output and errors.
pub fn kubectl(words: &[&str], config: &std::path::Path, home: &std::path::Path) -> (bool, String) {
    let out = std::process::Command::new("kubectl")
        .args(words)
        .env("KUBECONFIG", config)
        .env("HOME", home)
        .env_remove("KUBECTL_EXTERNAL_DIFF")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// What the replica tests of the families share: who a replica is to the API server, what
/// befalls the leader, and the Lease's timing.
pub mod replicas {
    use std::time::Duration;

    /// A replica's own bearer token, so that the API server can tell it apart and cut it off.
    pub fn token(replica: &str) -> String {
        format!("token-{replica}")
    }

    /// What happens to the leader.
    #[derive(Clone, Copy, Debug)]
    pub enum Disruption {
        Signal(&'static str),
        /// SIGSTOP past the Lease, then SIGCONT.
        Pause,
        /// Its Lease requests fail (HTTP 500), or hang, from now on; the fleet (sabakan, or
        /// the Machines and hosts on the same API server) stays reachable.
        Partition {
            hang: bool,
        },
    }

    /// client-go's defaults, which `run --leader-elect` uses: the holder counts itself leader
    /// until this long after the start of its last renewal.
    pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);
}

/// Makes a FIFO at `path` (nobody writing to it, nobody reading it).
pub fn mkfifo(path: &std::path::Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// One family's demo, as the README's tours give it: its files (the fleet file first, each as
/// fixture, name in a test's directory, and the flag that names it), the files a pass or an
/// admin verb may write, a target, a scope above it and the object above everything.
pub struct Demo {
    pub family: &'static str,
    pub files: &'static [(&'static str, &'static str, &'static str)],
    pub written: &'static [&'static str],
    pub target: &'static str,
    pub scope: &'static str,
    pub root: &'static str,
}

pub const DEMOS: &[Demo] = &[
    Demo {
        family: "ganeti",
        files: &[("fixtures/demo.json", "fleet.json", "--cluster")],
        written: &["fleet.json"],
        target: "web-b4.ams.example",
        scope: "group/ams-b",
        root: "cluster",
    },
    Demo {
        family: "metal3",
        files: &[(
            "fixtures/metal3-demo.json",
            "objects.json",
            "--kube-objects",
        )],
        written: &["objects.json"],
        target: "prod/workers-7d9f-b2",
        scope: "machinedeployment/prod/workers",
        root: "cluster/prod/edge",
    },
    Demo {
        family: "machines",
        files: &[
            (
                "fixtures/machines-demo.json",
                "machines.json",
                "--sabakan-file",
            ),
            ("fixtures/machines-demo-nodes.json", "nodes.json", "--nodes"),
            (
                "fixtures/machines-demo.yml",
                "repair.yml",
                "--repair-config",
            ),
            (
                "fixtures/machines-constraints.json",
                "constraints.json",
                "--constraints",
            ),
        ],
        written: &["machines.json", "nodes.json"],
        target: "rack0-cs2",
        scope: "rack/0",
        root: "cluster",
    },
];

impl Demo {
    /// The demo's files, copied into a directory of their own.
    pub fn copy(&self) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (from, to, _) in self.files {
            std::fs::copy(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(from),
                dir.path().join(to),
            )
            .unwrap();
        }
        dir
    }

    pub fn fleet(&self) -> &'static str {
        self.files[0].1
    }
}

/// Cargo, run from inside a test on this repository. The test harness hands its process the
/// variables cargo sets for a crate being built (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, …,
/// and `OUT_DIR`, the crate having a build script); build scripts that watch them (ring's
/// watches `OUT_DIR`) would look changed to an inner cargo, which then rebuilds ring and all
/// that links it (the library too, minutes of both cores), and the next outer `cargo test`
/// rebuilds them back.
pub fn cargo() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO"));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_for_a_crate = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_BIN_",
            "CARGO_CRATE_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || [
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
                "OUT_DIR",
            ]
            .contains(&&*name);
        if set_for_a_crate {
            command.env_remove(&*name);
        }
    }
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}
