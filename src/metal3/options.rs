//! The metal3 family's part of the config file, `[metal3]`, and its flags.

use super::face::{Cluster, Source, Where};
use crate::plug::claim::{By, Claim, Look, Shared};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// The metal3 family's flags.
#[derive(Debug, Args, Default)]
#[command(next_help_heading = "metal3 fleet")]
pub struct Metal3Args {
    /// Kubernetes objects file (a v1 List, as `kubectl get machines.cluster.x-k8s.io,
    /// metal3machines,baremetalhosts,nodes -A -o json` prints it) to work on: the metal3 family.
    #[arg(long, global = true, value_name = "FILE")]
    pub kube_objects: Option<PathBuf>,
    /// Work on a live Kubernetes management cluster (the metal3 family): the one --kubeconfig
    /// names (else $KUBECONFIG, else ~/.kube/config), or, inside a Pod, its service account.
    #[arg(long, global = true)]
    pub kube: bool,
    /// With --kube: the Machines' Nodes are in their workload clusters, reached through each
    /// Cluster's <cluster>-kubeconfig Secret [default: in the management cluster].
    #[arg(long, global = true, requires = "kube")]
    pub workload_secrets: bool,
    /// metal3: fence a powered-off host's Node with the out-of-service taint
    /// (node.kubernetes.io/out-of-service=nodeshutdown:NoExecute, Kubernetes ≥ 1.28) instead of
    /// deleting it; the taint goes once the host is back on and the Node Ready [default:
    /// fencing in the config's [metal3] section, else delete-node].
    #[arg(long, global = true)]
    pub out_of_service_taint: bool,
}

/// The metal3 family's keys of the config file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Metal3Config {
    pub metal3: Metal3,
}

/// The metal3 family's `[metal3]` section: its health checks and power-cycle timeouts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Metal3 {
    /// A Node not Ready this long needs repair (autorepair's own health check).
    #[serde(with = "crate::engine::text::duration_serde")]
    pub node_unhealthy_after: Duration,
    /// A host not seen off this long after its power cycle started: the cycle fails and the
    /// host is powered back on.
    #[serde(with = "crate::engine::text::positive_duration_serde")]
    pub power_off_timeout: Duration,
    /// A power cycle not over (host on, Node back and Ready) this long after it started fails.
    #[serde(with = "crate::engine::text::positive_duration_serde")]
    pub cycle_timeout: Duration,
    /// A Machine power-cycled this recently is not power-cycled again.
    #[serde(with = "crate::engine::text::duration_serde")]
    pub reboot_loop_window: Duration,
    #[serde(with = "crate::engine::text::duration_serde")]
    pub drain_timeout: Duration,
    /// `hard` cuts the power at once; `soft` asks the OS first and may take minutes.
    pub power_mode: super::PowerMode,
    /// How a powered-off host's Node is fenced: `delete-node`, or `out-of-service-taint`
    /// (the Node stays, tainted `node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`
    /// until the host is back on and the Node Ready; Kubernetes ≥ 1.28).
    pub fencing: super::Fencing,
}

impl Default for Metal3 {
    fn default() -> Self {
        let d = super::Settings::default();
        let secs = |s: i64| Duration::from_secs(s.unsigned_abs());
        Metal3 {
            node_unhealthy_after: secs(d.node_unhealthy_after),
            power_off_timeout: secs(d.power_off_timeout),
            cycle_timeout: secs(d.cycle_timeout),
            reboot_loop_window: secs(d.reboot_loop_window),
            drain_timeout: secs(d.drain_timeout),
            power_mode: d.power_mode,
            fencing: d.fencing,
        }
    }
}

impl Metal3 {
    pub fn settings(&self) -> super::Settings {
        let secs = |d: Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
        super::Settings {
            node_unhealthy_after: secs(self.node_unhealthy_after),
            power_off_timeout: secs(self.power_off_timeout),
            cycle_timeout: secs(self.cycle_timeout),
            reboot_loop_window: secs(self.reboot_loop_window),
            drain_timeout: secs(self.drain_timeout),
            power_mode: self.power_mode,
            fencing: self.fencing,
        }
    }
}

/// The fleet: `--kube-objects FILE` or `--kube` (the config names no metal3 fleet: a Pod's
/// Deployment says `--kube`).
pub fn claim(
    args: &Metal3Args,
    config: &Metal3Config,
    shared: &Shared,
    look: Look,
) -> Option<Claim<Source>> {
    if look == Look::Config {
        return None;
    }
    let settings = Metal3 {
        fencing: if args.out_of_service_taint {
            super::Fencing::OutOfServiceTaint
        } else {
            config.metal3.fencing
        },
        ..config.metal3.clone()
    }
    .settings();
    let (from, uses_kubeconfig) = if let Some(objects) = &args.kube_objects {
        (Where::Objects(objects.clone()), false)
    } else if args.kube {
        use super::kube;
        let in_pod = shared.var("KUBERNETES_SERVICE_HOST").is_some();
        let from = if shared.kubeconfig.is_none()
            && shared.kube_context.is_none()
            && in_pod
            && shared.var("KUBECONFIG").is_none()
        {
            kube::Source::InCluster
        } else {
            kube::Source::Kubeconfig {
                path: shared.kubeconfig.clone(),
                context: shared.kube_context.clone(),
            }
        };
        let options = kube::Options {
            workload: if args.workload_secrets {
                kube::Workload::ClusterSecrets
            } else {
                kube::Workload::Management
            },
            ..kube::Options::default()
        };
        (Where::Kube(Cluster { from, options }), true)
    } else {
        return None;
    };
    Some(Claim {
        source: Ok(Source { from, settings }),
        by: By::Flag,
        uses_kubeconfig,
    })
}
