//! Draining a Node before a repair step that needs it (docs/drain.md), behind a trait: the
//! nodes-file implementation here ([`NodesFile`], `--nodes FILE`) and the Kubernetes one
//! ([`KubeNodes`], `--kubeconfig FILE`: the Eviction API, protected namespaces and Job pods,
//! through `src/k8s/drain.rs`).

use super::snapshot::Node;
use crate::engine::BackendError;
use serde_json::Value;
use std::path::PathBuf;

/// The annotation autorepair sets on a Node it cordons, so that it uncordons only its own.
pub const CORDON_ANNOTATION: &str = "autorepair.io/cordoned";

/// Node membership, cordon, evict, uncordon. Whether a Node is drained is read with the
/// snapshot ([`Node::pods`]), so that the planner decides from one picture.
pub trait Drainer {
    /// Every Node of the cluster (`pods` left at 0: [`Drainer::pods`] counts them).
    fn list(&mut self) -> Result<Vec<Node>, BackendError>;
    /// The Pods a drain must still move off the Node.
    fn pods(&mut self, _node: &str) -> Result<usize, BackendError> {
        Ok(0)
    }
    /// Before a drain starts (CKE's dry run): why it cannot, if it cannot.
    fn check(&mut self, _node: &str) -> Result<Option<String>, BackendError> {
        Ok(None)
    }
    /// Marks the Node unschedulable, and as cordoned by autorepair.
    fn cordon(&mut self, node: &str) -> Result<(), BackendError>;
    /// One pass of the drain: moves away what is due (evictions). Why the drain cannot
    /// finish, if it cannot (then the repair backs off).
    fn evict(&mut self, node: &str, now: i64) -> Result<Option<String>, BackendError>;
    /// Undoes [`Drainer::cordon`].
    fn uncordon(&mut self, node: &str) -> Result<(), BackendError>;
    /// Asks `guard` before each write to a live cluster (a file's writes wait for the save,
    /// which the backend guards).
    fn guard_writes(&mut self, _guard: crate::engine::WriteGuard) {}
}

/// Whether a Node's labels make it a control plane (kubeadm's role label, or CKE's).
fn control_plane(label: impl Fn(&str) -> Option<String>) -> bool {
    label("node-role.kubernetes.io/control-plane").is_some()
        || label("cke.cybozu.com/master").as_deref() == Some("true")
}

/// `kubectl get nodes -o json`, kept in a file: a cordon is the Node's `spec.unschedulable`
/// plus autorepair's annotation, written back atomically. The file lists no pods, so a
/// cordoned Node counts as drained and `evict` has nothing to do.
pub struct NodesFile {
    path: Option<PathBuf>,
    /// The file as read (then as last saved): a save over a file someone changed meanwhile
    /// writes nothing.
    stamp: Option<crate::files::Stamp>,
    pub list: Value,
}

fn file_error(path: &Option<PathBuf>, message: String) -> BackendError {
    BackendError::File {
        what: "nodes file",
        path: path
            .as_ref()
            .map_or("(nodes in memory)".into(), |p| p.display().to_string()),
        message,
    }
}

impl NodesFile {
    pub fn open(path: PathBuf) -> Result<NodesFile, BackendError> {
        let crate::files::Input { text, stamp } = crate::files::read_input(&path)
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
            stamp: Some(stamp),
            list,
        })
    }

    pub fn in_memory(list: Value) -> NodesFile {
        NodesFile {
            path: None,
            stamp: None,
            list,
        }
    }

    /// The Nodes, as the planner sees them.
    pub fn nodes(&self) -> Vec<Node> {
        let items = self.list["items"].as_array().cloned().unwrap_or_default();
        items
            .iter()
            .map(|n| {
                let labels = &n["metadata"]["labels"];
                Node {
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
                    control_plane: control_plane(|k| {
                        labels.get(k).map(|v| v.as_str().unwrap_or("").to_owned())
                    }),
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

    fn save(&mut self) -> Result<(), BackendError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let text = serde_json::to_string_pretty(&self.list).expect("JSON serialises");
        crate::files::save(path, text.as_bytes(), &mut self.stamp)
            .map_err(|e| file_error(&self.path, format!("cannot write it: {e}")))
    }
}

impl Drainer for NodesFile {
    fn list(&mut self) -> Result<Vec<Node>, BackendError> {
        Ok(self.nodes())
    }

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

    fn evict(&mut self, node: &str, _now: i64) -> Result<Option<String>, BackendError> {
        self.node_mut(node).map(|_| None)
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

/// The Nodes of a live cluster (`--kubeconfig FILE [--kube-context NAME]`), drained by CKE's
/// rules through [`crate::k8s::drain`]. The kube client is async; this drives it from the
/// synchronous backend on a current-thread runtime of its own. The client does not retry by
/// itself, so a refused eviction (429) comes back to the drain, which tries it again on a
/// later pass.
pub struct KubeNodes {
    runtime: tokio::runtime::Runtime,
    client: ::kube::Client,
    server: String,
    timeout: std::time::Duration,
    drain: crate::k8s::drain::Drainer,
    /// The deadline of the write being made, for the client's requests.
    lead: crate::fence::Lead,
    /// The Nodes cordoned when last listed, by anyone.
    cordoned: std::collections::HashSet<String>,
}

/// The drain options of a CKE repair configuration. The dry run is the caller's
/// ([`Drainer::check`], once when a drain starts): the cordon every later pass repeats must
/// not refuse because a PodDisruptionBudget still holds a Pod it is waiting for.
pub fn drain_options(
    repair: &super::config::Repair,
    timeout: std::time::Duration,
) -> Result<crate::k8s::drain::Options, crate::k8s::selector::SelectorError> {
    use crate::k8s::drain::{Options, Protection};
    use crate::k8s::selector::LabelSelector;
    let selector = |what: &str, s: &Option<LabelSelector>| {
        s.as_ref()
            .map(|s| {
                s.validate_at(&format!("repair: {what}"))?;
                Ok(s.clone())
            })
            .transpose()
            .map(Protection::from_cke)
    };
    Ok(Options {
        protected_namespaces: selector("protected_namespaces", &repair.protected_namespaces)?,
        protected_job_pods: selector("protected_job_pods", &repair.protected_job_pods)?,
        evict_retries: u32::try_from(repair.evict_retries.max(0)).unwrap_or(u32::MAX),
        evict_interval: repair.evict_interval.max(0),
        cordon_annotation: Some(CORDON_ANNOTATION.to_owned()),
        check_before_cordon: false,
        timeout,
    })
}

impl KubeNodes {
    pub fn connect(
        source: &crate::k8s::client::Source,
        options: crate::k8s::drain::Options,
    ) -> Result<KubeNodes, BackendError> {
        let runtime = crate::k8s::client::runtime()?;
        let timeout = options.timeout;
        let lead = crate::fence::Lead::default();
        // kube spawns the client's worker on the runtime it is built in.
        let (client, server) = runtime.block_on(async {
            let config = crate::k8s::client::load(source).await?;
            crate::k8s::client::build(config, timeout, &lead)
        })?;
        let drain = crate::k8s::drain::Drainer::new(client.clone(), options).named(server.clone());
        Ok(KubeNodes {
            runtime,
            client,
            server,
            timeout,
            drain,
            lead,
            cordoned: Default::default(),
        })
    }
}

impl Drainer for KubeNodes {
    fn guard_writes(&mut self, guard: crate::engine::WriteGuard) {
        self.drain.guard(crate::fence::leading(guard, &self.lead));
    }

    fn list(&mut self) -> Result<Vec<Node>, BackendError> {
        let infos = self.runtime.block_on(crate::k8s::nodes::list_nodes(
            &self.client,
            &self.server,
            500,
            self.timeout,
        ))?;
        self.cordoned = infos
            .iter()
            .filter(|n| n.unschedulable)
            .map(|n| n.name.clone())
            .collect();
        Ok(infos
            .into_iter()
            .map(|n| Node {
                cordoned_by_us: n.unschedulable
                    && n.annotations.get(CORDON_ANNOTATION).map(String::as_str) == Some("true"),
                control_plane: control_plane(|k| n.labels.get(k).cloned()),
                internal_ips: n.internal_ip.into_iter().collect(),
                unschedulable: n.unschedulable,
                name: n.name,
                pods: 0,
            })
            .collect())
    }

    fn pods(&mut self, node: &str) -> Result<usize, BackendError> {
        let pods = self.runtime.block_on(self.drain.pods_on(node))?;
        Ok(pods
            .iter()
            .filter(|p| crate::k8s::drain::blocks_drain(p))
            .count())
    }

    fn check(&mut self, node: &str) -> Result<Option<String>, BackendError> {
        self.runtime.block_on(self.drain.check(node))
    }

    fn cordon(&mut self, node: &str) -> Result<(), BackendError> {
        use crate::k8s::drain::Cordon;
        // Cordoned already: by us, or by someone else (a reboot tool), whose cordon stays
        // theirs: marking it ours would make the uncordon after the repair undo it.
        if self.cordoned.contains(node) {
            return Ok(());
        }
        match self.runtime.block_on(self.drain.cordon(node))? {
            Cordon::Done => {
                self.cordoned.insert(node.to_owned());
                Ok(())
            }
            // Only the dry run refuses, and it is off here (see `drain_options`).
            Cordon::Refused(why) => Err(BackendError::Api(format!("node {node}: {why}"))),
        }
    }

    fn evict(&mut self, node: &str, now: i64) -> Result<Option<String>, BackendError> {
        use crate::k8s::drain::Outcome;
        Ok(
            match self.runtime.block_on(self.drain.evict_step(node, now))? {
                Outcome::Drained | Outcome::Draining(_) => None,
                Outcome::Failed(why) => Some(why),
            },
        )
    }

    fn uncordon(&mut self, node: &str) -> Result<(), BackendError> {
        self.cordoned.remove(node);
        self.runtime.block_on(self.drain.uncordon(node)).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A nodes file replaced by someone else (a fresh `kubectl get nodes -o json`) after it
    /// was read is not overwritten with the stale Nodes plus a cordon.
    #[test]
    fn a_nodes_file_changed_since_it_was_read_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nodes.json");
        let node =
            |name: &str| json!({"items": [{"metadata": {"name": name}, "spec": {}, "status": {}}]});
        std::fs::write(&path, node("n1").to_string()).unwrap();
        let mut f = NodesFile::open(path.clone()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(dir.path().join("new.json"), node("n2").to_string()).unwrap();
        std::fs::rename(dir.path().join("new.json"), &path).unwrap();
        let e = f.cordon("n1").unwrap_err().to_string();
        assert!(e.contains("changed while this pass ran"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            node("n2").to_string()
        );
    }

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
