//! Decoding: RAPI's JSON answers (instances, nodes, groups, jobs) into the snapshot's types.

use super::*;

pub(super) fn job_id(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The repair operation a Ganeti job performs, from its opcodes.
pub(super) fn op_of(ops: &[Value]) -> Option<Op> {
    let ids: Vec<&str> = ops
        .iter()
        .filter_map(|o| o.get("OP_ID")?.as_str())
        .collect();
    let has = |id: &str| ids.contains(&id);
    // The reinstall resource submits SHUTDOWN, REINSTALL (and STARTUP) in one job.
    Some(if has("OP_INSTANCE_REINSTALL") {
        Op::Reinstall
    } else if has("OP_INSTANCE_RECREATE_DISKS") {
        Op::RecreateDisks {
            nodes: vec![],
            iallocator: None,
        }
    } else if has("OP_INSTANCE_REPLACE_DISKS") {
        Op::ReplaceDisks {
            remote_node: None,
            iallocator: None,
        }
    } else if has("OP_INSTANCE_MIGRATE") {
        Op::Migrate {
            target_node: None,
            iallocator: None,
            allow_failover: false,
        }
    } else if has("OP_INSTANCE_FAILOVER") {
        Op::Failover {
            target_node: None,
            iallocator: None,
        }
    } else if has("OP_INSTANCE_MOVE") {
        Op::Move {
            target_node: String::new(),
        }
    } else {
        return None;
    })
}

/// A job as `GET /2/jobs?bulk=1` or `GET /2/jobs/ID` answers it; `None` for an unknown job
/// (Ganeti answers 200 with every field null).
pub(super) fn job_from_rapi(v: &Value) -> Option<Job> {
    let id = job_id(v.get("id")?)?;
    let status = v
        .get("status")
        .and_then(|s| serde_json::from_value::<JobStatus>(s.clone()).ok());
    let ops: Vec<Value> = v
        .get("ops")
        .and_then(|o| o.as_array())
        .cloned()
        .unwrap_or_default();
    let reason = ops
        .iter()
        .filter_map(|o| o.get("reason")?.as_array())
        .flatten()
        .filter_map(|entry| entry.get(1)?.as_str())
        .find(|text| text.starts_with(crate::ganeti::snapshot::REASON_PREFIX))
        .map(str::to_owned);
    let instance = ops
        .first()
        .and_then(|o| {
            o.get("instance_name")
                .or_else(|| (o.get("kind")? == "instance").then(|| o.get("name"))?)
        })
        .and_then(|n| n.as_str())
        .map(str::to_owned);
    let end_ts = v
        .get("end_ts")
        .and_then(|t| t.get(0))
        .and_then(|s| s.as_i64());
    Some(Job {
        id,
        status,
        opresult: v.get("opresult").cloned().unwrap_or(Value::Null),
        reason,
        instance,
        op: op_of(&ops),
        depends: vec![],
        end_ts,
        passes_left: None,
        other: Default::default(),
        op_other: Default::default(),
    })
}

/// Ganeti 3.0 drops the reason trail of reinstall jobs. A reinstall of an instance submitted
/// after the watcher's recreate-disks on it belongs to that repair: without this a pass that
/// died between submitting the reinstall and recording it would submit it again.
pub(super) fn attribute_reinstalls(jobs: &mut [Job]) {
    let recreates: Vec<(u64, String, String)> = jobs
        .iter()
        .filter(|j| j.op.as_ref().map(Op::kind) == Some(OpKind::RecreateDisks))
        .filter_map(|j| Some((j.id, j.instance.clone()?, j.reason.clone()?)))
        .collect();
    for j in jobs.iter_mut() {
        if j.reason.is_some() || j.op.as_ref().map(Op::kind) != Some(OpKind::Reinstall) {
            continue;
        }
        j.reason = recreates
            .iter()
            .filter(|(id, inst, _)| *id < j.id && Some(inst) == j.instance.as_ref())
            .max_by_key(|(id, ..)| *id)
            .map(|(_, _, reason)| reason.clone());
    }
}

/// `{"fields":[…],"data":[[[status, value], …], …]}` from the query resource.
#[derive(Deserialize)]
pub(super) struct QueryResult {
    fields: Vec<Value>,
    data: Vec<Vec<(i64, Value)>>,
}

pub(super) fn str_field(v: &Value, key: &str, what: &str) -> Result<String, BackendError> {
    v.get(key)
        .and_then(|x| x.as_str())
        .map(str::to_owned)
        .ok_or_else(|| api(format!("{what}: missing or non-text {key:?}")))
}

pub(super) fn tag_list(v: &Value) -> Vec<String> {
    v.get("tags")
        .and_then(|t| t.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The instance fields read through the query resource: only cheap ones. Ganeti 3.0 computes
/// `pnode` and `snodes` in quadratic time (135 s at 5,000 instances on the testbed), so
/// placement comes from the nodes' lists.
pub(super) const QUERY_FIELDS: [&str; 4] = ["name", "tags", "admin_state", "disk_template"];

/// The node fields the planner uses, with the instance lists that give placement.
pub(super) const NODE_FIELDS: [&str; 9] = [
    "name",
    "offline",
    "drained",
    "vm_capable",
    "group.uuid",
    "tags",
    "pinst_list",
    "sinst_list",
    "mtime",
];

pub(super) fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(|t| t.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The rows of a query-resource answer, each value without its status (a field Ganeti could
/// not compute is null with a non-zero status).
pub(super) fn query_rows(
    q: Value,
    asked: &[&str],
    path: &str,
) -> Result<Vec<Vec<Value>>, BackendError> {
    let what = format!("GET {path}");
    let fields = asked.len();
    let q: QueryResult =
        serde_json::from_value(q).map_err(|e| api(format!("{what}: unexpected shape: {e}")))?;
    if q.fields.len() != fields {
        return Err(api(format!(
            "{what}: the answer has other fields than asked for"
        )));
    }
    q.data
        .into_iter()
        .map(|row| {
            if row.len() != fields {
                return Err(api(format!("{what}: a row without the fields asked for")));
            }
            Ok(row.into_iter().map(|(_, v)| v).collect())
        })
        .collect()
}

/// Instances from the rows of `QUERY_FIELDS`, with the run status from `name,status` rows.
pub(super) fn instances_from_query(
    rows: Vec<Vec<Value>>,
    status: Option<Vec<Vec<Value>>>,
) -> Result<Vec<Instance>, BackendError> {
    let mut status: HashMap<String, String> = status
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| match <[Value; 2]>::try_from(r) {
            Ok([Value::String(name), Value::String(status)]) => Some((name, status)),
            _ => None,
        })
        .collect();
    Ok(rows
        .into_iter()
        .filter_map(|row| <[Value; 4]>::try_from(row).ok())
        .map(|[name, tags, admin, template]| {
            let name = name.as_str().unwrap_or_default().to_owned();
            Instance {
                pnode: String::new(),
                snodes: vec![],
                disk_template: template.as_str().unwrap_or_default().to_owned(),
                admin_state: admin.as_str().unwrap_or("up").to_owned(),
                status: status.remove(&name).unwrap_or_default(),
                tags: strings(Some(&tags)),
                name,
                other: Default::default(),
            }
        })
        .collect())
}

/// Objects of `GET /2/instances?bulk=1`, the read for users without the `read` option.
pub(super) fn instances_from_bulk(v: Value) -> Result<Vec<Instance>, BackendError> {
    let what = "GET /2/instances?bulk=1";
    v.as_array()
        .ok_or_else(|| api(format!("{what}: expected a list")))?
        .iter()
        .map(|i| {
            let text = |k: &str| i.get(k).and_then(|x| x.as_str()).map(str::to_owned);
            Ok(Instance {
                name: str_field(i, "name", what)?,
                pnode: text("pnode").unwrap_or_default(),
                snodes: strings(i.get("snodes")),
                disk_template: text("disk_template").unwrap_or_default(),
                admin_state: text("admin_state").unwrap_or_else(|| "up".into()),
                status: text("status").unwrap_or_default(),
                tags: tag_list(i),
                other: Default::default(),
            })
        })
        .collect()
}

pub(super) fn groups_from(v: Value) -> Result<Vec<Group>, BackendError> {
    v.as_array()
        .ok_or_else(|| api("GET /2/groups?bulk=1: expected a list"))?
        .iter()
        .map(|g| {
            Ok(Group {
                name: str_field(g, "name", "a group")?,
                uuid: str_field(g, "uuid", "a group")?,
                tags: tag_list(g),
                other: Default::default(),
            })
        })
        .collect()
}

/// Nodes, and where each instance runs: `pinst_list`/`sinst_list` are cheap where the
/// instances' own `pnode`/`snodes` are not.
pub(super) type Placement = HashMap<String, (String, Vec<String>)>;

pub(super) fn nodes_from(v: Value, what: &str) -> Result<(Vec<Node>, Placement), BackendError> {
    let list = v
        .as_array()
        .ok_or_else(|| api(format!("{what}: expected a list")))?;
    let mut placement: Placement = HashMap::new();
    let mut nodes = Vec::with_capacity(list.len());
    for n in list {
        let name = str_field(n, "name", "a node")?;
        for i in strings(n.get("pinst_list")) {
            placement.entry(i).or_default().0 = name.clone();
        }
        for i in strings(n.get("sinst_list")) {
            placement.entry(i).or_default().1.push(name.clone());
        }
        let flag =
            |key: &str, default: bool| n.get(key).and_then(|b| b.as_bool()).unwrap_or(default);
        nodes.push(Node {
            offline: flag("offline", false),
            drained: flag("drained", false),
            vm_capable: flag("vm_capable", true),
            group_uuid: str_field(n, "group.uuid", &format!("node {name}"))?,
            tags: tag_list(n),
            mtime: n.get("mtime").and_then(Value::as_f64),
            name,
            other: Default::default(),
        });
    }
    Ok((nodes, placement))
}
