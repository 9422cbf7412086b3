//! The integration tests, one module per file, built as one binary (linking kube, rustls and
//! tokio once instead of once per file). Run one file's tests with `cargo test --test it ganeti::`.

// The workspace denies unwrap outside tests; clippy counts only `#[test]` functions as tests,
// and these modules' helpers are test code too.
#![allow(clippy::unwrap_used)]

mod brake;
mod common;
mod completions;
mod crash;
mod drain;
mod face;
mod fail_closed;
mod fake_kube;
mod field;
mod files;
mod ganeti;
mod ganeti_cli;
mod hostile;
mod inputs;
mod kept;
mod layout;
mod machines_cli;
mod machines_etcd;
mod machines_live;
mod machines_replicas;
mod man;
mod metal3_cli;
mod metal3_kube;
mod metal3_kubectl;
mod metal3_mhc;
mod metal3_rbac;
mod metal3_watch;
mod numbers;
mod over_time;
mod prometheus;
mod properties;
mod report;
mod sabakan;
mod sabakan_cli;
mod sabakan_client;
mod sabakan_kube;
mod sabakan_service;
mod simulate_seeds;
mod times;
mod tours;
mod toy_family;
