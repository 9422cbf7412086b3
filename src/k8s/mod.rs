//! Kubernetes code more than one family uses (docs/architecture.md: a family never imports
//! another): clients built from kubeconfigs ([`client`]), API errors that name the server and the
//! request ([`errors`]), Node membership ([`nodes`]), label selectors ([`selector`]), the
//! syntax of names ([`names`]) and draining Nodes by CKE's rules ([`drain`]).
//!
//! Named `k8s`, not `kube`, so that it does not shadow the `kube` crate.

pub mod client;
pub mod drain;
pub mod errors;
pub mod names;
pub mod nodes;
pub mod selector;

pub use client::Source;
pub use drain::{Cordon, Drainer, Outcome};
pub use nodes::{NodeInfo, node_for};
pub use selector::LabelSelector;
