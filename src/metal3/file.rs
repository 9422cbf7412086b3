//! The embedded default backend: a Kubernetes objects file, a `v1` `List` exactly as
//! `kubectl get machines.cluster.x-k8s.io,metal3machines,baremetalhosts,nodes -A -o json`
//! prints it (MachineSets, MachineDeployments, control planes, Clusters and Pods may be added).
//! A pass's writes change the objects in memory and are saved at the end of the pass,
//! atomically. Nothing is simulated unless the file says so: with a top-level
//! `"autorepairSimulation": {}` the baremetal-operator and kubelet are played between passes
//! (a host powers off or on the pass after its reboot annotation changes; a powered-on host's
//! Node registers again the pass after, or, still there under an out-of-service taint, reports
//! Ready anew; a deleted Machine goes).

use super::objects::{self, REBOOT_KEY, REQUEST_KEY, REQUEST_KEYS, Snapshot, kind};
use super::{Metal3, Op, OpId, Step, marks};
use crate::engine::{Backend, BackendError, ObjectRef};
use crate::plug::{FileHint, unreadable};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The top-level key that turns the simulation on.
pub const SIMULATION_KEY: &str = "autorepairSimulation";

pub struct ObjectsFile {
    /// Where it is saved; `None` keeps it in memory (tests).
    path: Option<PathBuf>,
    /// The file as read (then as last saved): a save over a file someone changed meanwhile
    /// writes nothing.
    stamp: Option<crate::files::Stamp>,
    list: Value,
    dirty: bool,
    /// The clock of the last pass that ended, for the times this backend writes (a taint's
    /// `timeAdded`); the wall clock before the first.
    clock: Option<i64>,
}

/// What to do about an objects file that does not exist (no config key names one: a metal3
/// fleet is named on the command line only).
pub const MISSING: FileHint = FileHint {
    flag: "--kube-objects",
    config_key: None,
    make: Some(
        "`kubectl get machines.cluster.x-k8s.io,metal3machines,baremetalhosts,nodes -A -o json` makes one",
    ),
};

fn list_error(path: &Path, message: impl std::fmt::Display) -> BackendError {
    BackendError::FleetFile {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// A fleet file that is not a `v1` `List`: what it is instead.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("not JSON ({0}): expected the output of `kubectl get … -o json`")]
    NotJson(#[source] serde_json::Error),
    #[error("expected a JSON object (a v1 List with items)")]
    NotAnObject,
    #[error("it has no \"items\": expected a v1 List (kubectl get … -o json)")]
    NoItems,
    #[error("\"items\" is not an array")]
    ItemsNotAnArray,
}

/// Reads a `List` (or a single object); the error says what is wrong with it.
pub fn parse_list(text: &str) -> Result<Value, ListError> {
    let mut v: Value = serde_json::from_str(text).map_err(ListError::NotJson)?;
    let Some(obj) = v.as_object_mut() else {
        return Err(ListError::NotAnObject);
    };
    if !obj.contains_key("items") {
        if obj.contains_key("kind") && obj.contains_key("metadata") {
            // One object, as `kubectl get machine NAME -o json` prints it.
            let one = Value::Object(std::mem::take(obj));
            return Ok(json!({"apiVersion": "v1", "kind": "List", "items": [one]}));
        }
        return Err(ListError::NoItems);
    }
    if !obj["items"].is_array() {
        return Err(ListError::ItemsNotAnArray);
    }
    Ok(v)
}

impl ObjectsFile {
    pub fn open(path: &Path) -> Result<Self, BackendError> {
        let crate::files::Input { text, stamp } =
            crate::files::read_input(path).map_err(|e| unreadable(path, &e, &MISSING))?;
        let list = parse_list(&text).map_err(|m| list_error(path, m))?;
        Ok(ObjectsFile {
            path: Some(path.to_owned()),
            stamp: Some(stamp),
            list,
            dirty: false,
            clock: None,
        })
    }

    pub fn in_memory(list: Value) -> Self {
        ObjectsFile {
            path: None,
            stamp: None,
            list,
            dirty: false,
            clock: None,
        }
    }

    pub fn list(&self) -> &Value {
        &self.list
    }

    /// Sets the clock the times it writes are read from (the chaos simulator's).
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn set_clock(&mut self, now: i64) {
        self.clock = Some(now);
    }

    fn now_rfc3339(&self) -> String {
        self.clock.map_or_else(now_rfc3339, crate::engine::rfc3339)
    }

    /// The List itself, for the chaos simulator, which plays the cluster around the watcher.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn list_mut(&mut self) -> &mut Value {
        self.dirty = true;
        &mut self.list
    }

    fn items(&self) -> &Vec<Value> {
        self.list["items"].as_array().expect("checked on open")
    }

    fn items_mut(&mut self) -> &mut Vec<Value> {
        self.dirty = true;
        self.list["items"].as_array_mut().expect("checked on open")
    }

    fn simulated(&self) -> bool {
        self.list.get(SIMULATION_KEY).is_some()
    }

    fn position(&self, object: &ObjectRef) -> Option<usize> {
        self.items().iter().position(|item| matches(item, object))
    }

    fn object_mut(&mut self, object: &ObjectRef) -> Result<&mut Value, BackendError> {
        let i = self
            .position(object)
            .ok_or_else(|| BackendError::NoSuchObject {
                object: object.clone(),
            })?;
        Ok(&mut self.items_mut()[i])
    }

    fn annotations_mut(
        &mut self,
        object: &ObjectRef,
    ) -> Result<&mut Map<String, Value>, BackendError> {
        let item = self.object_mut(object)?;
        let meta = item
            .as_object_mut()
            .expect("items are objects")
            .entry("metadata")
            .or_insert_with(|| json!({}));
        let annotations = meta
            .as_object_mut()
            .ok_or_else(|| BackendError::Api(format!("{object}: metadata is not an object")))?
            .entry("annotations")
            .or_insert_with(|| json!({}));
        annotations.as_object_mut().ok_or_else(|| {
            BackendError::Api(format!("{object}: metadata.annotations is not an object"))
        })
    }

    fn apply(&mut self, op: &Op) -> Result<(), BackendError> {
        let machine = |key: &str| ObjectRef::new(kind::MACHINE, key);
        let host = |key: &str| ObjectRef::new(kind::HOST, key);
        let node = |name: &str| ObjectRef::new(kind::NODE, name);
        match op {
            Op::Drain { node: name } => {
                let n = self.object_mut(&node(name))?;
                n["spec"]["unschedulable"] = json!(true);
                // Eviction: the Pods go (their controllers start them elsewhere).
                let name = name.clone();
                self.items_mut().retain(|item| {
                    !(item["kind"] == "Pod"
                        && item["spec"]["nodeName"] == name.as_str()
                        && !stays_on_node(item))
                });
            }
            Op::PowerOff {
                machine: m,
                host: h,
                mode,
            } => {
                let a = self.annotations_mut(&machine(m))?;
                if !REQUEST_KEYS.iter().any(|k| a.contains_key(*k)) {
                    a.insert(REQUEST_KEY.into(), json!(""));
                }
                self.annotations_mut(&host(h))?
                    .insert(REBOOT_KEY.into(), json!(mode.annotation()));
            }
            Op::DeleteMachine { machine: m } => {
                let item = self.object_mut(&machine(m))?;
                item["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
            }
            Op::DeleteNode {
                machine: m,
                node: n,
            } => {
                let i = self
                    .position(&node(n))
                    .ok_or_else(|| BackendError::NoSuchObject { object: node(n) })?;
                let meta = &self.items()[i]["metadata"];
                let backup = json!({
                    "labels": meta.get("labels").cloned().unwrap_or(json!({})),
                    "annotations": meta.get("annotations").cloned().unwrap_or(json!({})),
                });
                self.annotations_mut(&machine(m))?
                    .insert(marks::NODE_BACKUP_KEY.into(), json!(backup.to_string()));
                self.items_mut().remove(i);
            }
            Op::ClearRequest { machine: m } => {
                let a = self.annotations_mut(&machine(m))?;
                for k in REQUEST_KEYS {
                    a.remove(k);
                }
            }
            Op::PowerOn { host: h } => {
                self.annotations_mut(&host(h))?.remove(REBOOT_KEY);
            }
            Op::RestoreNode {
                machine: m,
                node: n,
            } => {
                let text = self
                    .annotations_mut(&machine(m))?
                    .get(marks::NODE_BACKUP_KEY)
                    .and_then(Value::as_str)
                    .unwrap_or("{}")
                    .to_owned();
                let backup: Value = serde_json::from_str(&text).map_err(|e| {
                    BackendError::Api(format!(
                        "machine/{m}: {} is not JSON ({e}): fix or remove it",
                        marks::NODE_BACKUP_KEY
                    ))
                })?;
                let item = self.object_mut(&node(n))?;
                for field in ["labels", "annotations"] {
                    let Some(saved) = backup.get(field).and_then(Value::as_object) else {
                        continue;
                    };
                    let live = item["metadata"][field]
                        .as_object_mut()
                        .map(std::mem::take)
                        .unwrap_or_default();
                    let mut merged = saved.clone();
                    // The re-registered Node's own values win.
                    merged.extend(live);
                    item["metadata"][field] = Value::Object(merged);
                }
                self.annotations_mut(&machine(m))?
                    .remove(marks::NODE_BACKUP_KEY);
            }
            Op::TaintNode {
                machine: m,
                node: n,
            } => {
                // Only a taint autorepair adds is recorded (someone else's fences the Node
                // all the same, and is never autorepair's to remove); recorded first, so a
                // taint autorepair added is always one it knows to remove.
                if objects::out_of_service(self.object_mut(&node(n))?) {
                    return Ok(());
                }
                self.annotations_mut(&machine(m))?
                    .insert(marks::NODE_TAINTED_KEY.into(), json!(n));
                let stamp = self.now_rfc3339();
                let item = self.object_mut(&node(n))?;
                let taints = objects::with_out_of_service(item, true, &stamp);
                item["spec"]["taints"] = json!(taints);
            }
            Op::UntaintNode {
                machine: m,
                node: n,
            } => {
                // A Node gone (deleted by someone since) has no taint left to remove.
                if self.position(&node(n)).is_some() {
                    let item = self.object_mut(&node(n))?;
                    if objects::out_of_service(item) {
                        let taints = objects::with_out_of_service(item, false, "");
                        item["spec"]["taints"] = json!(taints);
                    }
                }
                self.annotations_mut(&machine(m))?
                    .remove(marks::NODE_TAINTED_KEY);
            }
            Op::AnswerRequest { machine: m, record } => {
                self.annotations_mut(&machine(m))?
                    .insert(marks::ANSWERED_KEY.into(), json!(record));
            }
            Op::ReportRemediation {
                remediation,
                report,
            } => {
                let stamp = self.now_rfc3339();
                let item =
                    self.object_mut(&ObjectRef::new(kind::REMEDIATION, remediation.clone()))?;
                item["status"] = report.to_status(&stamp);
            }
            Op::MarkHostUnhealthy { host: h, .. } => {
                self.annotations_mut(&ObjectRef::new(kind::HOST, h.clone()))?
                    .insert(
                        objects::UNHEALTHY_KEY.into(),
                        json!(objects::UNHEALTHY_VALUE),
                    );
            }
            Op::HandOver {
                machine: m,
                conditions,
                message,
            } => {
                let stamp = self.now_rfc3339();
                let item = self.object_mut(&machine(m))?;
                let patch = conditions.hand_over(message, &stamp);
                for (k, v) in patch.as_object().into_iter().flatten() {
                    item["status"][k] = v.clone();
                }
            }
        }
        Ok(())
    }

    /// One step of the baremetal-operator and kubelet, between passes ending at `now`.
    fn simulate(&mut self, now: i64) {
        let snap = Snapshot::from_items(self.items());
        // kubelet first: a host already on registers its Node now.
        let register: Vec<(String, Option<String>)> = snap
            .machines
            .iter()
            .filter_map(|m| {
                let name = m.node_ref.clone()?;
                let host_on = snap
                    .hosts
                    .iter()
                    .find(|h| Some(&h.key) == m.host.as_ref())
                    .is_some_and(|h| h.powered_on == Some(true));
                let absent = !snap.nodes.iter().any(|n| n.name == name);
                (host_on && absent).then(|| (name, m.failure_domain.clone()))
            })
            .collect();
        let registered = now_rfc3339();
        for (name, zone) in register {
            let mut labels = json!({"kubernetes.io/hostname": name});
            if let Some(z) = zone {
                labels[objects::ZONE_LABEL] = json!(z);
            }
            self.items_mut().push(json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "creationTimestamp": registered, "labels": labels},
                "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": registered}]}
            }));
        }
        // kubelet on a Node kept through the power cycle under an out-of-service taint: the
        // host on again, it reports Ready anew (after the taint, whatever the clocks say).
        let back: Vec<(String, i64)> = snap
            .machines
            .iter()
            .filter_map(|m| {
                let n = snap
                    .nodes
                    .iter()
                    .find(|n| Some(&n.name) == m.node_ref.as_ref())?;
                let host_on = snap
                    .hosts
                    .iter()
                    .find(|h| Some(&h.key) == m.host.as_ref())
                    .is_some_and(|h| h.powered_on == Some(true));
                let added = n.out_of_service_since.filter(|_| n.out_of_service)?;
                (host_on && !super::protocol::ready_since_taint(n)).then(|| (n.name.clone(), added))
            })
            .collect();
        for (name, added) in back {
            let at = crate::engine::rfc3339(added.max(now) + 1);
            if let Some(item) = self
                .items_mut()
                .iter_mut()
                .find(|i| i["kind"] == "Node" && i["metadata"]["name"] == name)
            {
                item["status"]["conditions"] =
                    json!([{"type": "Ready", "status": "True", "lastTransitionTime": at}]);
            }
        }
        // The baremetal-operator: any reboot key keeps a host off; none lets an online host on.
        for item in self.items_mut() {
            if item["kind"] != "BareMetalHost" {
                continue;
            }
            let rebooting = item["metadata"]["annotations"]
                .as_object()
                .is_some_and(|a| {
                    a.keys()
                        .any(|k| k == "reboot.metal3.io" || k.starts_with("reboot.metal3.io/"))
                });
            let online = item["spec"]["online"].as_bool().unwrap_or(false);
            let on = if rebooting { false } else { online };
            item["status"]["poweredOn"] = json!(on);
        }
        // Machines being deleted go once their finalizers ran.
        self.items_mut().retain(|item| {
            item["kind"] != "Machine" || item["metadata"]["deletionTimestamp"].is_null()
        });
    }

    pub fn save(&mut self) -> Result<(), BackendError> {
        let Some(path) = &self.path else {
            self.dirty = false;
            return Ok(());
        };
        let mut text = serde_json::to_string_pretty(&self.list)
            .map_err(|e| list_error(path, format!("cannot serialise: {e}")))?;
        text.push('\n');
        crate::files::save(path, text.as_bytes(), &mut self.stamp)
            .map_err(|e| list_error(path, format!("cannot save it: {e}")))?;
        self.dirty = false;
        Ok(())
    }
}

/// The shared drain's rule (`k8s::drain`): DaemonSet and mirror Pods, and Job Pods not
/// running, stay.
fn stays_on_node(pod: &Value) -> bool {
    !crate::k8s::drain::blocks_drain(&crate::k8s::drain::PodFacts::from_value(pod))
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Whether a List item is the object a reference names.
fn matches(item: &Value, object: &ObjectRef) -> bool {
    let item_kind = item["kind"].as_str().unwrap_or("");
    let ns = item["metadata"]["namespace"].as_str().unwrap_or("");
    let name = item["metadata"]["name"].as_str().unwrap_or("");
    let namespaced = || {
        object
            .name
            .split_once('/')
            .is_some_and(|(n, m)| n == ns && m == name)
    };
    match object.kind.as_ref() {
        kind::MACHINE => item_kind == "Machine" && namespaced(),
        kind::HOST => item_kind == "BareMetalHost" && namespaced(),
        kind::NODE => item_kind == "Node" && name == object.name,
        kind::MACHINE_SET => item_kind == "MachineSet" && namespaced(),
        kind::MACHINE_DEPLOYMENT => item_kind == "MachineDeployment" && namespaced(),
        kind::CONTROL_PLANE => item_kind.ends_with("ControlPlane") && namespaced(),
        kind::CLUSTER => item_kind == "Cluster" && namespaced(),
        kind::REMEDIATION => item_kind == objects::REMEDIATION_KIND && namespaced(),
        _ => false,
    }
}

impl Backend<Metal3> for ObjectsFile {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        let snap = Snapshot::from_items(self.items());
        snap.warn_problems();
        Ok(snap)
    }

    fn add_marks(
        &mut self,
        object: &ObjectRef,
        add: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        let a = self.annotations_mut(object)?;
        for mark in add {
            let (key, value) = marks::split(mark);
            a.insert(key.to_owned(), json!(value));
        }
        Ok(())
    }

    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        remove: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        let a = self.annotations_mut(object)?;
        for mark in remove {
            let (key, value) = marks::split(mark);
            // A newer mark of the same repair may hold the key by now: it stays.
            if a.get(key).and_then(Value::as_str) == Some(value) {
                a.remove(key);
            }
        }
        Ok(())
    }

    fn submit(
        &mut self,
        target: &str,
        op: &Op,
        reason: &str,
        _after: Option<&OpId>,
    ) -> Result<OpId, BackendError> {
        let id = OpId::of_submission(target, op, reason)?;
        self.apply(op)?;
        Ok(id)
    }

    fn advance(&mut self, _object: &ObjectRef, op: &Op, _reason: &str) -> Result<(), BackendError> {
        self.apply(op)
    }

    /// Every step waits for the world to show the one before.
    fn can_follow(&self, _op: &Op) -> bool {
        false
    }

    fn supports(&self, _step: Step) -> bool {
        true
    }

    fn finish_pass(&mut self, now: i64) -> Result<(), BackendError> {
        self.clock = Some(now);
        if self.simulated() {
            self.simulate(now);
        }
        self.flush()
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        if self.dirty { self.save() } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An objects file replaced by someone else after it was read is not overwritten with the
    /// stale list plus this process's changes.
    #[test]
    fn an_objects_file_changed_since_it_was_read_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("objects.json");
        let list = json!({"apiVersion": "v1", "kind": "List", "items": []});
        std::fs::write(&path, list.to_string()).unwrap();
        let mut f = ObjectsFile::open(&path).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let theirs = json!({"apiVersion": "v1", "kind": "List", "items": [{"kind": "Node"}]});
        std::fs::write(dir.path().join("new.json"), theirs.to_string()).unwrap();
        std::fs::rename(dir.path().join("new.json"), &path).unwrap();
        f.list_mut()["items"] = json!([{"kind": "Machine"}]);
        let e = f.save().unwrap_err().to_string();
        assert!(e.contains("changed while this pass ran"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), theirs.to_string());
    }
}
