//! Server-side printing: what kube-apiserver answers when a client asks for a `Table`
//! (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, as `kubectl get` does), so that
//! kubectl shows against the fake server the columns a real cluster shows.
//!
//! - Built-in kinds print as kube-apiserver's own printers do (`pkg/printers/internalversion`):
//!   Nodes, Namespaces, Events, Leases, Pods, Secrets, PodDisruptionBudgets. Every column is
//!   sent; those of priority > 0 are the ones kubectl shows only with `-o wide`.
//! - Custom resources print their CRD's `additionalPrinterColumns` for the version asked:
//!   Cluster API's Machine and BMO's BareMetalHost as their CRDs declare them (their
//!   kubebuilder `printcolumn` markers, copied below), autorepair's own kinds read from
//!   `contrib/kubernetes/remediation-crds.yaml`, and a CRD without columns gets `Age`, as the
//!   apiextensions server gives it.

use crate::kube::resource::Resource;
use serde_json::{Value, json};
use std::sync::LazyLock;

/// Whether the `Accept` header asks for a Table (any of its media ranges).
pub(crate) fn wanted(accept: &str) -> bool {
    accept.split(',').any(|range| {
        let params: Vec<&str> = range.split(';').map(str::trim).collect();
        params.contains(&"as=Table") && params.contains(&"g=meta.k8s.io")
    })
}

/// `includeObject` of a table request: what each row carries besides its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Include {
    None,
    Metadata,
    Object,
}

impl Include {
    /// The query value (`None`, `Metadata`, the default, or `Object`).
    pub(crate) fn parse(q: Option<&str>) -> Include {
        match q {
            Some("None") => Include::None,
            Some("Object") => Include::Object,
            _ => Include::Metadata,
        }
    }
}

/// A list (as the list endpoint answers it, objects in the version asked) as a Table: the
/// list's metadata (resourceVersion, continue) kept, one row per item.
pub(crate) fn of_list(res: &Resource, version: &str, list: &Value, include: Include) -> Value {
    let items = list["items"].as_array().cloned().unwrap_or_default();
    table(res, version, &items, list["metadata"].clone(), include)
}

/// One object as a Table of one row (what `kubectl get KIND NAME` receives).
pub(crate) fn of_object(res: &Resource, version: &str, obj: &Value, include: Include) -> Value {
    let rv = obj.pointer("/metadata/resourceVersion").cloned();
    let metadata = rv.map_or_else(|| json!({}), |rv| json!({ "resourceVersion": rv }));
    table(res, version, std::slice::from_ref(obj), metadata, include)
}

fn table(
    res: &Resource,
    version: &str,
    items: &[Value],
    metadata: Value,
    include: Include,
) -> Value {
    let now = jiff::Timestamp::now();
    let printer = printer(res, version);
    let rows: Vec<Value> = items
        .iter()
        .map(|o| {
            let mut row = json!({ "cells": printer.cells(o, now) });
            match include {
                Include::None => {}
                Include::Metadata => row["object"] = crate::kube::store::partial_metadata(o),
                Include::Object => row["object"] = o.clone(),
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": printer.definitions(),
        "rows": rows,
    })
}

/// How one kind prints.
enum Printer {
    /// A built-in printer: its columns (name, type, priority) and its cells, Name first.
    Builtin(&'static [(&'static str, &'static str, u32)], Cells),
    /// A CRD's printer columns (Name comes first, implied).
    Custom(Vec<CustomColumn>),
}

type Cells = fn(&Value, jiff::Timestamp) -> Vec<Value>;

impl Printer {
    fn definitions(&self) -> Vec<Value> {
        let def = |name: &str, kind: &str, format: &str, priority: u32, description: &str| {
            json!({
                "name": name,
                "type": kind,
                "format": format,
                "description": description,
                "priority": priority,
            })
        };
        match self {
            Printer::Builtin(columns, _) => columns
                .iter()
                .map(|(name, kind, priority)| {
                    let format = if *name == "Name" && *priority == 0 {
                        "name"
                    } else {
                        ""
                    };
                    def(name, kind, format, *priority, "")
                })
                .collect(),
            Printer::Custom(columns) => {
                std::iter::once(def("Name", "string", "name", 0, NAME_DESCRIPTION))
                    .chain(columns.iter().map(|c| {
                        let format = if c.format.is_empty() {
                            ""
                        } else {
                            c.format.as_str()
                        };
                        def(&c.name, &c.kind, format, c.priority, &c.description)
                    }))
                    .collect()
            }
        }
    }

    fn cells(&self, obj: &Value, now: jiff::Timestamp) -> Vec<Value> {
        match self {
            Printer::Builtin(_, cells) => cells(obj, now),
            Printer::Custom(columns) => std::iter::once(json!(name(obj)))
                .chain(columns.iter().map(|c| c.cell(obj, now)))
                .collect(),
        }
    }
}

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

fn printer(res: &Resource, version: &str) -> Printer {
    match (res.group, res.kind) {
        ("", "Node") => Printer::Builtin(NODE_COLUMNS, node_cells),
        ("", "Namespace") => Printer::Builtin(NAMESPACE_COLUMNS, namespace_cells),
        ("", "Event") => Printer::Builtin(EVENT_COLUMNS, event_cells),
        ("", "Pod") => Printer::Builtin(POD_COLUMNS, pod_cells),
        ("", "Secret") => Printer::Builtin(SECRET_COLUMNS, secret_cells),
        ("coordination.k8s.io", "Lease") => Printer::Builtin(LEASE_COLUMNS, lease_cells),
        ("policy", "PodDisruptionBudget") => Printer::Builtin(PDB_COLUMNS, pdb_cells),
        _ if !res.custom => Printer::Builtin(DEFAULT_COLUMNS, default_cells),
        _ => Printer::Custom(crd_columns(res, version)),
    }
}

// ---- Custom resources ----

/// One of a CRD version's `additionalPrinterColumns`.
#[derive(Clone, Debug)]
struct CustomColumn {
    name: String,
    kind: String,
    format: String,
    priority: u32,
    description: String,
    path: JsonPath,
}

/// Cluster API's Machine, v1beta2: the `+kubebuilder:printcolumn` markers of
/// `api/core/v1beta2/machine_types.go` (cluster-api main, 2026).
const CAPI_MACHINE_V1BETA2: &str = r#"
- {name: Cluster, type: string, jsonPath: .spec.clusterName, description: Cluster}
- {name: Node Name, type: string, jsonPath: .status.nodeRef.name, description: Node name associated with this machine}
- {name: Provider ID, type: string, jsonPath: .spec.providerID, description: Provider ID, priority: 10}
- {name: Failure domain, type: string, jsonPath: .status.failureDomain, description: The failure domain where the Machine has been scheduled}
- {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status', description: Machine pass all readiness checks}
- {name: Available, type: string, jsonPath: '.status.conditions[?(@.type=="Available")].status', description: Machine is Ready for at least MinReadySeconds}
- {name: Up-to-date, type: string, jsonPath: '.status.conditions[?(@.type=="UpToDate")].status', description: "Machine spec matches the spec of the Machine's owner resource, e.g. MachineDeployment"}
- {name: Internal-IP, type: string, jsonPath: '.status.addresses[?(@.type=="InternalIP")].address', description: Internal IP of the machine, priority: 10}
- {name: External-IP, type: string, jsonPath: '.status.addresses[?(@.type=="ExternalIP")].address', description: External IP of the machine, priority: 10}
- {name: OS-Image, type: string, jsonPath: .status.nodeInfo.osImage, description: OS Image reported by the node, priority: 10}
- {name: Paused, type: string, jsonPath: '.status.conditions[?(@.type=="Paused")].status', description: Reconciliation paused, priority: 10}
- {name: Phase, type: string, jsonPath: .status.phase, description: Machine status such as Terminating/Pending/Running/Failed etc}
- {name: Age, type: date, jsonPath: .metadata.creationTimestamp, description: Time duration since creation of Machine}
- {name: Version, type: string, jsonPath: .spec.version, description: Kubernetes version associated with this Machine}
"#;

/// Cluster API's Machine, v1beta1 (`api/core/v1beta1/machine_types.go`).
const CAPI_MACHINE_V1BETA1: &str = r#"
- {name: Cluster, type: string, jsonPath: .spec.clusterName, description: Cluster}
- {name: NodeName, type: string, jsonPath: .status.nodeRef.name, description: Node name associated with this machine}
- {name: ProviderID, type: string, jsonPath: .spec.providerID, description: Provider ID}
- {name: Phase, type: string, jsonPath: .status.phase, description: Machine status such as Terminating/Pending/Running/Failed etc}
- {name: Age, type: date, jsonPath: .metadata.creationTimestamp, description: Time duration since creation of Machine}
- {name: Version, type: string, jsonPath: .spec.version, description: Kubernetes version associated with this Machine}
"#;

/// BMO's BareMetalHost, v1alpha1 (`apis/metal3.io/v1alpha1/baremetalhost_types.go`,
/// baremetal-operator main, 2026).
const BARE_METAL_HOST_V1ALPHA1: &str = r#"
- {name: Status, type: string, jsonPath: .status.operationalStatus, description: Operational status, priority: 1}
- {name: State, type: string, jsonPath: .status.provisioning.state, description: Provisioning status}
- {name: Consumer, type: string, jsonPath: .spec.consumerRef.name, description: Consumer using this host}
- {name: BMC, type: string, jsonPath: .spec.bmc.address, description: Address of management controller, priority: 1}
- {name: Online, type: string, jsonPath: .spec.online, description: Whether the host is online or not}
- {name: Error, type: string, jsonPath: .status.errorType, description: Type of the most recent error}
- {name: Age, type: date, jsonPath: .metadata.creationTimestamp, description: Time duration since creation of BaremetalHost}
"#;

/// autorepair's CRDs, as shipped: their printer columns are read from the manifest itself.
const AUTOREPAIR_CRDS: &str = include_str!("../../../../contrib/kubernetes/remediation-crds.yaml");

/// The columns of every CRD version in `AUTOREPAIR_CRDS`, by (group, plural, version).
/// A CRD version's columns: (group, plural, version) and the columns.
type VersionColumns = ((String, String, String), Vec<CustomColumn>);

static SHIPPED: LazyLock<Vec<VersionColumns>> = LazyLock::new(|| {
    let mut out = Vec::new();
    for doc in AUTOREPAIR_CRDS.split("\n---\n") {
        let crd: Value =
            serde_yaml_ng::from_str(doc).expect("contrib/kubernetes/remediation-crds.yaml parses");
        if crd["kind"] != "CustomResourceDefinition" {
            continue;
        }
        let spec = &crd["spec"];
        let group = spec["group"].as_str().unwrap_or_default().to_string();
        let plural = spec["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        for v in spec["versions"].as_array().into_iter().flatten() {
            let version = v["name"].as_str().unwrap_or_default().to_string();
            let columns = v
                .get("additionalPrinterColumns")
                .cloned()
                .unwrap_or(json!([]));
            out.push((
                (group.clone(), plural.clone(), version),
                parse_columns(&columns),
            ));
        }
    }
    out
});

fn crd_columns(res: &Resource, version: &str) -> Vec<CustomColumn> {
    let declared = match (res.group, res.plural, version) {
        ("cluster.x-k8s.io", "machines", "v1beta2") => Some(CAPI_MACHINE_V1BETA2),
        ("cluster.x-k8s.io", "machines", "v1beta1") => Some(CAPI_MACHINE_V1BETA1),
        ("metal3.io", "baremetalhosts", "v1alpha1") => Some(BARE_METAL_HOST_V1ALPHA1),
        _ => None,
    };
    let columns = match declared {
        Some(yaml) => {
            let v: Value = serde_yaml_ng::from_str(yaml).expect("printer columns parse");
            parse_columns(&v)
        }
        None => SHIPPED
            .iter()
            .find(|((g, p, v), _)| {
                (g.as_str(), p.as_str(), v.as_str()) == (res.group, res.plural, version)
            })
            .map(|(_, c)| c.clone())
            .unwrap_or_default(),
    };
    if columns.is_empty() {
        // The apiextensions server's default for a version that declares none.
        parse_columns(&json!([{
            "name": "Age",
            "type": "date",
            "jsonPath": ".metadata.creationTimestamp",
            "description": "CreationTimestamp is a timestamp representing the server time when this object was created.",
        }]))
    } else {
        columns
    }
}

fn parse_columns(v: &Value) -> Vec<CustomColumn> {
    let text = |c: &Value, k: &str| c[k].as_str().unwrap_or_default().to_string();
    v.as_array()
        .into_iter()
        .flatten()
        .map(|c| CustomColumn {
            name: text(c, "name"),
            kind: text(c, "type"),
            format: text(c, "format"),
            priority: c["priority"].as_u64().unwrap_or(0) as u32,
            description: text(c, "description"),
            path: JsonPath::parse(&text(c, "jsonPath"))
                .unwrap_or_else(|e| panic!("printer column {}: {e}", text(c, "name"))),
        })
        .collect()
}

impl CustomColumn {
    /// As the apiextensions server's table convertor: the first result of the path, printed
    /// as text for a `string` column, typed otherwise; missing is null (kubectl: `<none>`).
    fn cell(&self, obj: &Value, now: jiff::Timestamp) -> Value {
        let Some(v) = self.path.first(obj) else {
            return Value::Null;
        };
        match (self.kind.as_str(), v) {
            ("string", Value::String(s)) => json!(s),
            ("string", other) => json!(other.to_string()),
            ("date", Value::String(s)) => s
                .parse::<jiff::Timestamp>()
                .map_or(Value::Null, |t| json!(human_since(t, now))),
            ("integer", Value::Number(n)) if n.is_i64() => v.clone(),
            ("number", Value::Number(_)) | ("boolean", Value::Bool(_)) => v.clone(),
            _ => Value::Null,
        }
    }
}

/// The JSONPath subset printer columns use: `.field`, `[N]`, `[*]` and
/// `[?(@.field=="value")]`, optionally within `{}`.
#[derive(Clone, Debug, PartialEq)]
struct JsonPath(Vec<Step>);

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Field(String),
    Index(usize),
    All,
    /// Array elements whose field path equals the string.
    Filter(Vec<String>, String),
}

/// A printer column's JSONPath outside the subset (`text` is the whole path).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum PathError {
    #[error("empty field in {text:?}")]
    EmptyField { text: String },
    #[error("unclosed [ in {text:?}")]
    Unclosed { text: String },
    #[error("filter without == in {text:?}")]
    FilterWithoutEq { text: String },
    #[error("unsupported [{inner}] in {text:?}")]
    Bracket { inner: String, text: String },
    #[error("unsupported JSONPath {text:?}")]
    Unsupported { text: String },
}

impl JsonPath {
    fn parse(text: &str) -> Result<JsonPath, PathError> {
        let whole = || text.to_owned();
        let t = text.trim();
        let t = t
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or(t);
        let mut steps = Vec::new();
        let mut rest = t;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                if end == 0 {
                    return Err(PathError::EmptyField { text: whole() });
                }
                steps.push(Step::Field(r[..end].to_string()));
                rest = &r[end..];
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = r
                    .find(']')
                    .ok_or_else(|| PathError::Unclosed { text: whole() })?;
                let inner = &r[..end];
                rest = &r[end + 1..];
                if inner == "*" {
                    steps.push(Step::All);
                } else if let Ok(i) = inner.parse() {
                    steps.push(Step::Index(i));
                } else if let Some(f) = inner.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')'))
                {
                    let (field, value) = f
                        .split_once("==")
                        .ok_or_else(|| PathError::FilterWithoutEq { text: whole() })?;
                    let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
                    let field = field.trim().split('.').map(str::to_string).collect();
                    steps.push(Step::Filter(field, value.to_string()));
                } else {
                    return Err(PathError::Bracket {
                        inner: inner.to_owned(),
                        text: whole(),
                    });
                }
            } else {
                return Err(PathError::Unsupported { text: whole() });
            }
        }
        Ok(JsonPath(steps))
    }

    fn first<'v>(&self, obj: &'v Value) -> Option<&'v Value> {
        let mut found = vec![obj];
        for step in &self.0 {
            found = found
                .into_iter()
                .flat_map(|v| -> Vec<&'v Value> {
                    match step {
                        Step::Field(f) => v.get(f).into_iter().collect(),
                        Step::Index(i) => v.get(*i).into_iter().collect(),
                        Step::All => v.as_array().map(|a| a.iter().collect()).unwrap_or_default(),
                        Step::Filter(field, want) => v
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter(|e| {
                                let got = field.iter().try_fold(*e, |x, f| x.get(f));
                                match got {
                                    Some(Value::String(s)) => s == want,
                                    Some(other) => {
                                        *other
                                            == serde_json::from_str::<Value>(want)
                                                .unwrap_or(Value::Null)
                                    }
                                    None => false,
                                }
                            })
                            .collect(),
                    }
                })
                .collect();
        }
        found.into_iter().find(|v| !v.is_null())
    }
}

// ---- Built-in printers ----

const DEFAULT_COLUMNS: &[(&str, &str, u32)] = &[("Name", "string", 0), ("Created At", "date", 0)];

/// The apiserver's default table convertor (kinds without a printer).
fn default_cells(o: &Value, _: jiff::Timestamp) -> Vec<Value> {
    vec![
        json!(name(o)),
        o.pointer("/metadata/creationTimestamp")
            .cloned()
            .unwrap_or(Value::Null),
    ]
}

const NODE_COLUMNS: &[(&str, &str, u32)] = &[
    ("Name", "string", 0),
    ("Status", "string", 0),
    ("Roles", "string", 0),
    ("Age", "string", 0),
    ("Version", "string", 0),
    ("Internal-IP", "string", 1),
    ("External-IP", "string", 1),
    ("OS-Image", "string", 1),
    ("Kernel-Version", "string", 1),
    ("Container-Runtime", "string", 1),
];

fn node_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let mut status: Vec<&str> = Vec::new();
    if let Some(ready) = conditions(o).find(|c| c["type"] == "Ready") {
        status.push(if ready["status"] == "True" {
            "Ready"
        } else {
            "NotReady"
        });
    }
    if status.is_empty() {
        status.push("Unknown");
    }
    if o.pointer("/spec/unschedulable") == Some(&json!(true)) {
        status.push("SchedulingDisabled");
    }
    // Roles: the suffix of each node-role.kubernetes.io/ label, and kubernetes.io/role.
    let mut roles: Vec<String> = Vec::new();
    for (k, v) in o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(role) = k.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.push(role.to_string());
            }
        } else if k == "kubernetes.io/role"
            && let Some(v) = v.as_str().filter(|v| !v.is_empty())
        {
            roles.push(v.to_string());
        }
    }
    roles.sort();
    roles.dedup();
    let address = |kind: &str| {
        o.pointer("/status/addresses")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|a| a["type"] == kind)
            .and_then(|a| a["address"].as_str())
            .unwrap_or("<none>")
            .to_string()
    };
    let info = |k: &str| {
        let v = str_at(o, &format!("/status/nodeInfo/{k}"));
        if v.is_empty() {
            "<unknown>".to_string()
        } else {
            v.to_string()
        }
    };
    vec![
        json!(name(o)),
        json!(status.join(",")),
        json!(if roles.is_empty() {
            "<none>".to_string()
        } else {
            roles.join(",")
        }),
        json!(age(o, now)),
        json!(str_at(o, "/status/nodeInfo/kubeletVersion")),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ]
}

const NAMESPACE_COLUMNS: &[(&str, &str, u32)] = &[
    ("Name", "string", 0),
    ("Status", "string", 0),
    ("Age", "string", 0),
];

fn namespace_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    vec![
        json!(name(o)),
        json!(str_at(o, "/status/phase")),
        json!(age(o, now)),
    ]
}

const EVENT_COLUMNS: &[(&str, &str, u32)] = &[
    ("Last Seen", "string", 0),
    ("Type", "string", 0),
    ("Reason", "string", 0),
    ("Object", "string", 0),
    ("Subobject", "string", 1),
    ("Source", "string", 1),
    ("Message", "string", 0),
    ("First Seen", "string", 1),
    ("Count", "integer", 1),
    ("Name", "string", 1),
];

fn event_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let since = |p: &str| {
        let t = str_at(o, p);
        (!t.is_empty()).then(|| since(t, now))
    };
    let first = since("/firstTimestamp")
        .or_else(|| since("/eventTime"))
        .unwrap_or_else(|| "<unknown>".into());
    let (last, count) = match o.get("series").filter(|s| s.is_object()) {
        Some(s) => (
            since("/series/lastObservedTime").unwrap_or_else(|| "<unknown>".into()),
            s["count"].as_i64().unwrap_or(0),
        ),
        None => (
            since("/lastTimestamp").unwrap_or_else(|| first.clone()),
            o["count"].as_i64().filter(|c| *c != 0).unwrap_or(1),
        ),
    };
    let kind = str_at(o, "/involvedObject/kind").to_lowercase();
    let involved = str_at(o, "/involvedObject/name");
    let object = if involved.is_empty() {
        kind
    } else {
        format!("{kind}/{involved}")
    };
    let first_non_empty = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            a.to_string()
        }
    };
    let component = first_non_empty(
        str_at(o, "/source/component"),
        str_at(o, "/reportingComponent"),
    );
    let instance = first_non_empty(str_at(o, "/source/host"), str_at(o, "/reportingInstance"));
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(str_at(o, "/type")),
        json!(str_at(o, "/reason")),
        json!(object),
        json!(str_at(o, "/involvedObject/fieldPath")),
        json!(source),
        json!(str_at(o, "/message").trim()),
        json!(first),
        json!(count),
        json!(name(o)),
    ]
}

const LEASE_COLUMNS: &[(&str, &str, u32)] = &[
    ("Name", "string", 0),
    ("Holder", "string", 0),
    ("Age", "string", 0),
];

fn lease_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    vec![
        json!(name(o)),
        json!(str_at(o, "/spec/holderIdentity")),
        json!(age(o, now)),
    ]
}

const POD_COLUMNS: &[(&str, &str, u32)] = &[
    ("Name", "string", 0),
    ("Ready", "string", 0),
    ("Status", "string", 0),
    ("Restarts", "string", 0),
    ("Age", "string", 0),
    ("IP", "string", 1),
    ("Node", "string", 1),
    ("Nominated Node", "string", 1),
    ("Readiness Gates", "string", 1),
];

/// The Pod printer's common cases: ready containers, the phase (or the reason the Pod gives,
/// `Terminating` once deleted), restarts; not the per-container waiting reasons.
fn pod_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let containers = o
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let statuses: Vec<&Value> = o
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let ready = statuses.iter().filter(|s| s["ready"] == true).count();
    let restarts: i64 = statuses
        .iter()
        .filter_map(|s| s["restartCount"].as_i64())
        .sum();
    let mut status = str_at(o, "/status/reason").to_string();
    if status.is_empty() {
        status = str_at(o, "/status/phase").to_string();
    }
    if o.pointer("/metadata/deletionTimestamp")
        .is_some_and(|d| !d.is_null())
    {
        status = "Terminating".into();
    }
    let or_none = |s: &str| {
        if s.is_empty() {
            "<none>".to_string()
        } else {
            s.to_string()
        }
    };
    vec![
        json!(name(o)),
        json!(format!("{ready}/{containers}")),
        json!(status),
        json!(restarts.to_string()),
        json!(age(o, now)),
        json!(or_none(str_at(o, "/status/podIP"))),
        json!(or_none(str_at(o, "/spec/nodeName"))),
        json!(or_none(str_at(o, "/status/nominatedNodeName"))),
        json!("<none>"),
    ]
}

const SECRET_COLUMNS: &[(&str, &str, u32)] = &[
    ("Name", "string", 0),
    ("Type", "string", 0),
    ("Data", "string", 0),
    ("Age", "string", 0),
];

fn secret_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let data = o
        .get("data")
        .and_then(Value::as_object)
        .map_or(0, |d| d.len());
    vec![
        json!(name(o)),
        json!(str_at(o, "/type")),
        json!(data),
        json!(age(o, now)),
    ]
}

const PDB_COLUMNS: &[(&str, &str, u32)] = &[
    ("Name", "string", 0),
    ("Min Available", "string", 0),
    ("Max Unavailable", "string", 0),
    ("Allowed Disruptions", "integer", 0),
    ("Age", "string", 0),
];

fn pdb_cells(o: &Value, now: jiff::Timestamp) -> Vec<Value> {
    let int_or_string = |p: &str| match o.pointer(p) {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => "N/A".to_string(),
    };
    vec![
        json!(name(o)),
        json!(int_or_string("/spec/minAvailable")),
        json!(int_or_string("/spec/maxUnavailable")),
        json!(
            o.pointer("/status/disruptionsAllowed")
                .and_then(Value::as_i64)
                .unwrap_or(0)
        ),
        json!(age(o, now)),
    ]
}

// ---- Helpers ----

fn name(o: &Value) -> &str {
    str_at(o, "/metadata/name")
}

fn str_at<'v>(o: &'v Value, pointer: &str) -> &'v str {
    o.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn conditions(o: &Value) -> impl Iterator<Item = &Value> {
    o.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The Age cell: the time since creation, `<unknown>` without one.
fn age(o: &Value, now: jiff::Timestamp) -> String {
    match str_at(o, "/metadata/creationTimestamp") {
        "" => "<unknown>".into(),
        t => since(t, now),
    }
}

fn since(timestamp: &str, now: jiff::Timestamp) -> String {
    timestamp
        .parse::<jiff::Timestamp>()
        .map_or_else(|_| "<unknown>".into(), |t| human_since(t, now))
}

fn human_since(t: jiff::Timestamp, now: jiff::Timestamp) -> String {
    let nanos = now.as_nanosecond() - t.as_nanosecond();
    human_duration(i64::try_from(nanos.div_euclid(1_000_000_000)).unwrap_or(i64::MAX))
}

/// apimachinery's `duration.HumanDuration`, on whole seconds: precise while short, coarser as
/// it grows (`45s`, `3m20s`, `15m`, `5h10m`, `20h`, `3d4h`, `25d`, `2y30d`, `9y`).
pub(crate) fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{}d", hours / 24),
            h => format!("{}d{h}h", hours / 24),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        return match (hours / 24) % 365 {
            0 => format!("{}y", hours / 24 / 365),
            d => format!("{}y{d}d", hours / 24 / 365),
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_kubectl_shows_them() {
        for (seconds, shown) in [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (200, "3m20s"),
            (599, "9m59s"),
            (600, "10m"),
            (3 * 3600 - 1, "179m"),
            (3 * 3600, "3h"),
            (5 * 3600 + 600, "5h10m"),
            (8 * 3600, "8h"),
            (47 * 3600 + 3599, "47h"),
            (48 * 3600, "2d"),
            (3 * 86400 + 4 * 3600, "3d4h"),
            (25 * 86400 + 3600, "25d"),
            (2 * 365 * 86400 + 30 * 86400, "2y30d"),
            (9 * 365 * 86400, "9y"),
        ] {
            assert_eq!(human_duration(seconds), shown, "{seconds} s");
        }
    }

    #[test]
    fn printer_column_paths_find_what_kubectl_would() {
        let m = json!({
            "spec": {"online": true, "bmc": {"address": "redfish://10.0.0.1"}},
            "status": {
                "conditions": [
                    {"type": "Available", "status": "False"},
                    {"type": "Ready", "status": "True"},
                ],
                "addresses": [{"type": "InternalIP", "address": "10.1.0.5"}],
            },
        });
        for (path, want) in [
            (".spec.online", Some(json!(true))),
            ("{.spec.bmc.address}", Some(json!("redfish://10.0.0.1"))),
            (
                r#".status.conditions[?(@.type=="Ready")].status"#,
                Some(json!("True")),
            ),
            (".status.conditions[0].type", Some(json!("Available"))),
            (".status.conditions[*].status", Some(json!("False"))),
            (
                r#".status.addresses[?(@.type=="ExternalIP")].address"#,
                None,
            ),
            (".status.phase", None),
        ] {
            let p = JsonPath::parse(path).unwrap();
            assert_eq!(p.first(&m).cloned(), want, "{path}");
        }
        for (path, want) in [
            (
                ".a[?(@.x>1)]",
                PathError::FilterWithoutEq {
                    text: ".a[?(@.x>1)]".into(),
                },
            ),
            (
                ".a..b",
                PathError::EmptyField {
                    text: ".a..b".into(),
                },
            ),
            (
                ".a[0",
                PathError::Unclosed {
                    text: ".a[0".into(),
                },
            ),
            (
                ".a[x]",
                PathError::Bracket {
                    inner: "x".into(),
                    text: ".a[x]".into(),
                },
            ),
            ("a", PathError::Unsupported { text: "a".into() }),
        ] {
            assert_eq!(JsonPath::parse(path), Err(want), "{path}");
        }
    }

    #[test]
    fn the_shipped_crds_columns_are_read_from_the_manifest() {
        let res = crate::kube::resource::AUTOREPAIR_REMEDIATION;
        let names: Vec<String> = crd_columns(&res, "v1alpha1")
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["Phase", "Reason", "Age"]);
        // A CRD that declares none prints its age, as the apiextensions server does.
        let template = crate::kube::resource::AUTOREPAIR_REMEDIATION_TEMPLATE;
        let names: Vec<String> = crd_columns(&template, "v1alpha1")
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["Age"]);
    }

    #[test]
    fn a_custom_column_prints_text_typed_or_null_as_the_apiextensions_server() {
        let now: jiff::Timestamp = "2026-11-26T12:00:00Z".parse().unwrap();
        let cells = Printer::Custom(crd_columns(
            &crate::kube::resource::BARE_METAL_HOST,
            "v1alpha1",
        ))
        .cells(
            &json!({
                "metadata": {"name": "h1", "creationTimestamp": "2026-11-01T08:00:00Z"},
                "spec": {"online": true, "bmc": {"address": "ipmi://10.0.0.9"}},
                "status": {"operationalStatus": "OK", "provisioning": {"state": "provisioned"}},
            }),
            now,
        );
        assert_eq!(
            cells,
            [
                json!("h1"),
                json!("OK"),
                json!("provisioned"),
                Value::Null,
                json!("ipmi://10.0.0.9"),
                json!("true"),
                Value::Null,
                json!("25d"),
            ]
        );
    }

    #[test]
    fn a_node_prints_its_readiness_cordon_and_roles() {
        let now = jiff::Timestamp::now();
        let node = |labels: Value, ready: Option<&str>, unschedulable: bool| {
            let conditions: Vec<Value> = ready
                .map(|s| json!({"type": "Ready", "status": s}))
                .into_iter()
                .collect();
            json!({
                "metadata": {"name": "n1", "labels": labels},
                "spec": {"unschedulable": unschedulable},
                "status": {"conditions": conditions, "nodeInfo": {"kubeletVersion": "v1.34.1"}},
            })
        };
        for (n, status, roles) in [
            (node(json!({}), Some("True"), false), "Ready", "<none>"),
            (
                node(
                    json!({"node-role.kubernetes.io/control-plane": ""}),
                    Some("False"),
                    false,
                ),
                "NotReady",
                "control-plane",
            ),
            (
                node(
                    json!({"kubernetes.io/role": "worker", "node-role.kubernetes.io/gpu": ""}),
                    Some("Unknown"),
                    true,
                ),
                "NotReady,SchedulingDisabled",
                "gpu,worker",
            ),
            (
                node(json!({}), None, true),
                "Unknown,SchedulingDisabled",
                "<none>",
            ),
        ] {
            let cells = node_cells(&n, now);
            assert_eq!(
                (cells[1].as_str().unwrap(), cells[2].as_str().unwrap()),
                (status, roles),
                "{n}"
            );
            assert_eq!(cells[4], "v1.34.1");
            assert_eq!(cells[5], "<none>");
            assert_eq!(cells.len(), NODE_COLUMNS.len());
        }
    }

    #[test]
    fn table_requests_are_recognised_by_their_media_type() {
        assert!(wanted(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
        ));
        assert!(!wanted(
            "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
        ));
        assert!(!wanted("application/json"));
    }
}
