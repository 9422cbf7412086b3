//! Kubernetes code more than one family uses (docs/architecture.md: a family never imports
//! another): clients built from kubeconfigs ([`client`]), API errors that name the server and the
//! request ([`errors`]), Node membership ([`nodes`]), label selectors ([`selector`]), the
//! syntax of names ([`names`]), draining Nodes by CKE's rules ([`drain`]), the watches that
//! wake a loop between passes ([`watch`]) and leader election with a Lease ([`lease`]).
//!
//! Named `k8s`, not `kube`, so that it does not shadow the `kube` crate.

pub mod client;
pub mod drain;
pub mod errors;
pub mod lease;
#[cfg(any(test, feature = "testkit"))]
pub mod lease_sim;
pub mod names;
pub mod nodes;
pub mod selector;
pub mod watch;

pub use client::Source;
pub use drain::{Cordon, Drainer, Outcome};
pub use nodes::{NodeInfo, node_for};
pub use selector::LabelSelector;

/// A request path with its query string as kube-apiserver's own clients write it, if it is
/// not: the kube client starts the query with `?&` (`…/m1?&fieldManager=autorepair`, an empty
/// first parameter strict proxies and audit tools trip on) and leaves a bare `?` when there is
/// none.
pub fn tidy_query(uri: &str) -> Option<String> {
    let (path, query) = uri.split_once('?')?;
    let fixed = match query.trim_start_matches('&') {
        "" => path.to_owned(),
        query => format!("{path}?{query}"),
    };
    (fixed != uri).then_some(fixed)
}

/// The name of a resource in messages: `deployments.apps`, `nodes`.
pub fn resource_name(ar: &::kube::core::ApiResource) -> String {
    if ar.group.is_empty() {
        ar.plural.clone()
    } else {
        format!("{}.{}", ar.plural, ar.group)
    }
}

/// A live Kubernetes cluster that `run --loop` watches for changes and elects a leader in:
/// where it is, how long one request may take, and which kinds to watch (the family's).
#[derive(Clone)]
pub struct Live {
    pub from: Source,
    pub timeout: std::time::Duration,
    /// Asks the server which of the family's kinds it serves, to watch them; `None`: the
    /// family's changes are not in this cluster (a machines fleet elects its leader in its
    /// Nodes' cluster, but its machines are in sabakan), so passes come every `--interval`.
    pub discover: Option<std::sync::Arc<dyn Fn() -> watch::Discover + Send + Sync>>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("from", &self.from)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}
