//! Kubernetes' syntax rules for names, where the cluster-config checks look for them: they
//! live with the shared Kubernetes code ([`crate::k8s::names`]).

pub use crate::k8s::names::*;
