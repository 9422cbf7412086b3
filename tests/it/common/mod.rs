//! What several test files share. Each test file compiles this module and uses part of it.
#![allow(dead_code)]

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
