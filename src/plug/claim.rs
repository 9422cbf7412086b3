//! How a family says that the command line or the config file names a fleet of its own, and
//! what it is told to decide that: the face asks every registered family and takes the one
//! that claims.
//!
//! A flag that names a fleet (`--cluster`, `--kube`, `--sabakan`…) is a claim *by flag*; the
//! face lets at most one such flag through (clap refuses two). A key of the config file that
//! names one (`fleet_file`, `[machines] sabakan`…) is a claim *by config*, taken only when no
//! flag made one; two families claiming by config is an error naming both keys.

use std::path::PathBuf;

/// What every family may read when it claims: what the face owns but the families share.
#[derive(Debug, Clone, Default)]
pub struct Shared {
    /// `--kubeconfig`: a Kubernetes cluster the fleet is in or its Nodes are (shared
    /// Kubernetes code: two families use it).
    pub kubeconfig: Option<PathBuf>,
    /// `--kube-context`.
    pub kube_context: Option<String>,
    /// The command's `--now`, where it has one: the clock every part of a family reads.
    pub now: Option<i64>,
    /// The command shows targets to a person (`status`, `explain`, `snapshot`): what costs
    /// more to read but is only shown (a VM's run status) is worth reading.
    pub shows_targets: bool,
    /// The command makes passes (`run`): what only a pass needs (the master role a standby
    /// checks) is set up for it alone.
    pub passes: bool,
    /// A lock file is named (`--lock-file`, `lock_file`): it wins over a lock the fleet would
    /// name itself.
    pub lock_named: bool,
    /// The environment variables (the process's, or a test's).
    pub env: Vars,
}

impl Shared {
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env.0.get(name).map(String::as_str)
    }
}

/// Environment variables, shown by name only: a password may be among them
/// (`AUTOREPAIR_RAPI_PASSWORD`), and settings are printed with `{:?}` in tests and debug logs.
#[derive(Clone, Default)]
pub struct Vars(pub std::collections::BTreeMap<String, String>);

impl std::fmt::Debug for Vars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// Where a family is asked to look for its fleet: the face asks every family to look at its
/// flags first, and at the config file only when no flag named a fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    Flags,
    Config,
}

/// How a family claimed the fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// A flag of the family named the fleet.
    Flag,
    /// A key of the config file did (its name, as the config writes it: `fleet_file`,
    /// `[machines] sabakan`).
    Config(&'static str),
}

/// A fleet a family claims: what names it, and the fleet made of it, or why none can be. A
/// family claims even when the fleet cannot be made, so that two fleets named are said
/// before what is wrong with one of them.
#[derive(Debug)]
pub struct Claim<S> {
    pub source: Result<S, ClaimError>,
    pub by: By,
    /// Whether the fleet uses `--kubeconfig`/`--kube-context`: given for a fleet that does not,
    /// they are a mistake to report, not to ignore.
    pub uses_kubeconfig: bool,
}

/// Why a family cannot make its fleet of what it was given: its own error, shown as it is
/// (each names the flag, key or file at fault), a usage error (exit 2).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ClaimError(pub Box<dyn std::error::Error + Send + Sync>);

impl ClaimError {
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> ClaimError {
        ClaimError(Box::new(e))
    }
}
