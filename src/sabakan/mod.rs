//! Cluster configuration from sabakan: a CKE cluster.yml generated from a template and the
//! machines sabakan knows, and maintained with the smallest change when machines fail,
//! retire or appear (CKE's docs/sabakan-integration.md and sabakan/ code before
//! its PR #796, which removed template weights).
//!
//! [`model`], [`template`], [`render`] and [`generator`] are pure: they read text and values
//! and take the clock as an input. [`client`] (sabakan's GraphQL and REST API, shared with the
//! machines family) and [`cli`] (files, standard output) are the edge.

pub mod cli;
pub mod client;
pub mod generator;
pub mod k8s;
pub mod maintain;
pub mod man;
pub mod model;
pub mod render;
pub mod service;
pub mod template;

pub use generator::{Action, Error, Inputs, Outcome, generate, update};
pub use model::{Constraints, KubeNodes, Machine, Stamp, State, Taint};
pub use template::{Current, Node, Template};
