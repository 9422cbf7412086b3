//! The in-memory object store: objects as JSON in their storage version, one global
//! resourceVersion counter, a bounded history of changes for watches, the open watches, the
//! injected faults, the reactors and the request log.

use crate::kube::fault::Fault;
use crate::kube::namespaces;
use crate::kube::resource::Resource;
use crate::kube::selector::{FieldSelector, LabelSelector};
use crate::kube::status::ApiError;
use crate::kube::table;
use crate::kube::{Converter, Reactor, RecordedRequest};
use crate::serve::Faults;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, VecDeque};
use tokio::sync::mpsc::UnboundedSender;

/// Where an object lives: group, plural, namespace (`""` when cluster-scoped), name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key {
    pub group: &'static str,
    pub plural: &'static str,
    pub namespace: String,
    pub name: String,
}

impl Key {
    pub fn new(res: &Resource, ns: &str, name: &str) -> Key {
        Key {
            group: res.group,
            plural: res.plural,
            namespace: if res.namespaced {
                ns.to_string()
            } else {
                String::new()
            },
            name: name.to_string(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Added,
    Modified,
    Deleted,
}

/// One committed write, kept for watches that start at an older resourceVersion.
struct Event {
    rv: u64,
    key: Key,
    change: Change,
    /// The object before the write (None for Added).
    old: Option<Value>,
    /// The object after the write; for Deleted, its last state with the deletion's rv.
    new: Value,
}

/// An open watch.
pub(crate) struct Watcher {
    pub res: Resource,
    pub version: &'static str,
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub meta_only: bool,
    /// A watch of kubectl's (`get -w`): each event's object is a Table of one row.
    pub table: Option<table::Include>,
    pub tx: UnboundedSender<Bytes>,
}

impl Watcher {
    /// The event type this watch sees for `e`, if any: an object that starts or stops matching
    /// the selectors is ADDED or DELETED, as the apiserver's watch cache does.
    fn sees(&self, e: &Event) -> Option<&'static str> {
        if (e.key.group, e.key.plural) != (self.res.group, self.res.plural) {
            return None;
        }
        if let Some(ns) = &self.namespace
            && &e.key.namespace != ns
        {
            return None;
        }
        let m = |v: &Value| self.labels.matches(v) && self.fields.matches(v);
        match e.change {
            Change::Added => m(&e.new).then_some("ADDED"),
            Change::Deleted => m(&e.new).then_some("DELETED"),
            Change::Modified => match (e.old.as_ref().is_some_and(m), m(&e.new)) {
                (true, true) => Some("MODIFIED"),
                (false, true) => Some("ADDED"),
                (true, false) => Some("DELETED"),
                (false, false) => None,
            },
        }
    }
}

/// Options of one write.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WriteOpts {
    pub dry_run: bool,
    /// Came through the HTTP API (status on create is dropped for custom resources with a
    /// status subresource), rather than from the test's handle.
    pub via_api: bool,
}

pub(crate) struct Store {
    pub rv: u64,
    pub resources: Vec<Resource>,
    pub converters: HashMap<(&'static str, &'static str), Converter>,
    pub objects: BTreeMap<Key, Value>,
    history: VecDeque<Event>,
    pub history_cap: usize,
    /// Every event with rv ≤ floor has been dropped from the history.
    pub history_floor: u64,
    pub watchers: Vec<Watcher>,
    pub faults: Faults<Fault>,
    pub requests: Vec<RecordedRequest>,
    pub reactors: Vec<(Resource, Reactor)>,
    react_depth: usize,
    /// See [`crate::kube::Builder::namespace_lifecycle`].
    pub namespace_lifecycle: bool,
}

/// How deep reactors may trigger each other before the store stops calling them.
const MAX_REACT_DEPTH: usize = 8;

pub(crate) fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn meta(obj: &Value, field: &str) -> Option<Value> {
    obj.get("metadata")?.get(field).cloned()
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

fn set_or_remove(map: &mut Map<String, Value>, field: &str, v: Option<Value>) {
    match v {
        Some(v) => {
            map.insert(field.to_string(), v);
        }
        None => {
            map.remove(field);
        }
    }
}

/// The part of an object whose change bumps `metadata.generation`: all but metadata (and
/// status when the status subresource is on).
fn generation_part(res: &Resource, obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        if res.status_subresource {
            m.remove("status");
        }
    }
    v
}

fn deleting_without_finalizers(obj: &Value) -> bool {
    meta(obj, "deletionTimestamp").is_some_and(|t| !t.is_null())
        && meta(obj, "finalizers")
            .and_then(|f| f.as_array().map(Vec::is_empty))
            .unwrap_or(true)
}

/// A Secret's `stringData` is folded into `data` (base64) on every write, as the apiserver does.
fn fold_string_data(res: &Resource, obj: &mut Value) {
    use base64::Engine as _;
    if !res.group.is_empty() || res.kind != "Secret" {
        return;
    }
    let Some(Value::Object(sd)) = obj.as_object_mut().and_then(|o| o.remove("stringData")) else {
        return;
    };
    if !obj.get("data").is_some_and(Value::is_object) {
        obj["data"] = json!({});
    }
    for (k, v) in sd {
        let s = v.as_str().unwrap_or_default();
        obj["data"][k] = json!(base64::engine::general_purpose::STANDARD.encode(s));
    }
}

impl Store {
    pub fn new(
        resources: Vec<Resource>,
        converters: HashMap<(&'static str, &'static str), Converter>,
        history_cap: usize,
        namespace_lifecycle: bool,
    ) -> Store {
        let mut store = Store {
            rv: 0,
            namespace_lifecycle,
            resources,
            converters,
            objects: BTreeMap::new(),
            history: VecDeque::new(),
            history_cap,
            history_floor: 0,
            watchers: Vec::new(),
            faults: Faults::default(),
            requests: Vec::new(),
            reactors: Vec::new(),
            react_depth: 0,
        };
        for ns in namespaces::SYSTEM {
            namespaces::ensure(&mut store, ns);
        }
        store
    }

    /// The registered resource named by apiVersion and kind, with the version.
    pub fn resource_for(&self, api_version: &str, kind: &str) -> Option<(Resource, &'static str)> {
        self.resources.iter().find_map(|r| {
            (r.kind == kind)
                .then(|| r.versions.iter().find(|v| r.api_version(v) == api_version))
                .flatten()
                .map(|v| (*r, *v))
        })
    }

    /// `obj` (storage version) as `version` shows it.
    pub fn in_version(&self, res: &Resource, obj: &Value, version: &str) -> Value {
        let mut v = obj.clone();
        if version != res.storage_version()
            && let Some(c) = self.converters.get(&(res.group, res.plural))
        {
            c(&mut v, res.storage_version(), version);
        }
        v["apiVersion"] = json!(res.api_version(version));
        v["kind"] = json!(res.kind);
        v
    }

    /// `obj` sent in `version`, converted to the storage version.
    pub fn to_storage(&self, res: &Resource, mut obj: Value, version: &str) -> Value {
        if version != res.storage_version()
            && let Some(c) = self.converters.get(&(res.group, res.plural))
        {
            c(&mut obj, version, res.storage_version());
        }
        obj["apiVersion"] = json!(res.api_version(res.storage_version()));
        obj["kind"] = json!(res.kind);
        obj
    }

    /// Records a write: bumps the resourceVersion, stores or removes the object, tells the
    /// watches, keeps the event in the bounded history, then runs the reactors.
    fn commit(
        &mut self,
        res: &Resource,
        key: Key,
        change: Change,
        old: Option<Value>,
        mut obj: Value,
    ) -> Value {
        self.rv += 1;
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(self.rv.to_string()));
        match change {
            Change::Deleted => {
                self.objects.remove(&key);
            }
            _ => {
                self.objects.insert(key.clone(), obj.clone());
            }
        }
        let event = Event {
            rv: self.rv,
            key: key.clone(),
            change,
            old,
            new: obj.clone(),
        };
        let mut watchers = std::mem::take(&mut self.watchers);
        watchers.retain(|w| match w.sees(&event) {
            Some(t) => w.tx.send(self.event_line(w, t, &event.new)).is_ok(),
            None => !w.tx.is_closed(),
        });
        self.watchers = watchers;
        self.history.push_back(event);
        while self.history.len() > self.history_cap {
            if let Some(e) = self.history.pop_front() {
                self.history_floor = e.rv;
            }
        }
        if change != Change::Deleted {
            self.react(res, &key);
        }
        obj
    }

    fn react(&mut self, res: &Resource, key: &Key) {
        if self.react_depth >= MAX_REACT_DEPTH {
            return;
        }
        let reactors: Vec<Reactor> = self
            .reactors
            .iter()
            .filter(|(r, _)| (r.group, r.plural) == (res.group, res.plural))
            .map(|(_, f)| f.clone())
            .collect();
        for f in reactors {
            let Some(current) = self.objects.get(key).cloned() else {
                return;
            };
            if let Some(new) = f(&current) {
                self.react_depth += 1;
                self.write_behind(res, key, |o| *o = new);
                self.react_depth -= 1;
            }
        }
    }

    /// One line of a watch stream.
    fn event_line(&self, w: &Watcher, event_type: &str, obj: &Value) -> Bytes {
        let mut o = self.in_version(&w.res, obj, w.version);
        if let Some(include) = w.table {
            o = table::of_object(&w.res, w.version, &o, include);
        } else if w.meta_only {
            o = partial_metadata(&o);
        }
        let mut line = serde_json::to_vec(&json!({ "type": event_type, "object": o }))
            .expect("JSON serializes");
        line.push(b'\n');
        Bytes::from(line)
    }

    /// Changes an object outside the API (another controller, a person): no preconditions,
    /// no status-subresource rules; identity and server-set fields are kept. A change that
    /// leaves the object as it was writes nothing. Returns the object after the change.
    pub fn write_behind(
        &mut self,
        res: &Resource,
        key: &Key,
        f: impl FnOnce(&mut Value),
    ) -> Option<Value> {
        let current = self.objects.get(key)?.clone();
        let mut new = current.clone();
        f(&mut new);
        let new = self.server_fields(res, &current, new);
        if new == current {
            return Some(current);
        }
        let change = if deleting_without_finalizers(&new) {
            Change::Deleted
        } else {
            Change::Modified
        };
        Some(self.commit(res, key.clone(), change, Some(current), new))
    }

    /// Restores what a client cannot change (identity, server-set metadata, apiVersion/kind),
    /// computes `generation`, and sets the current resourceVersion so a no-op compares equal.
    fn server_fields(&self, res: &Resource, current: &Value, mut new: Value) -> Value {
        new["apiVersion"] = json!(res.api_version(res.storage_version()));
        new["kind"] = json!(res.kind);
        fold_string_data(res, &mut new);
        let changed = generation_part(res, &new) != generation_part(res, current);
        let m = meta_mut(&mut new);
        for f in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
        ] {
            set_or_remove(m, f, meta(current, f));
        }
        let generation = meta(current, "generation")
            .and_then(|g| g.as_u64())
            .unwrap_or(1);
        m.insert(
            "generation".into(),
            json!(if changed { generation + 1 } else { generation }),
        );
        new
    }

    pub fn get(&self, res: &Resource, ns: &str, name: &str) -> Result<Value, ApiError> {
        self.objects
            .get(&Key::new(res, ns, name))
            .cloned()
            .ok_or_else(|| ApiError::not_found(res, name))
    }

    /// Objects of `res` in `ns` (all namespaces when None) that match, in key order.
    pub fn select(
        &self,
        res: &Resource,
        ns: Option<&str>,
        labels: &LabelSelector,
        fields: &FieldSelector,
    ) -> Vec<(&Key, &Value)> {
        self.select_after(res, ns, labels, fields, None)
    }

    /// [`Store::select`], from just after `after` (namespace, name): a LIST page continues
    /// there. Only `res`'s own range of the map is walked, so a page of a 5,000-object list
    /// beside 15,000 objects of other kinds costs what its kind costs.
    pub fn select_after(
        &self,
        res: &Resource,
        ns: Option<&str>,
        labels: &LabelSelector,
        fields: &FieldSelector,
        after: Option<(&str, &str)>,
    ) -> Vec<(&Key, &Value)> {
        use std::ops::Bound;
        let (after_ns, after_name) = after.unwrap_or_default();
        let start = Key {
            group: res.group,
            plural: res.plural,
            namespace: after_ns.to_owned(),
            name: after_name.to_owned(),
        };
        let from = if after.is_some() {
            Bound::Excluded(start)
        } else {
            Bound::Included(start)
        };
        self.objects
            .range((from, Bound::Unbounded))
            .take_while(|(k, _)| (k.group, k.plural) == (res.group, res.plural))
            .filter(|(k, v)| {
                ns.is_none_or(|ns| !res.namespaced || k.namespace == ns)
                    && labels.matches(v)
                    && fields.matches(v)
            })
            .collect()
    }

    pub fn create(
        &mut self,
        res: &Resource,
        version: &str,
        ns: Option<&str>,
        body: Value,
        opts: WriteOpts,
    ) -> Result<Value, ApiError> {
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request is not a JSON object",
            ));
        }
        check_type(res, version, &body)?;
        let mut obj = self.to_storage(res, body, version);
        let m = meta_mut(&mut obj);
        let mut name = m
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if name.is_empty() {
            let prefix = m
                .get("generateName")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if prefix.is_empty() {
                return Err(ApiError::invalid(
                    res,
                    "",
                    "metadata.name",
                    "FieldValueRequired",
                    "Required value: name or generateName is required",
                ));
            }
            name = format!("{prefix}{}", random_suffix());
            m.insert("name".into(), json!(name));
        }
        if res.namespaced {
            let url_ns = ns.unwrap_or_default();
            match m.get("namespace").and_then(Value::as_str) {
                Some(body_ns) if !body_ns.is_empty() && body_ns != url_ns => {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
                _ => {
                    m.insert("namespace".into(), json!(url_ns));
                }
            }
        } else {
            m.remove("namespace");
        }
        let key = Key::new(res, ns.unwrap_or_default(), &name);
        if self.objects.contains_key(&key) {
            return Err(ApiError::already_exists(res, &name));
        }
        if opts.via_api {
            namespaces::admit_create(self, res, ns.unwrap_or_default())?;
        }
        for f in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "selfLink",
        ] {
            m.remove(f);
        }
        m.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        m.insert("creationTimestamp".into(), json!(now()));
        m.insert("generation".into(), json!(1));
        if opts.via_api
            && res.custom
            && res.status_subresource
            && let Some(o) = obj.as_object_mut()
        {
            o.remove("status");
        }
        if namespaces::is_namespace(res) {
            namespaces::defaults(&mut obj);
        }
        fold_string_data(res, &mut obj);
        if opts.dry_run {
            return Ok(obj);
        }
        Ok(self.commit(res, key, Change::Added, None, obj))
    }

    /// PUT: replace the object (or only its status when `status`).
    #[allow(clippy::too_many_arguments)]
    pub fn replace(
        &mut self,
        res: &Resource,
        version: &str,
        ns: &str,
        name: &str,
        body: Value,
        status: bool,
        opts: WriteOpts,
    ) -> Result<Value, ApiError> {
        let current = self.get(res, ns, name)?;
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request is not a JSON object",
            ));
        }
        check_type(res, version, &body)?;
        if res.custom && meta_str(&body, "resourceVersion").is_empty() {
            return Err(ApiError::invalid(
                res,
                name,
                "metadata.resourceVersion",
                "FieldValueInvalid",
                "Invalid value: 0x0: must be specified for an update",
            ));
        }
        let new = self.to_storage(res, body, version);
        self.finish_update(res, ns, name, current, new, status, opts)
    }

    /// Everything an update (PUT or PATCH) does once the client's new object is known.
    #[allow(clippy::too_many_arguments)]
    pub fn finish_update(
        &mut self,
        res: &Resource,
        ns: &str,
        name: &str,
        current: Value,
        new: Value,
        status: bool,
        opts: WriteOpts,
    ) -> Result<Value, ApiError> {
        let body_name = meta_str(&new, "name");
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let body_ns = meta_str(&new, "namespace");
        if res.namespaced && !body_ns.is_empty() && body_ns != ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let rv = meta_str(&new, "resourceVersion");
        if !rv.is_empty() && rv != meta_str(&current, "resourceVersion") {
            return Err(ApiError::modified(res, name));
        }
        let uid = meta_str(&new, "uid");
        if !uid.is_empty() && uid != meta_str(&current, "uid") {
            return Err(ApiError::conflict(
                res,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta_str(&current, "uid")
                ),
            ));
        }
        let mut result = if status {
            let mut r = current.clone();
            set_or_remove(
                r.as_object_mut().expect("object"),
                "status",
                new.get("status").cloned(),
            );
            r
        } else {
            let mut n = new;
            if res.status_subresource {
                set_or_remove(
                    n.as_object_mut().expect("object"),
                    "status",
                    current.get("status").cloned(),
                );
            }
            n
        };
        result = self.server_fields(res, &current, result);
        if result == current {
            return Ok(current);
        }
        let key = Key::new(res, ns, name);
        let change = if deleting_without_finalizers(&result) {
            Change::Deleted
        } else {
            Change::Modified
        };
        if opts.dry_run {
            return Ok(result);
        }
        Ok(self.commit(res, key, change, Some(current), result))
    }

    /// DELETE: immediate unless the object has finalizers; then `deletionTimestamp` is set and
    /// the object goes when the last finalizer is removed.
    pub fn delete(
        &mut self,
        res: &Resource,
        ns: &str,
        name: &str,
        options: Option<&Value>,
        opts: WriteOpts,
    ) -> Result<Value, ApiError> {
        let current = self.get(res, ns, name)?;
        let pre = options.and_then(|o| o.get("preconditions"));
        if let Some(uid) = pre.and_then(|p| p.get("uid")).and_then(Value::as_str)
            && uid != meta_str(&current, "uid")
        {
            return Err(ApiError::conflict(
                res,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta_str(&current, "uid")
                ),
            ));
        }
        if let Some(rv) = pre
            .and_then(|p| p.get("resourceVersion"))
            .and_then(Value::as_str)
            && rv != meta_str(&current, "resourceVersion")
        {
            return Err(ApiError::conflict(
                res,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in meta: {}",
                    meta_str(&current, "resourceVersion")
                ),
            ));
        }
        let key = Key::new(res, ns, name);
        let has_finalizers = meta(&current, "finalizers")
            .and_then(|f| f.as_array().map(|a| !a.is_empty()))
            .unwrap_or(false);
        if has_finalizers {
            if meta(&current, "deletionTimestamp").is_some_and(|t| !t.is_null()) {
                return Ok(current);
            }
            let mut result = current.clone();
            let m = meta_mut(&mut result);
            m.insert("deletionTimestamp".into(), json!(now()));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            let generation = m.get("generation").and_then(Value::as_u64).unwrap_or(1);
            m.insert("generation".into(), json!(generation + 1));
            if opts.dry_run {
                return Ok(result);
            }
            return Ok(self.commit(res, key, Change::Modified, Some(current), result));
        }
        if opts.dry_run {
            return Ok(current);
        }
        Ok(self.commit(res, key, Change::Deleted, Some(current.clone()), current))
    }

    /// Removes an object at once, finalizers or not (the test's handle).
    pub fn remove(&mut self, res: &Resource, ns: &str, name: &str) -> Option<Value> {
        let key = Key::new(res, ns, name);
        let current = self.objects.get(&key)?.clone();
        Some(self.commit(res, key, Change::Deleted, Some(current.clone()), current))
    }

    /// Starts a watch: queues what it must see first (initial ADDED events, or the history
    /// after `rv`, or a 410 ERROR when `rv` is older than the history) and registers it for
    /// later writes unless it already ended.
    pub fn start_watch(
        &mut self,
        w: Watcher,
        rv: Option<&str>,
        send_initial_events: bool,
    ) -> Result<(), ApiError> {
        let initial = send_initial_events || matches!(rv, None | Some("") | Some("0"));
        if initial {
            let lines: Vec<Bytes> = self
                .select(&w.res, w.namespace.as_deref(), &w.labels, &w.fields)
                .into_iter()
                .map(|(_, v)| self.event_line(&w, "ADDED", v))
                .collect();
            for l in lines {
                let _ = w.tx.send(l);
            }
            if send_initial_events {
                let bookmark = json!({
                    "type": "BOOKMARK",
                    "object": {
                        "kind": w.res.kind,
                        "apiVersion": w.res.api_version(w.version),
                        "metadata": {
                            "resourceVersion": self.rv.to_string(),
                            "annotations": { "k8s.io/initial-events-end": "true" },
                        },
                    },
                });
                let mut line = serde_json::to_vec(&bookmark).expect("JSON serializes");
                line.push(b'\n');
                let _ = w.tx.send(Bytes::from(line));
            }
        } else {
            let from: u64 = rv.unwrap_or_default().parse().map_err(|_| {
                ApiError::bad_request(format!(
                    "invalid resource version: {}",
                    rv.unwrap_or_default()
                ))
            })?;
            if from < self.history_floor {
                let gone = ApiError::new(
                    410,
                    "Expired",
                    format!("too old resource version: {from} ({})", self.history_floor),
                    Value::Null,
                );
                let mut line =
                    serde_json::to_vec(&json!({ "type": "ERROR", "object": gone.to_status() }))
                        .expect("JSON serializes");
                line.push(b'\n');
                let _ = w.tx.send(Bytes::from(line));
                return Ok(());
            }
            let lines: Vec<Bytes> = self
                .history
                .iter()
                .filter(|e| e.rv > from)
                .filter_map(|e| w.sees(e).map(|t| self.event_line(&w, t, &e.new)))
                .collect();
            for l in lines {
                let _ = w.tx.send(l);
            }
        }
        self.watchers.push(w);
        Ok(())
    }

    /// Forgets the history: watches from any earlier resourceVersion get 410 Gone.
    pub fn compact(&mut self) {
        self.history.clear();
        self.history_floor = self.rv;
    }
}

/// `apiVersion`/`kind` sent in a body must be the request's, when present.
fn check_type(res: &Resource, version: &str, body: &Value) -> Result<(), ApiError> {
    let want = res.api_version(version);
    if let Some(got) = body.get("apiVersion").and_then(Value::as_str)
        && got != want
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({got}) does not match the expected API version ({want})"
        )));
    }
    if let Some(got) = body.get("kind").and_then(Value::as_str)
        && got != res.kind
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({got}) does not match the expected kind ({})",
            res.kind
        )));
    }
    Ok(())
}

/// Five characters like the apiserver's name generator (no vowels, no confusable digits).
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

/// `PartialObjectMetadata` of an object (kube's `get_metadata`, `list_metadata`, metadata watches).
pub(crate) fn partial_metadata(obj: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}
