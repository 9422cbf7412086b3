//! The machines backend's core: sabakan's machines document (the JSON of `GET
//! /api/v1/machines`, REST shape, or GraphQL's `searchMachines` answer) with the family's
//! labels read from it and written into it, whether it came from a file
//! ([`super::file::MachinesFile`]), from sabakan ([`super::live::SabakanLive`]) or from memory
//! (a simulation's). A [`Store`] says only where the document comes from and where its writes
//! go; everything the family does with it is here. Kubernetes Nodes come from an optional
//! `kubectl get nodes -o json` file or a live cluster.
//!
//! sabakan has no object for a rack or the cluster, so their marks live on boot servers (role
//! `boot`, never repaired by the default query): a rack's on its boot server with the lowest
//! index-in-rack, the cluster's on the boot server of the lowest rack, under
//! `autorepair.cluster.` (docs/machines.md).

use super::command;
use super::config::Repair;
use super::drain::{Drainer, NodesFile};
use super::entry::{Entry, Progress};
use super::labels::{
    self, AUTO_REPAIR, CLUSTER_PREFIX, ENTRY, INDEX, PROGRESS, QUEUE, RACK_PREFIX,
};
use super::snapshot::{self, Scope, Snapshot, Switch, kind};
use super::{MAX_INDEX, Machines, Op, OpId};
use crate::engine::marks::{Codec, Mark};
use crate::engine::{Backend, BackendError, ObjectRef, WriteGuard};
use serde_json::{Map, Value};

/// Where the machines document comes from and where its label writes go. The defaults are
/// those of a document no one else writes while a pass runs (a file under the fleet's lock,
/// or memory): read once, each write made in the document alone.
pub trait Store {
    /// An error about the machines, naming where they are.
    fn error(&self, message: String) -> BackendError;

    /// The document a new pass reads; `None` keeps the one held, with the writes made in it.
    fn reread(&mut self) -> Result<Option<Value>, BackendError> {
        Ok(None)
    }

    /// The machines a snapshot read, as parsed.
    fn on_snapshot(&mut self, _machines: &[crate::sabakan::Machine]) {}

    /// Makes one label write (`None`: removes the label) where the machines are, before the
    /// document changes: when it fails, the document stays as the store has it.
    fn write(
        &mut self,
        _serial: &str,
        _name: &str,
        _value: Option<&str>,
    ) -> Result<(), BackendError> {
        Ok(())
    }

    /// Asked before a new repair entry on `serial` (`now`: the clock the machines' state
    /// timestamps are read against): an error halts the pass.
    fn before_entry(&mut self, _serial: &str, _now: jiff::Timestamp) -> Result<(), BackendError> {
        Ok(())
    }

    /// What a suspend given elsewhere stopped while the pass acted ([`Backend::suspended_meanwhile`]).
    fn suspended_meanwhile(&self) -> Option<String> {
        None
    }

    /// The guard every write asks, as this store keeps it ([`Backend::guard_writes`]).
    fn guard(&self, guard: WriteGuard) -> WriteGuard {
        guard
    }

    /// Keeps the document once the writes asked for are made in it.
    fn save(&mut self, _doc: &Value) -> Result<(), BackendError> {
        Ok(())
    }
}

/// Machines in memory: a simulation's world, a benchmark's fleet.
struct Memory;

impl Store for Memory {
    fn error(&self, message: String) -> BackendError {
        BackendError::FleetFile {
            path: "(machines in memory)".into(),
            message,
        }
    }
}

/// The machines as the family reads and writes them ([`Backend<Machines>`]), from any
/// [`Store`].
pub struct Document {
    store: Box<dyn Store>,
    /// The machines as read: a JSON array, or a GraphQL answer.
    doc: Value,
    repair: Repair,
    pub nodes: Option<NodesFile>,
    /// A live cluster's Nodes (`--kubeconfig`), used instead of `nodes` when set.
    kube: Option<Box<dyn Drainer>>,
    dirty: bool,
    /// Whether health checks run when the snapshot is read (off for admin verbs).
    pub check_health: bool,
    /// The clock for REST machines' `status.timestamp` (`--now`); else the real one.
    pub now: Option<i64>,
    /// Where commands and health checks run.
    pub runner: Box<dyn command::Runner>,
    /// The cluster's etcd, read with the health checks when CKE's gate is on.
    pub etcd: Option<super::etcd::Client>,
    /// The trigger's query stored by `autorepair auto-repair set-variables` (read as the
    /// fleet is opened), or why it cannot be read.
    pub variables:
        Option<Result<crate::sabakan::client::Variables, super::snapshot::StoredQueryError>>,
    /// Asked before every label write and every repair command (`Backend::guard_writes`: a
    /// replica that lost its Lease stops there, inside a call too).
    guard: Option<WriteGuard>,
    /// Every label written or removed ([`Backend::writes_made`]): an entry is three.
    label_writes: usize,
    /// The labels of the cluster and the racks this process set on their holders, `(serial,
    /// name)`: replacing disagreeing copies of a policy removes every copy but these.
    shared_written: Vec<(String, String)>,
}

/// The machine's labels as (name, value) pairs, either shape.
fn labels_of(m: &Value) -> Vec<(String, String)> {
    match &m["spec"]["labels"] {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
            .collect(),
        Value::Array(list) => list
            .iter()
            .map(|l| {
                (
                    l["name"].as_str().unwrap_or("").to_owned(),
                    l["value"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn set_label(m: &mut Value, name: &str, value: &str) {
    match &mut m["spec"]["labels"] {
        Value::Array(list) => {
            match list.iter_mut().find(|l| l["name"] == name) {
                Some(l) => l["value"] = Value::from(value),
                None => list.push(serde_json::json!({"name": name, "value": value})),
            }
            return;
        }
        Value::Object(map) => {
            map.insert(name.to_owned(), Value::from(value));
            return;
        }
        _ => {}
    }
    let mut map = Map::new();
    map.insert(name.to_owned(), Value::from(value));
    m["spec"]["labels"] = Value::Object(map);
}

/// Of two suspend label values (empty: for good; else until an epoch), the one that holds
/// longer.
fn stronger_suspend<'v>(current: Option<&'v str>, new: &'v str) -> &'v str {
    match current {
        None => new,
        Some("") => "",
        Some(_) if new.is_empty() => "",
        Some(c) => match (c.parse::<i64>(), new.parse::<i64>()) {
            (Ok(a), Ok(b)) if a > b => c,
            _ => new,
        },
    }
}

fn remove_label(m: &mut Value, name: &str) {
    match &mut m["spec"]["labels"] {
        Value::Array(list) => list.retain(|l| l["name"] != name),
        Value::Object(map) => {
            map.remove(name);
        }
        _ => {}
    }
}

/// The machines of a document [`Document::new`] checked.
fn list_mut(doc: &mut Value) -> &mut Vec<Value> {
    match doc {
        Value::Array(l) => l,
        v => {
            let v = if v["data"]["searchMachines"].is_array() {
                &mut v["data"]["searchMachines"]
            } else {
                &mut v["searchMachines"]
            };
            v.as_array_mut().expect("checked when opened")
        }
    }
}

/// A mark's label name where it is stored: a cluster mark's name gets `cluster.` after the
/// prefix, a rack's `rack.`.
fn stored_name(name: &str, infix: &str) -> String {
    match name.strip_prefix(labels::PREFIX) {
        Some(rest) => format!("{}{infix}{rest}", labels::PREFIX),
        None => name.to_owned(),
    }
}

impl Document {
    /// The machines `doc` from `store`, checked to be a list of machines in either shape.
    pub fn new(
        store: Box<dyn Store>,
        doc: Value,
        repair: Repair,
        nodes: Option<NodesFile>,
    ) -> Result<Document, BackendError> {
        let d = Document {
            store,
            doc,
            repair,
            nodes,
            kube: None,
            dirty: false,
            check_health: true,
            now: None,
            runner: Box::new(command::Processes),
            etcd: None,
            variables: None,
            guard: None,
            label_writes: 0,
            shared_written: Vec::new(),
        };
        d.list()?;
        Ok(d)
    }

    /// The machines `doc`, kept in memory only.
    pub fn in_memory(
        doc: Value,
        repair: Repair,
        nodes: Option<NodesFile>,
    ) -> Result<Document, BackendError> {
        Document::new(Box::new(Memory), doc, repair, nodes)
    }

    /// Nodes from a live cluster (or any other [`Drainer`]) instead of a nodes file.
    pub fn with_drainer(mut self, drainer: Box<dyn Drainer>) -> Document {
        self.kube = Some(drainer);
        self
    }

    /// An error about the machines, naming where they are.
    fn error(&self, message: impl Into<String>) -> BackendError {
        self.store.error(message.into())
    }

    /// The pass's clock: `--now`, else the wall clock.
    fn clock(&self) -> i64 {
        self.now
            .unwrap_or_else(|| jiff::Timestamp::now().as_second())
    }

    /// The machines as JSON, with every write made so far.
    pub fn json(&self) -> &Value {
        &self.doc
    }

    fn list(&self) -> Result<&Vec<Value>, BackendError> {
        let list = match &self.doc {
            Value::Array(l) => Some(l),
            v => v["data"]["searchMachines"]
                .as_array()
                .or_else(|| v["searchMachines"].as_array()),
        };
        list.ok_or_else(|| {
            self.error(
                "expected a JSON array of machines (GET /api/v1/machines) or a GraphQL answer {\"data\":{\"searchMachines\":[…]}}",
            )
        })
    }

    /// The serials of the rack holders and of the cluster holder.
    fn holders(machines: &[crate::sabakan::Machine]) -> (Vec<(i64, String)>, Option<String>) {
        let mut boots: Vec<&crate::sabakan::Machine> =
            machines.iter().filter(|m| m.role == "boot").collect();
        boots.sort_by_key(|m| (m.rack, m.index_in_rack));
        let mut racks: Vec<(i64, String)> = Vec::new();
        for b in &boots {
            if racks.last().is_none_or(|(r, _)| *r != b.rack) {
                racks.push((b.rack, b.serial.clone()));
            }
        }
        (racks, boots.first().map(|b| b.serial.clone()))
    }

    fn machine_mut(&mut self, serial: &str) -> Result<&mut Value, BackendError> {
        let store = &self.store;
        list_mut(&mut self.doc)
            .iter_mut()
            .find(|m| m["spec"]["serial"] == serial)
            .ok_or_else(|| store.error(format!("no machine with serial {serial}")))
    }

    /// Where an object's marks live: a machine's serial, and the prefix its mark names get.
    fn place(&self, object: &ObjectRef) -> Result<(String, &'static str), BackendError> {
        let machines = self.parsed()?;
        let (racks, cluster) = Document::holders(&machines);
        let none = || {
            self.error(
                format!(
                    "{object} has no boot server to hold its labels (sabakan has no object for it; see docs/machines.md)"
                ),
            )
        };
        match object.kind.as_ref() {
            kind::MACHINE => match racks.iter().find(|(_, s)| *s == object.name) {
                // Its labels are the rack's: a policy meant for one machine would open or
                // suspend the whole rack.
                Some((rack, _)) => Err(self.error(
                    format!(
                        "{object} is the boot server that holds rack {rack}'s labels, so it has none of its own: for the rack, name rack/{rack}"
                    ),
                )),
                None => Ok((object.name.clone(), "")),
            },
            kind::RACK => racks
                .iter()
                .find(|(r, _)| r.to_string() == object.name)
                .map(|(_, s)| (s.clone(), "rack."))
                .ok_or_else(none),
            kind::CLUSTER => cluster.map(|s| (s, "cluster.")).ok_or_else(none),
            _ => Err(BackendError::NoSuchObject {
                object: object.clone(),
            }),
        }
    }

    fn parsed(&self) -> Result<Vec<crate::sabakan::Machine>, BackendError> {
        crate::sabakan::model::machines_from_value(
            Value::Array(self.list()?.clone()),
            self.stamp_now(),
        )
        .map_err(|e| self.error(e.to_string()))
    }

    /// The clock REST machines' `status.timestamp` is read against. A --now past jiff's last
    /// timestamp (the last day of year 9999) is read as that one, never as the wall clock.
    fn stamp_now(&self) -> jiff::Timestamp {
        self.now
            .map(|t| jiff::Timestamp::from_second(t).unwrap_or(jiff::Timestamp::MAX))
            .unwrap_or_else(jiff::Timestamp::now)
    }

    /// Sets (`Some`) or removes (`None`) one of the family's own labels on a machine: where the
    /// store keeps the machines first ([`Store::write`]), then in the document.
    pub fn set(
        &mut self,
        serial: &str,
        name: &str,
        value: Option<&str>,
    ) -> Result<(), BackendError> {
        self.machine_mut(serial)?;
        self.may_write()?;
        self.store.write(serial, name, value)?;
        let m = self.machine_mut(serial)?;
        match value {
            Some(v) => set_label(m, name, v),
            None => remove_label(m, name),
        }
        self.dirty = true;
        self.label_writes += 1;
        Ok(())
    }

    /// Removes the label `name` from every machine that carries it (a cluster's switch left
    /// on a former holder still holds: enabling must take every copy).
    pub fn remove_everywhere(&mut self, name: &str) -> Result<(), BackendError> {
        let carrying: Vec<String> = self
            .list()?
            .iter()
            .filter(|m| labels_of(m).iter().any(|(n, _)| n == name))
            .filter_map(|m| m["spec"]["serial"].as_str().map(str::to_owned))
            .collect();
        for serial in carrying {
            self.set(&serial, name, None)?;
        }
        Ok(())
    }

    /// The serial of the machine that holds an object's labels.
    pub fn holder(&self, object: &ObjectRef) -> Result<String, BackendError> {
        self.place(object).map(|(serial, _)| serial)
    }

    /// The next entry index: above the entry counter and every index recorded in an entry or
    /// a repair mark. The counter (`autorepair.cluster.index`) is read on every machine, not
    /// only the cluster's holder: a boot server added to a lower rack becomes the holder
    /// without the counter, and the old one still has it. A counter that cannot be read, or
    /// indexes used up to [`MAX_INDEX`], hold every new entry (an index given twice or wrapped
    /// to 0 would name two repairs): the error says which label to fix.
    pub fn next_index(&self) -> Result<u64, BackendError> {
        let counter = stored_name(INDEX, "cluster.");
        let mut max = 0;
        for m in self.list()? {
            for (name, value) in labels_of(m) {
                let text = labels::join(&name, &value);
                if name == counter {
                    match value.parse::<u64>() {
                        Ok(n) if n <= MAX_INDEX => max = max.max(n),
                        _ => {
                            return Err(self.error(format!(
                                "machine/{}: the entry counter {counter}={value:?} is not an index from 0 to {MAX_INDEX} (CKE's indexes are int64), so no new repair entry can be given one; set it to the highest index in use (autorepair repair list) or remove it",
                                m["spec"]["serial"].as_str().unwrap_or("?")
                            )));
                        }
                    }
                } else if name == ENTRY {
                    if let Ok(Some(e)) = Entry::from_labels([
                        (ENTRY, value.as_str()),
                        (PROGRESS, "queued.0.waiting.0.0.0"),
                    ]) {
                        max = max.max(e.index);
                    }
                } else if let Ok(Mark::Pending(p)) = labels::Labels::parse(&text) {
                    max = p.ops.iter::<OpId>().map(|o| o.0).fold(max, u64::max);
                } else if let Ok(Mark::Result(r)) = labels::Labels::parse(&text) {
                    max = r.ops.iter::<OpId>().map(|o| o.0).fold(max, u64::max);
                }
            }
        }
        if max >= MAX_INDEX {
            return Err(self.error(format!(
                "the repair entry indexes are used up: {max} is the highest index CKE's int64 allows, so no new repair entry can be given one; delete the finished entries (autorepair repair delete --finished) and their result labels, then remove {counter} so that the indexes start again"
            )));
        }
        Ok(max + 1)
    }

    /// Gives out the next entry index, as CKE's write index does: the counter on the cluster's
    /// holder is written first, so that deleting entries never makes an index come back, and a
    /// crash before the entry is written only skips one. Without a boot server to hold it,
    /// the index is derived from what is recorded (docs/machines.md).
    pub fn take_index(&mut self) -> Result<u64, BackendError> {
        let index = self.next_index()?;
        match self.place(&ObjectRef::singleton(kind::CLUSTER)) {
            Ok((holder, infix)) => {
                self.set(
                    &holder,
                    &stored_name(INDEX, infix),
                    Some(&index.to_string()),
                )?;
            }
            Err(_) => {
                tracing::warn!(
                    index,
                    "no boot server holds the cluster's labels: the repair entry index is derived from the recorded ones, and may repeat once they are removed"
                );
            }
        }
        Ok(index)
    }

    /// The labels of the cluster and of each rack that a change of holder left on other
    /// machines (or a rack's in their form before [`RACK_PREFIX`]) are moved to the holder,
    /// where the admin verbs write: a copy the holder lacks is set there, one it has with the
    /// same value is dropped. Copies that disagree stay where they are (the snapshot holds on
    /// them) until a person decides.
    fn gather_shared_labels(&mut self) -> Result<(), BackendError> {
        for shared in self.shared_labels()? {
            let Some(holder) = shared.holder.clone() else {
                continue;
            };
            for (name, copies) in &shared.by_name {
                if *name == stored_name(INDEX, "cluster.") {
                    // Read on every machine already: the next entry written moves it.
                    continue;
                }
                let mut distinct: Vec<&String> = copies.iter().map(|c| &c.value).collect();
                distinct.sort();
                distinct.dedup();
                if distinct.len() > 1 {
                    continue;
                }
                let in_place = |c: &&Copy| c.serial == holder && c.stored == *name;
                if !copies.iter().any(|c| in_place(&c)) {
                    self.set(&holder, name, Some(distinct[0]))?;
                }
                for c in copies.iter().filter(|c| !in_place(c)) {
                    tracing::info!(label = %c.stored, from = %c.serial, to = %holder, as_name = %name, "{}'s label moved to the machine that holds its labels now", shared.scope);
                    self.set(&c.serial, &c.stored, None)?;
                }
            }
        }
        Ok(())
    }

    /// The shared labels of the cluster and of every rack that has a holder or a label.
    fn shared_labels(&self) -> Result<Vec<SharedLabels>, BackendError> {
        Ok(Document::shared_labels_of_machines(
            &self.parsed()?,
            self.list()?,
        ))
    }

    /// [`Document::shared_labels`] of machines parsed already (`raw`: the same, as read).
    fn shared_labels_of_machines(
        machines: &[crate::sabakan::Machine],
        raw: &[Value],
    ) -> Vec<SharedLabels> {
        let (racks, cluster) = Document::holders(machines);
        let rows: Vec<Row> = machines
            .iter()
            .zip(raw)
            .map(|(m, raw)| Row {
                serial: m.serial.clone(),
                rack: m.rack,
                labels: labels_of(raw),
            })
            .collect();
        let mut numbers: Vec<i64> = racks.iter().map(|(r, _)| *r).collect();
        numbers.extend(
            rows.iter()
                .filter(|r| r.labels.iter().any(|(n, _)| n.starts_with(RACK_PREFIX)))
                .map(|r| r.rack),
        );
        numbers.sort_unstable();
        numbers.dedup();
        let mut all: Vec<SharedLabels> = numbers
            .into_iter()
            .map(|n| {
                let holder = racks.iter().find(|(r, _)| *r == n).map(|(_, s)| s.clone());
                SharedLabels::gather(Shared::Rack(n), holder, &rows)
            })
            .collect();
        all.push(SharedLabels::gather(Shared::Cluster, cluster, &rows));
        all
    }

    /// The shared labels of one scope (the cluster or a rack).
    fn shared_labels_of(&self, object: &ObjectRef) -> Result<Option<SharedLabels>, BackendError> {
        let scope = match object.kind.as_ref() {
            kind::CLUSTER => Shared::Cluster,
            kind::RACK => match object.name.parse() {
                Ok(n) => Shared::Rack(n),
                Err(_) => return Ok(None),
            },
            _ => return Ok(None),
        };
        Ok(self.shared_labels()?.into_iter().find(|l| l.scope == scope))
    }

    fn may_write(&self) -> Result<(), BackendError> {
        self.guard.as_ref().map_or(Ok(()), |g| g().map(drop))
    }

    fn progress(&mut self, serial: &str, p: &Progress) -> Result<(), BackendError> {
        self.set(serial, PROGRESS, Some(&p.value()))
    }

    fn drainer(&mut self) -> Result<&mut dyn Drainer, BackendError> {
        match (&mut self.kube, &mut self.nodes) {
            (Some(k), _) => Ok(k.as_mut()),
            (None, Some(n)) => Ok(n),
            (None, None) => Err(self
                .store
                .error("a drain needs Nodes: give --nodes FILE or --kubeconfig FILE".into())),
        }
    }

    /// The Nodes, with the Pods still to move off those whose machine's entry drains.
    fn read_nodes(
        &mut self,
        machines: &[snapshot::Machine],
    ) -> Result<Vec<snapshot::Node>, BackendError> {
        let Ok(drainer) = self.drainer() else {
            return Ok(Vec::new());
        };
        let mut nodes = drainer.list()?;
        for n in &mut nodes {
            let draining = machines.iter().any(|m| {
                m.address().is_some_and(|a| n.is(a))
                    && m.entry().is_some_and(|e| {
                        !e.progress.deleted
                            && e.progress.status == super::entry::Status::Processing
                            && e.progress.step_status == super::entry::StepStatus::Draining
                    })
            });
            if draining {
                n.pods = drainer.pods(&n.name)?;
            }
        }
        Ok(nodes)
    }

    /// A drain that cannot go on (refused by its dry run, or failed): the entry backs off as
    /// when the eviction timeout passes, and the Node is uncordoned if the drain cordoned it.
    fn drain_refused(
        &mut self,
        serial: &str,
        node: &str,
        why: &str,
        now: i64,
    ) -> Result<(), BackendError> {
        let current = labels_of(self.machine_mut(serial)?)
            .into_iter()
            .find_map(|(n, v)| (n == PROGRESS).then_some(v))
            .ok_or_else(|| self.error(format!("machine {serial} has no repair entry")))?;
        let current =
            Progress::parse(&current).map_err(|e| self.error(format!("machine {serial}: {e}")))?;
        let q = super::procedure::backed_off(current, serial, now);
        tracing::warn!(machine = serial, node, why, retry_after = %crate::engine::text::rfc3339(q.drain_backoff_expire), "drain refused: the repair backs off");
        self.progress(serial, &q)?;
        self.drainer()?.uncordon(node)
    }
}

/// How the cluster scope's policy mark starts when its copies disagree: never a level, so the
/// codec reads it as unreadable.
const DISAGREE: &str = "copies disagree: ";

/// A scope whose labels live on a machine, sabakan having no object for it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shared {
    Cluster,
    Rack(i64),
}

impl Shared {
    /// What comes after [`labels::PREFIX`] in the stored names of its marks.
    fn infix(self) -> &'static str {
        match self {
            Shared::Cluster => "cluster.",
            Shared::Rack(_) => "rack.",
        }
    }

    fn covers(self, rack: i64) -> bool {
        match self {
            Shared::Cluster => true,
            Shared::Rack(r) => r == rack,
        }
    }
}

impl std::fmt::Display for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shared::Cluster => f.write_str("the cluster"),
            Shared::Rack(r) => write!(f, "rack {r}"),
        }
    }
}

/// A machine as the shared labels are gathered from it.
struct Row {
    serial: String,
    rack: i64,
    labels: Vec<(String, String)>,
}

/// One copy of a shared label: on which machine, under which name.
struct Copy {
    serial: String,
    stored: String,
    value: String,
}

/// Every copy of a scope's labels, wherever it is: the cluster's (`autorepair.cluster.*`) on
/// any machine, a rack's (`autorepair.rack.*`) on any machine of the rack. They live on the
/// scope's holder, its first boot server; a boot server added lower, or the holder retired,
/// makes another machine the holder, and the labels stay behind. Read from every machine,
/// they keep holding through such a change (rule 11: a suspend left on the former holder still
/// suspends). A rack's marks written before [`RACK_PREFIX`] existed are the holder's own
/// unprefixed ones: read as the rack's, as they always were.
struct SharedLabels {
    scope: Shared,
    holder: Option<String>,
    /// Each label by its name under the scope's prefix, with its copies (the holder's first).
    by_name: std::collections::BTreeMap<String, Vec<Copy>>,
}

impl SharedLabels {
    fn gather(scope: Shared, holder: Option<String>, rows: &[Row]) -> SharedLabels {
        let prefix = format!("{}{}", labels::PREFIX, scope.infix());
        let mut by_name: std::collections::BTreeMap<String, Vec<Copy>> = Default::default();
        for row in rows.iter().filter(|r| scope.covers(r.rack)) {
            let on_holder = holder.as_deref() == Some(row.serial.as_str());
            for (stored, value) in &row.labels {
                let name = if stored.starts_with(&prefix) {
                    stored.clone()
                } else if on_holder
                    && matches!(scope, Shared::Rack(_))
                    && !matches!(
                        labels::Labels::parse(&labels::join(stored, value)),
                        Ok(Mark::Foreign)
                    )
                {
                    stored_name(stored, scope.infix())
                } else {
                    continue;
                };
                let copies = by_name.entry(name).or_default();
                let copy = Copy {
                    serial: row.serial.clone(),
                    stored: stored.clone(),
                    value: value.clone(),
                };
                if on_holder {
                    copies.insert(0, copy);
                } else {
                    copies.push(copy);
                }
            }
        }
        SharedLabels {
            scope,
            holder,
            by_name,
        }
    }

    /// A switch of the cluster's (`QUEUE`, `AUTO_REPAIR`): off if any copy says so, and
    /// unreadable (holding as off does) if any copy is neither absent nor `disabled`.
    fn switch(&self, name: &str) -> Switch {
        let stored = stored_name(name, "cluster.");
        self.by_name
            .get(&stored)
            .into_iter()
            .flatten()
            .map(|c| match Switch::from_value(Some(&c.value)) {
                Switch::Unreadable(v) => Switch::Unreadable(format!(
                    "{stored}={v} on machine {} is neither absent (enabled) nor \"disabled\"",
                    c.serial
                )),
                other => other,
            })
            .fold(Switch::On, Switch::and)
    }

    /// The scope's marks. Copies that agree are one mark; suspends that differ are each a
    /// suspend (the longest holds). Copies of a policy that differ cannot be read as one:
    /// they stand for an unreadable policy, which allows nothing at the scope's level until a
    /// person removes the one that is wrong.
    fn marks(&self) -> Vec<String> {
        let infix = self.scope.infix();
        let own = [QUEUE, AUTO_REPAIR, INDEX].map(|n| stored_name(n, infix));
        let prefix = format!("{}{infix}", labels::PREFIX);
        let mut marks = Vec::new();
        for (name, copies) in &self.by_name {
            if own.contains(name) {
                continue;
            }
            let bare = format!(
                "{}{}",
                labels::PREFIX,
                name.strip_prefix(&prefix).unwrap_or(name)
            );
            let mut values: Vec<&str> = copies.iter().map(|c| c.value.as_str()).collect();
            values.sort_unstable();
            values.dedup();
            if values.len() > 1 && bare == labels::POLICY {
                let said: Vec<String> = copies
                    .iter()
                    .map(|c| format!("{} on {}", c.value, c.serial))
                    .collect();
                marks.push(labels::join(
                    &bare,
                    &format!("{DISAGREE}{}", said.join(", ")),
                ));
            } else {
                marks.extend(values.iter().map(|v| labels::join(&bare, v)));
            }
        }
        marks
    }

    /// Says which copies are away from the holder, once while they are (again when that
    /// changes or comes back).
    fn warn_split(&self) {
        let holder = self.holder.as_deref();
        let away: Vec<String> = self
            .by_name
            .values()
            .flatten()
            .filter(|c| Some(c.serial.as_str()) != holder)
            .map(|c| format!("{}={} on {}", c.stored, c.value, c.serial))
            .collect();
        if away.is_empty() {
            return;
        }
        let key = away.join(", ");
        if !crate::plug::first_time(&format!("split: {key}")) {
            return;
        }
        match holder {
            Some(holder) => tracing::warn!(
                holder,
                "{}'s labels are split: {key} (not on the machine that holds them now); they still count, and a pass moves those the holder agrees with",
                self.scope
            ),
            None => tracing::warn!(
                "{}'s labels are on machines that no longer hold them: {key}; no boot server holds them now, and they still count until a boot server does (a pass then moves them) or `resume` removes them",
                self.scope
            ),
        }
    }
}

impl Backend<Machines> for Document {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        if let Some(doc) = self.store.reread()? {
            self.doc = doc;
            self.dirty = false;
        }
        let machines = self.parsed()?;
        self.store.on_snapshot(&machines);
        let raw = self.list()?;
        let (racks, _) = Document::holders(&machines);
        let mut snap = Snapshot {
            variables: self.variables.clone(),
            ..Snapshot::default()
        };
        let shared = Document::shared_labels_of_machines(&machines, raw);
        for scope in &shared {
            scope.warn_split();
        }
        for scope in shared.iter().filter(|s| s.scope == Shared::Cluster) {
            snap.queue = std::mem::take(&mut snap.queue).and(scope.switch(QUEUE));
            snap.auto_repair = std::mem::take(&mut snap.auto_repair).and(scope.switch(AUTO_REPAIR));
        }
        if let Some(client) = self.etcd.as_ref().filter(|_| self.check_health) {
            let none = Default::default();
            let cps = self.repair.control_planes.as_ref().unwrap_or(&none);
            snap.etcd = Some(super::etcd::read(client, cps));
        }
        for (info, raw) in machines.into_iter().zip(raw) {
            let pairs = labels_of(raw);
            let mut marks = Vec::with_capacity(pairs.len());
            for (name, value) in &pairs {
                if !name.starts_with(CLUSTER_PREFIX) && !name.starts_with(RACK_PREFIX) {
                    marks.push(labels::join(name, value));
                }
            }
            if racks.iter().any(|(_, s)| *s == info.serial) {
                // Its unprefixed marks are the rack's (read by `SharedLabels`), not its own:
                // its own keep only foreign labels.
                marks.retain(|t| matches!(labels::Labels::parse(t), Ok(Mark::Foreign)));
            }
            let entry = Entry::from_labels(pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())));
            let address = info.address().map(str::to_owned);
            let healthy = match (&entry, &address) {
                (Ok(Some(e)), Some(a))
                    if self.check_health
                        && !e.progress.status.finished()
                        && !e.progress.deleted =>
                {
                    Some(match self.repair.operation(&e.machine_type, &e.operation) {
                        Some(op) if !op.health_check_command.is_empty() => {
                            match self.runner.healthy(
                                &op.health_check_command,
                                a,
                                op.command_timeout_seconds,
                            ) {
                                Ok(h) => h,
                                Err(err) => {
                                    tracing::warn!(machine = %info.serial, error = %err, "health check failed");
                                    false
                                }
                            }
                        }
                        _ => false,
                    })
                }
                _ => None,
            };
            snap.machines.push(snapshot::Machine {
                serial: info.serial.clone(),
                rack: format!("{}/{}", kind::RACK, info.rack),
                marks,
                entry,
                healthy,
                info,
            });
        }
        // Without a boot server, the labels a scope's former holder left behind still hold
        // what they govern.
        for scope in shared {
            let marks = scope.marks();
            if scope.holder.is_none() && marks.is_empty() {
                continue;
            }
            let (object, key) = match scope.scope {
                Shared::Rack(r) => (
                    ObjectRef::new(kind::RACK, r.to_string()),
                    format!("{}/{r}", kind::RACK),
                ),
                Shared::Cluster => (
                    ObjectRef::singleton(kind::CLUSTER),
                    kind::CLUSTER.to_owned(),
                ),
            };
            snap.scopes.push(Scope { object, key, marks });
        }
        snap.nodes = self.read_nodes(&snap.machines)?;
        Ok(snap)
    }

    fn add_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        let (serial, infix) = self.place(object)?;
        for mark in marks {
            let (bare, value) = labels::split(mark);
            let name = stored_name(bare, infix);
            if !labels::is_label_text(&name) || !labels::is_label_value(value) {
                return Err(self.error(format!("{object}: {mark:?} is not a valid sabakan label")));
            }
            let mut value = value.to_owned();
            if bare == labels::SUSPEND {
                // Both suspends share one label: a new one must not weaken the one there.
                let current = labels_of(self.machine_mut(&serial)?)
                    .into_iter()
                    .find_map(|(n, v)| (n == name).then_some(v));
                value = stronger_suspend(current.as_deref(), &value).to_owned();
            }
            self.set(&serial, &name, Some(&value))?;
            if object.is(kind::CLUSTER) || object.is(kind::RACK) {
                self.shared_written.push((serial.clone(), name));
            }
        }
        Ok(())
    }

    fn remove_marks(
        &mut self,
        object: &ObjectRef,
        marks: &[String],
        _reason: &str,
    ) -> Result<(), BackendError> {
        if let Some(shared) = self.shared_labels_of(object)? {
            // From every copy: a copy left on a former holder would bring a suspend back.
            for mark in marks {
                let (name, value) = labels::split(mark);
                let name = stored_name(name, shared.scope.infix());
                // The policy's disagreeing copies are one mark: replaced, all go.
                // The one just written (`allow LEVEL cluster` adds before it removes) stays.
                let every = value.starts_with(DISAGREE);
                let just_written = |c: &Copy| {
                    self.shared_written
                        .iter()
                        .any(|(s, n)| *s == c.serial && *n == c.stored)
                };
                let holding: Vec<(String, String)> = shared
                    .by_name
                    .get(&name)
                    .into_iter()
                    .flatten()
                    .filter(|c| {
                        if every {
                            !just_written(c)
                        } else {
                            c.value == value
                        }
                    })
                    .map(|c| (c.serial.clone(), c.stored.clone()))
                    .collect();
                for (serial, stored) in holding {
                    self.set(&serial, &stored, None)?;
                }
            }
            return Ok(());
        }
        let (serial, infix) = self.place(object)?;
        for mark in marks {
            let (name, value) = labels::split(mark);
            let name = stored_name(name, infix);
            // Only while it still holds that value.
            let holds = labels_of(self.machine_mut(&serial)?)
                .iter()
                .any(|(n, v)| *n == name && v == value);
            if holds {
                self.set(&serial, &name, None)?;
            }
        }
        Ok(())
    }

    fn submit(
        &mut self,
        target: &str,
        op: &Op,
        _reason: &str,
        _after: Option<&OpId>,
    ) -> Result<OpId, BackendError> {
        let Op::Enqueue {
            serial,
            operation,
            machine_type,
            at,
        } = op
        else {
            return Err(self.error(format!(
                "machine/{target}: {op} is not submitted, it is advanced"
            )));
        };
        let now = self.stamp_now();
        self.store.before_entry(serial, now)?;
        let index = self.take_index()?;
        let value = Entry::value(index, operation, machine_type)
            .map_err(|e| self.error(format!("machine/{serial}: {e}")))?;
        self.progress(serial, &Progress::queued(*at))?;
        self.set(serial, ENTRY, Some(&value))?;
        Ok(OpId(index))
    }

    fn advance(&mut self, object: &ObjectRef, op: &Op, _reason: &str) -> Result<(), BackendError> {
        match op {
            Op::Enqueue { .. } => {
                Err(self.error(format!("{object}: {op} is submitted, not advanced")))
            }
            Op::Record {
                serial, progress, ..
            } => self.progress(serial, progress),
            Op::Drain {
                serial,
                node,
                progress,
            } => {
                let now = self.clock();
                if let Some(p) = progress {
                    // A drain starting: CKE's dry run first (a live cluster: a protected
                    // running Job Pod, or an eviction refused in a protected namespace).
                    if let Some(why) = self.drainer()?.check(node)? {
                        return self.drain_refused(serial, node, &why, now);
                    }
                    self.progress(serial, p)?;
                    self.flush()?;
                }
                // Every drain pass cordons (a no-op once cordoned): a crash between recording
                // "draining" and the cordon must not leave the Node schedulable.
                self.drainer()?.cordon(node)?;
                match self.drainer()?.evict(node, now)? {
                    Some(why) => self.drain_refused(serial, node, &why, now),
                    None => Ok(()),
                }
            }
            Op::Run {
                serial,
                address,
                what,
                command,
                before,
                after_ok,
                after_failure,
            } => {
                // A stop signal came while an earlier command ran: the pass ends here, before
                // a step is recorded as started that no command will run.
                if crate::child::stop_requested() {
                    return Err(BackendError::Halted(format!(
                        "stop signal: {what} on machine/{serial} not started; the next pass starts it"
                    )));
                }
                if let Some(p) = before {
                    // Recorded before the command runs: a crash from here on never runs it again.
                    self.progress(serial, p)?;
                    self.flush()?;
                }
                // A command is the write that matters most: at most once, by the replica that
                // leads now.
                self.may_write()?;
                match self.runner.run(command, address) {
                    Ok(()) => {
                        tracing::info!(machine = %serial, what = %what, "command succeeded");
                        if let Some(p) = after_ok {
                            self.progress(serial, p)?;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(machine = %serial, what = %what, error = %e, "command failed on every attempt: the repair entry fails");
                        self.progress(serial, after_failure)?;
                    }
                }
                Ok(())
            }
            Op::Dequeue { serial, .. } => {
                for (name, value) in labels_of(self.machine_mut(serial)?) {
                    let pending = matches!(
                        labels::Labels::parse(&labels::join(&name, &value)),
                        Ok(Mark::Pending(_))
                    );
                    if name == ENTRY || name == PROGRESS || pending {
                        self.set(serial, &name, None)?;
                    }
                }
                Ok(())
            }
            Op::Uncordon { node } => self.drainer()?.uncordon(node),
        }
    }

    fn guard_writes(&mut self, guard: crate::engine::WriteGuard) {
        if let Some(k) = &mut self.kube {
            k.guard_writes(guard.clone());
        }
        self.guard = Some(self.store.guard(guard));
    }

    fn writes_made(&self) -> Option<usize> {
        Some(self.label_writes)
    }

    fn suspended_meanwhile(&self) -> Option<String> {
        self.store.suspended_meanwhile()
    }

    fn finish_pass(&mut self, _now: i64) -> Result<(), BackendError> {
        // The pass's own writes are saved whether or not the move could be made.
        let moved = self.gather_shared_labels();
        self.flush()?;
        moved
    }

    fn flush(&mut self) -> Result<(), BackendError> {
        if !self.dirty {
            return Ok(());
        }
        self.store.save(&self.doc)?;
        self.dirty = false;
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// A boot server holding the cluster's and rack 0's labels, and machine `m1` with `labels`,
    /// as `GET /api/v1/machines` answers.
    pub(in crate::machines) fn rest(labels: Value) -> Value {
        json!([
            {"spec": {"serial": "boot0", "labels": {"autorepair.cluster.policy": "step-8", "autorepair.policy": "step-1"},
              "rack": 0, "index-in-rack": 1, "role": "boot", "ipv4": ["10.0.0.1"], "bmc": {"type": "qemu"}},
             "status": {"state": "healthy", "timestamp": "2026-01-01T00:00:00Z"}},
            {"spec": {"serial": "m1", "labels": labels, "rack": 0, "index-in-rack": 2, "role": "cs",
              "ipv4": ["10.0.0.2"], "bmc": {"type": "qemu"}},
             "status": {"state": "unhealthy", "timestamp": "2026-01-01T00:00:00Z"}}
        ])
    }

    fn graphql() -> Value {
        json!({"data": {"searchMachines": [
            {"spec": {"serial": "boot0", "labels": [{"name": "autorepair.cluster.suspend", "value": ""}],
              "rack": 0, "indexInRack": 1, "role": "boot", "ipv4": ["10.0.0.1"], "bmc": {"bmcType": "qemu"}},
             "status": {"state": "HEALTHY", "duration": 10.0}},
            {"spec": {"serial": "m1", "labels": null, "rack": 0, "indexInRack": 2, "role": "cs",
              "ipv4": ["10.0.0.2"], "bmc": {"bmcType": "qemu"}},
             "status": {"state": "UNHEALTHY", "duration": 10.0}}
        ]}})
    }

    #[test]
    fn a_new_suspend_never_weakens_the_one_there() {
        let cases = [
            (None, "1800", "1800"),
            (Some(""), "1800", ""),
            (Some("1800"), "", ""),
            (Some("1800"), "1700", "1800"),
            (Some("1700"), "1800", "1800"),
            (Some("garbage"), "1800", "1800"),
        ];
        for (current, new, want) in cases {
            assert_eq!(
                stronger_suspend(current, new),
                want,
                "{current:?} then {new:?}"
            );
        }
    }

    #[test]
    fn scopes_live_on_boot_servers_in_both_shapes() {
        let mut f = Document::in_memory(rest(json!({"x": "y"})), Repair::default(), None).unwrap();
        let snap = f.snapshot().unwrap();
        let scope = |k: &str| {
            snap.scopes
                .iter()
                .find(|s| s.key == k)
                .unwrap()
                .marks
                .clone()
        };
        assert_eq!(scope("cluster"), vec!["autorepair.policy=step-8"]);
        assert_eq!(scope("rack/0"), vec!["autorepair.policy=step-1"]);
        assert!(
            snap.machines[0].marks.is_empty(),
            "{:?}",
            snap.machines[0].marks
        );
        assert_eq!(snap.machines[1].marks, vec!["x=y"]);
        // A cluster mark goes back under autorepair.cluster.
        f.add_marks(
            &ObjectRef::singleton(kind::CLUSTER),
            &["autorepair.suspend=".into()],
            "t",
        )
        .unwrap();
        assert_eq!(
            f.json()[0]["spec"]["labels"]["autorepair.cluster.suspend"],
            ""
        );
        f.remove_marks(
            &ObjectRef::new(kind::RACK, "0"),
            &["autorepair.policy=step-2".into()],
            "t",
        )
        .unwrap();
        assert_eq!(
            f.json()[0]["spec"]["labels"]["autorepair.policy"],
            "step-1",
            "only the value it holds"
        );
        f.remove_marks(
            &ObjectRef::new(kind::RACK, "0"),
            &["autorepair.policy=step-1".into()],
            "t",
        )
        .unwrap();
        assert!(
            f.json()[0]["spec"]["labels"]
                .get("autorepair.policy")
                .is_none()
        );

        // The rack's boot server has no marks of its own: naming it is refused, not taken
        // as the rack.
        let boot = f.json()[0]["spec"]["serial"].as_str().unwrap().to_owned();
        let e = f
            .add_marks(
                &ObjectRef::new(kind::MACHINE, boot),
                &["autorepair.suspend=".into()],
                "t",
            )
            .unwrap_err();
        assert!(e.to_string().contains("name rack/0"), "{e}");

        let mut g = Document::in_memory(graphql(), Repair::default(), None).unwrap();
        let snap = g.snapshot().unwrap();
        assert_eq!(
            snap.scopes
                .iter()
                .find(|s| s.key == "cluster")
                .unwrap()
                .marks,
            vec!["autorepair.suspend="]
        );
        g.add_marks(
            &ObjectRef::new(kind::MACHINE, "m1"),
            &["autorepair.policy=check".into()],
            "t",
        )
        .unwrap();
        assert_eq!(
            g.json()["data"]["searchMachines"][1]["spec"]["labels"],
            json!({"autorepair.policy": "check"})
        );
        assert!(
            g.add_marks(
                &ObjectRef::new(kind::MACHINE, "m1"),
                &["autorepair.policy=a:b".into()],
                "t"
            )
            .is_err()
        );
    }

    #[test]
    fn indexes_only_grow_whatever_is_removed() {
        let mut f = Document::in_memory(rest(json!({})), Repair::default(), None).unwrap();
        let enqueue = Op::Enqueue {
            serial: "m1".into(),
            operation: "unhealthy".into(),
            machine_type: "qemu".into(),
            at: 5,
        };
        assert_eq!(f.submit("m1", &enqueue, "r", None).unwrap(), OpId(1));
        assert_eq!(
            f.json()[0]["spec"]["labels"]["autorepair.cluster.index"],
            "1"
        );
        // The entry removed, as a dequeue does: its index is not given again.
        f.set("m1", ENTRY, None).unwrap();
        f.set("m1", PROGRESS, None).unwrap();
        assert_eq!(f.submit("m1", &enqueue, "r", None).unwrap(), OpId(2));
        // A counter left on a machine that no longer holds the cluster's labels still counts.
        f.set("m1", "autorepair.cluster.index", Some("7")).unwrap();
        assert_eq!(f.next_index().unwrap(), 8);
        f.set("m1", "autorepair.cluster.index", None).unwrap();
        assert_eq!(f.next_index().unwrap(), 3, "entry #2 is still recorded");
        // CKE's indexes are int64: the counter never wraps nor passes it, and one that cannot
        // be read holds every new entry instead of being ignored.
        let max = i64::MAX.to_string();
        let below = (i64::MAX - 1).to_string();
        for (counter, want) in [
            (below.as_str(), Ok(MAX_INDEX)),
            (max.as_str(), Err("used up")),
            ("9223372036854775808", Err("is not an index")),
            ("18446744073709551615", Err("is not an index")),
            ("99999999999999999999", Err("is not an index")),
            ("x", Err("is not an index")),
            ("-1", Err("is not an index")),
        ] {
            f.set("boot0", "autorepair.cluster.index", Some(counter))
                .unwrap();
            match (f.next_index(), want) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{counter}"),
                (Err(e), Err(says)) => {
                    let e = e.to_string();
                    assert!(e.contains(says), "{counter}: {e}");
                    assert!(e.contains("autorepair.cluster.index"), "{counter}: {e}");
                }
                (got, want) => panic!("{counter}: {got:?}, want {want:?}"),
            }
        }
        assert!(f.submit("m1", &enqueue, "r", None).is_err());
        f.set("boot0", "autorepair.cluster.index", None).unwrap();
        // An entry whose index passed int64 is not an index (the entry is damaged, and held).
        assert!(
            Entry::from_labels([
                (ENTRY, "9223372036854775808.unhealthy.qemu"),
                (PROGRESS, "queued.0.waiting.0.0.0")
            ])
            .is_err()
        );
        assert!("9223372036854775808".parse::<OpId>().is_err());
        assert_eq!(max.parse::<OpId>(), Ok(OpId(MAX_INDEX)));
        // The counter is not a mark of the cluster.
        let snap = f.snapshot().unwrap();
        let cluster = snap.scopes.iter().find(|s| s.key == "cluster").unwrap();
        assert!(
            cluster.marks.iter().all(|m| !m.contains("index")),
            "{:?}",
            cluster.marks
        );
    }
}
