//! Test fixtures: servers on loopback that the tests drive through the real clients, each with
//! the semantics of the real server that the code under test relies on.
//!
//! - [`kube`]: a stateful fake Kubernetes API server (resourceVersion, 409 conflicts, watches).
//! - [`sabakan`]: a stateful fake sabakan (GraphQL `searchMachines`, labels, states, machines).

pub mod kube;
pub mod sabakan;
