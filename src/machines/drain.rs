//! Draining a Node before a repair step that needs it (facts §6), behind a trait so that a
//! Kubernetes implementation (the Eviction API, protected namespaces and Job pods) plugs in
//! beside the nodes-file one here.

use crate::engine::BackendError;
use serde_json::Value;
use std::path::PathBuf;

/// The annotation autorepair sets on a Node it cordons, so that it uncordons only its own.
pub const CORDON_ANNOTATION: &str = "autorepair.io/cordoned";

/// Cordon, evict, uncordon. Whether a Node is drained is read with the snapshot
/// ([`super::snapshot::Node::pods`]), so that the planner decides from one picture.
pub trait Drainer {
    /// Marks the Node unschedulable, and as cordoned by autorepair.
    fn cordon(&mut self, node: &str) -> Result<(), BackendError>;
    /// Starts moving the Node's pods away (evictions); called again while the drain lasts.
    fn evict(&mut self, node: &str) -> Result<(), BackendError>;
    /// Undoes [`Drainer::cordon`].
    fn uncordon(&mut self, node: &str) -> Result<(), BackendError>;
}

/// `kubectl get nodes -o json`, kept in a file: a cordon is the Node's `spec.unschedulable`
/// plus autorepair's annotation, written back atomically. The file lists no pods, so a
/// cordoned Node counts as drained and `evict` has nothing to do.
pub struct NodesFile {
    path: Option<PathBuf>,
    pub list: Value,
}

fn file_error(path: &Option<PathBuf>, message: String) -> BackendError {
    BackendError::FleetFile {
        path: path
            .as_ref()
            .map_or("(nodes in memory)".into(), |p| p.display().to_string()),
        message,
    }
}

impl NodesFile {
    pub fn open(path: PathBuf) -> Result<NodesFile, BackendError> {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| file_error(&Some(path.clone()), format!("cannot read it: {e}")))?;
        let list: Value = serde_json::from_str(&text).map_err(|e| {
            file_error(
                &Some(path.clone()),
                format!("not JSON ({e}): expected `kubectl get nodes -o json`"),
            )
        })?;
        if !list["items"].is_array() {
            return Err(file_error(
                &Some(path),
                "it has no \"items\": expected `kubectl get nodes -o json`".into(),
            ));
        }
        Ok(NodesFile {
            path: Some(path),
            list,
        })
    }

    pub fn in_memory(list: Value) -> NodesFile {
        NodesFile { path: None, list }
    }

    /// The Nodes, as the planner sees them.
    pub fn nodes(&self) -> Vec<super::snapshot::Node> {
        let items = self.list["items"].as_array().cloned().unwrap_or_default();
        items
            .iter()
            .map(|n| {
                let labels = &n["metadata"]["labels"];
                super::snapshot::Node {
                    name: n["metadata"]["name"].as_str().unwrap_or("").to_owned(),
                    internal_ips: n["status"]["addresses"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|a| a["type"] == "InternalIP")
                        .filter_map(|a| a["address"].as_str().map(str::to_owned))
                        .collect(),
                    unschedulable: n["spec"]["unschedulable"].as_bool().unwrap_or(false),
                    cordoned_by_us: n["metadata"]["annotations"][CORDON_ANNOTATION] == "true",
                    control_plane: labels
                        .get("node-role.kubernetes.io/control-plane")
                        .is_some()
                        || labels.get("cke.cybozu.com/master") == Some(&Value::from("true")),
                    pods: 0,
                }
            })
            .collect()
    }

    fn node_mut(&mut self, name: &str) -> Result<&mut Value, BackendError> {
        let path = self.path.clone();
        self.list["items"]
            .as_array_mut()
            .and_then(|items| items.iter_mut().find(|n| n["metadata"]["name"] == name))
            .ok_or_else(|| file_error(&path, format!("no Node {name}")))
    }

    fn save(&self) -> Result<(), BackendError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let text = serde_json::to_string_pretty(&self.list).expect("JSON serialises");
        crate::files::write_atomically(path, text.as_bytes())
            .map_err(|e| file_error(&self.path, format!("cannot write it: {e}")))
    }
}

impl Drainer for NodesFile {
    fn cordon(&mut self, node: &str) -> Result<(), BackendError> {
        let n = self.node_mut(node)?;
        // Cordoned already: by us (nothing to do) or by someone else, a reboot tool say,
        // whose cordon stays theirs: claiming it would make the uncordon after the repair
        // undo it.
        if n["spec"]["unschedulable"] == Value::Bool(true) {
            return Ok(());
        }
        n["spec"]["unschedulable"] = Value::Bool(true);
        if !n["metadata"]["annotations"].is_object() {
            n["metadata"]["annotations"] = Value::Object(Default::default());
        }
        n["metadata"]["annotations"][CORDON_ANNOTATION] = Value::from("true");
        self.save()
    }

    fn evict(&mut self, node: &str) -> Result<(), BackendError> {
        self.node_mut(node).map(|_| ())
    }

    fn uncordon(&mut self, node: &str) -> Result<(), BackendError> {
        let n = self.node_mut(node)?;
        if let Some(spec) = n["spec"].as_object_mut() {
            spec.remove("unschedulable");
        }
        if let Some(a) = n["metadata"]["annotations"].as_object_mut() {
            a.remove(CORDON_ANNOTATION);
        }
        self.save()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cordon_is_recorded_in_the_file_and_undone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nodes.json");
        let list = json!({"items": [{"metadata": {"name": "10.0.0.1",
            "labels": {"node-role.kubernetes.io/control-plane": "true"}},
            "spec": {}, "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}}]});
        std::fs::write(&path, list.to_string()).unwrap();
        let mut f = NodesFile::open(path.clone()).unwrap();
        assert!(!f.nodes()[0].unschedulable);
        assert!(f.nodes()[0].control_plane);
        f.cordon("10.0.0.1").unwrap();
        let again = NodesFile::open(path.clone()).unwrap();
        let n = &again.nodes()[0];
        assert!(n.unschedulable && n.cordoned_by_us && n.is("10.0.0.1"));
        f.uncordon("10.0.0.1").unwrap();
        let n = &NodesFile::open(path).unwrap().nodes()[0];
        assert!(!n.unschedulable && !n.cordoned_by_us);
        // Someone else's cordon is not claimed, so the uncordon after a repair leaves it.
        let other = json!({"items": [{"metadata": {"name": "n2"}, "spec": {"unschedulable": true},
            "status": {}}]});
        let other_path = dir.path().join("other.json");
        std::fs::write(&other_path, other.to_string()).unwrap();
        let mut g = NodesFile::open(other_path.clone()).unwrap();
        g.cordon("n2").unwrap();
        let n = &NodesFile::open(other_path).unwrap().nodes()[0];
        assert!(n.unschedulable && !n.cordoned_by_us);
        assert!(
            f.cordon("nope")
                .unwrap_err()
                .to_string()
                .contains("no Node nope")
        );
    }
}
