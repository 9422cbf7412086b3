//! Node membership: which Nodes a cluster has, with what the families decide by (name,
//! InternalIP, taints, cordon, Ready). [`NodeInfo::from_node`] and [`node_for`] are pure;
//! [`list_nodes`] and [`read_nodes`] ask the API server.

use super::client::{self, Source};
use super::errors::{Call, from_kube};
use crate::engine::BackendError;
use ::kube::Client;
use ::kube::api::{Api, ListParams};
use k8s_openapi::api::core::v1::Node;
use std::collections::BTreeMap;
use std::time::Duration;

/// One Node as the families see it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeInfo {
    pub name: String,
    /// The first `InternalIP` of `status.addresses`.
    pub internal_ip: Option<String>,
    pub taints: Vec<Taint>,
    /// Cordoned (`spec.unschedulable`).
    pub unschedulable: bool,
    /// The `Ready` condition: `None` when the Node reports none (or `Unknown`).
    pub ready: Option<bool>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
}

/// A Node's taint (`corev1.Taint` without `timeAdded`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: String,
    pub effect: String,
}

impl NodeInfo {
    pub fn from_node(n: &Node) -> NodeInfo {
        let spec = n.spec.as_ref();
        let status = n.status.as_ref();
        NodeInfo {
            name: n.metadata.name.clone().unwrap_or_default(),
            internal_ip: status
                .and_then(|s| s.addresses.as_ref())
                .and_then(|a| a.iter().find(|a| a.type_ == "InternalIP"))
                .map(|a| a.address.clone()),
            taints: spec
                .and_then(|s| s.taints.as_ref())
                .into_iter()
                .flatten()
                .map(|t| Taint {
                    key: t.key.clone(),
                    value: t.value.clone().unwrap_or_default(),
                    effect: t.effect.clone(),
                })
                .collect(),
            unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
            ready: status
                .and_then(|s| s.conditions.as_ref())
                .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
                .and_then(|c| match c.status.as_str() {
                    "True" => Some(true),
                    "False" => Some(false),
                    _ => None,
                }),
            labels: n.metadata.labels.clone().unwrap_or_default(),
            annotations: n.metadata.annotations.clone().unwrap_or_default(),
        }
    }
}

/// The Node of a machine known by its address: the Node named so, else the one whose
/// InternalIP it is (CKE names Nodes after their address; other installers after the host).
pub fn node_for<'a>(nodes: &'a [NodeInfo], address: &str) -> Option<&'a NodeInfo> {
    nodes.iter().find(|n| n.name == address).or_else(|| {
        nodes
            .iter()
            .find(|n| n.internal_ip.as_deref() == Some(address))
    })
}

/// Every Node of the cluster, page by page (`page` Nodes per request).
pub async fn list_nodes(
    client: &Client,
    server: &str,
    page: u32,
    timeout: Duration,
) -> Result<Vec<NodeInfo>, BackendError> {
    let api: Api<Node> = Api::all(client.clone());
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().limit(page);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let call = Call {
            method: "GET",
            server,
            path: "/api/v1/nodes",
            object: None,
            what: "nodes",
            version: None,
            timeout,
        };
        let list = api.list(&lp).await.map_err(|e| from_kube(e, &call))?;
        out.extend(list.items.iter().map(NodeInfo::from_node));
        token = list.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    Ok(out)
}

/// Every Node of the cluster a kubeconfig names, for a synchronous caller (a runtime of its
/// own for the one list): the server's URL and the Nodes.
pub fn read_nodes(
    source: &Source,
    timeout: Duration,
) -> Result<(String, Vec<NodeInfo>), BackendError> {
    let rt = client::runtime()?;
    rt.block_on(async {
        let config = client::load(source).await?;
        // Reads only: no write of it is bounded.
        let (client, server) = client::build(config, timeout, &crate::fence::Lead::default())?;
        let nodes = list_nodes(&client, &server, 500, timeout).await?;
        Ok((server, nodes))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: serde_json::Value) -> NodeInfo {
        NodeInfo::from_node(&serde_json::from_value(json).unwrap())
    }

    #[test]
    fn nodes_read_as_the_families_see_them() {
        let n = node(serde_json::json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": { "name": "w1", "labels": { "zone": "a" } },
            "spec": {
                "unschedulable": true,
                "taints": [{ "key": "k", "effect": "NoSchedule" }, { "key": "x", "value": "y", "effect": "NoExecute" }],
            },
            "status": {
                "addresses": [
                    { "type": "Hostname", "address": "w1.example" },
                    { "type": "InternalIP", "address": "10.0.0.7" },
                    { "type": "InternalIP", "address": "10.0.0.8" },
                ],
                "conditions": [
                    { "type": "MemoryPressure", "status": "False" },
                    { "type": "Ready", "status": "False" },
                ],
            },
        }));
        assert_eq!(n.name, "w1");
        assert_eq!(n.internal_ip.as_deref(), Some("10.0.0.7"));
        assert!(n.unschedulable);
        assert_eq!(n.ready, Some(false));
        assert_eq!(n.labels["zone"], "a");
        assert_eq!(
            n.taints,
            [
                Taint {
                    key: "k".into(),
                    value: String::new(),
                    effect: "NoSchedule".into()
                },
                Taint {
                    key: "x".into(),
                    value: "y".into(),
                    effect: "NoExecute".into()
                },
            ]
        );
        let bare = node(
            serde_json::json!({ "apiVersion": "v1", "kind": "Node", "metadata": { "name": "b" } }),
        );
        assert_eq!(
            (bare.ready, bare.unschedulable, bare.internal_ip),
            (None, false, None)
        );
    }

    #[test]
    fn a_machine_is_in_the_cluster_by_node_name_or_internal_ip() {
        let nodes = [
            NodeInfo {
                name: "10.0.0.1".into(),
                internal_ip: Some("10.0.0.1".into()),
                ..NodeInfo::default()
            },
            NodeInfo {
                name: "host-2".into(),
                internal_ip: Some("10.0.0.2".into()),
                ..NodeInfo::default()
            },
            // A Node named like another's address wins over that address.
            NodeInfo {
                name: "10.0.0.3".into(),
                internal_ip: Some("10.0.0.9".into()),
                ..NodeInfo::default()
            },
            NodeInfo {
                name: "host-3".into(),
                internal_ip: Some("10.0.0.3".into()),
                ..NodeInfo::default()
            },
        ];
        let cases = [
            ("10.0.0.1", Some("10.0.0.1")),
            ("10.0.0.2", Some("host-2")),
            ("host-2", Some("host-2")),
            ("10.0.0.3", Some("10.0.0.3")),
            ("10.0.0.4", None),
        ];
        for (address, want) in cases {
            assert_eq!(
                node_for(&nodes, address).map(|n| n.name.as_str()),
                want,
                "{address}"
            );
        }
    }
}
