//! Test fixtures: servers on loopback that the tests drive through the real clients, each with
//! the semantics of the real server that the code under test relies on.
//!
//! - [`kube`]: a stateful fake Kubernetes API server (resourceVersion, 409 conflicts, watches).
//! - [`sabakan`]: a stateful fake sabakan (GraphQL `searchMachines`, labels, states, machines).
//! - [`rapi`]: a fake Ganeti RAPI over HTTPS, one connection per request, answering what the
//!   test says.
//! - [`etcd`]: not a fake: a real three-member etcd cluster on loopback, with TLS.
//!
//! They share the server start (a thread and tokio runtime of their own, stopped on drop),
//! the fault bookkeeping, and one certificate ([`CA_FILE`]).

pub mod etcd;
pub mod kube;
pub mod rapi;
pub mod sabakan;
mod serve;

pub use serve::{CA_FILE, CA_PEM};
