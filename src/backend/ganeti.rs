//! Ganeti RAPI backend (reqwest, blocking). Works from any host that reaches the RAPI port.
//!
//! A snapshot costs a constant number of requests whatever the cluster size: cluster info,
//! groups, nodes (which carry instance placement cheaply: `pinst_list`/`sinst_list`),
//! instances through the query resource with only cheap fields (Ganeti 3.0 computes `pnode`
//! and `snodes` of instances in quadratic time), the job list, plus one request per job that a
//! pending tag names or that failed and must be judged.

use super::{Backend, BackendError};
use crate::snapshot::{
    Cluster, Group, Instance, Job, JobStatus, Node, ObjectRef, Op, OpKind, Snapshot,
};
use reqwest::blocking::{Client, RequestBuilder, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// How to reach and trust a RAPI endpoint. The password is only ever held in memory.
pub struct Endpoint {
    /// e.g. `https://cluster.example.org:5080`
    pub url: String,
    pub user: String,
    pub password: String,
    /// PEM file with the server's certificate (Ganeti's `rapi.pem`) or a CA.
    pub ca_file: Option<std::path::PathBuf>,
    /// Skip certificate verification entirely.
    pub insecure: bool,
    pub timeout: Duration,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password", &"<hidden>")
            .field("ca_file", &self.ca_file)
            .field("insecure", &self.insecure)
            .finish()
    }
}

pub struct Rapi {
    client: Client,
    base: String,
    user: String,
    password: String,
    /// Last tag job per object in this pass: later writes on the object depend on it, so
    /// Ganeti applies them in the order the executor made them without the pass waiting.
    last_tag_job: HashMap<ObjectRef, u64>,
    retries: u32,
}

fn api(message: impl Into<String>) -> BackendError {
    BackendError::Api(message.into())
}

impl Rapi {
    pub fn connect(endpoint: &Endpoint) -> Result<Rapi, BackendError> {
        let url = endpoint.url.trim_end_matches('/').to_owned();
        if !url.starts_with("https://") {
            return Err(api(format!(
                "RAPI URL {url:?} must start with https:// (Ganeti's RAPI speaks only HTTPS)"
            )));
        }
        let mut builder = Client::builder()
            .timeout(endpoint.timeout)
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("autorepair/", env!("CARGO_PKG_VERSION")));
        if endpoint.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        } else if let Some(ca) = &endpoint.ca_file {
            builder = builder.use_preconfigured_tls(tls::pinned_config(ca)?);
        }
        let client = builder
            .build()
            .map_err(|e| api(format!("cannot set up the HTTPS client: {e}")))?;
        Ok(Rapi {
            client,
            base: url,
            user: endpoint.user.clone(),
            password: endpoint.password.clone(),
            last_tag_job: HashMap::new(),
            retries: 3,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends a request. Reads are retried with backoff on connection errors, timeouts and 5xx;
    /// writes only when the connection failed before anything was sent, since a write that
    /// reached Ganeti may have created a job already.
    fn send(
        &self,
        what: &str,
        idempotent: bool,
        make: impl Fn() -> RequestBuilder,
    ) -> Result<Response, BackendError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = make().basic_auth(&self.user, Some(&self.password)).send();
            let retry_after = Duration::from_millis(500 * (1 << (attempt - 1)));
            match result {
                Ok(resp)
                    if resp.status().is_server_error() && idempotent && attempt <= self.retries =>
                {
                    tracing::warn!(%what, status = %resp.status(), attempt, "RAPI server error; retrying");
                }
                Ok(resp) => return check_status(what, resp),
                Err(e)
                    if attempt <= self.retries
                        && (e.is_connect() || (idempotent && e.is_timeout())) =>
                {
                    tracing::warn!(%what, error = %e, attempt, "RAPI unreachable; retrying");
                }
                Err(e) => {
                    return Err(api(format!(
                        "{what}: {}: {e}",
                        if e.is_timeout() {
                            "timed out"
                        } else {
                            "request failed"
                        }
                    )));
                }
            }
            std::thread::sleep(retry_after);
        }
    }

    fn get(&self, path: &str) -> Result<Value, BackendError> {
        let what = format!("GET {path}");
        let resp = self.send(&what, true, || self.client.get(self.url(path)))?;
        resp.json().map_err(|e| {
            api(format!(
                "{what}: the answer is not the JSON Ganeti sends: {e}"
            ))
        })
    }

    /// A write that starts a job; returns the job id.
    fn write(
        &self,
        method: reqwest::Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<u64, BackendError> {
        let what = format!("{method} {path}");
        let resp = self.send(&what, false, || {
            let req = self
                .client
                .request(method.clone(), self.url(path))
                .query(query);
            match body {
                Some(b) => req.json(b),
                None => req,
            }
        })?;
        let v: Value = resp.json().map_err(|e| {
            api(format!(
                "{what}: expected a job id, got something else: {e}"
            ))
        })?;
        job_id(&v).ok_or_else(|| api(format!("{what}: expected a job id, got {v}")))
    }

    fn object_path(object: &ObjectRef) -> String {
        let enc = |s: &str| s.replace('/', "%2F");
        match object {
            ObjectRef::Cluster => "/2/tags".into(),
            ObjectRef::Group(n) => format!("/2/groups/{}/tags", enc(n)),
            ObjectRef::Node(n) => format!("/2/nodes/{}/tags", enc(n)),
            ObjectRef::Instance(n) => format!("/2/instances/{}/tags", enc(n)),
        }
    }

    fn tags(
        &mut self,
        method: reqwest::Method,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        let mut query: Vec<(&str, &str)> = tags.iter().map(|t| ("tag", t.as_str())).collect();
        let reason = ganeti_reason(reason);
        query.push(("reason", &reason));
        let body = self
            .last_tag_job
            .get(object)
            .map(|j| json!({ "depends": [[j, ["success"]]] }));
        let path = Self::object_path(object);
        let job = self
            .write(method, &path, &query, body.as_ref())
            .map_err(|e| match e {
                BackendError::Api(m) if m.contains("not found") || m.contains("unknown_entity") => {
                    BackendError::NoSuchObject {
                        object: object.clone(),
                    }
                }
                other => other,
            })?;
        self.last_tag_job.insert(object.clone(), job);
        Ok(())
    }

    /// Every job the watcher may need to judge: the recent ones (with their reason trails) and
    /// each one a pending tag names, even if archived.
    fn jobs(&self, instances: &[Instance]) -> Result<Vec<Job>, BackendError> {
        let listed = self.get("/2/jobs?bulk=1")?;
        let listed = listed
            .as_array()
            .ok_or_else(|| api("GET /2/jobs?bulk=1: expected a list"))?;
        let mut jobs: Vec<Job> = listed.iter().filter_map(job_from_rapi).collect();
        attribute_reinstalls(&mut jobs);
        // The job list has no results: fetch them for our failed jobs, and fetch every job a
        // pending tag names (archived jobs are not in the list).
        let mut wanted: Vec<u64> = jobs
            .iter()
            .filter(|j| j.repair_id().is_some() && j.status == Some(JobStatus::Error))
            .map(|j| j.id)
            .collect();
        for i in instances {
            for t in &i.tags {
                if let Ok(crate::tags::Tag::Pending(p)) = crate::tags::parse(t) {
                    wanted.extend(p.jobs.iter());
                }
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        for id in wanted {
            let full = self.get(&format!("/2/jobs/{id}"))?;
            let job = job_from_rapi(&full).unwrap_or(Job {
                id,
                ..Job::default()
            });
            match jobs.iter_mut().find(|j| j.id == id) {
                // The listed one knows its (attributed) reason; the full one its results.
                Some(known) => {
                    known.opresult = job.opresult;
                    known.status = job.status;
                    known.end_ts = job.end_ts.or(known.end_ts);
                }
                None => jobs.push(job),
            }
        }
        attribute_reinstalls(&mut jobs);
        Ok(jobs)
    }
}

/// Ganeti's reason trail takes free text; the watcher's own form is `autorepair:<repair id>`.
fn ganeti_reason(reason: &str) -> String {
    if reason.starts_with(crate::snapshot::REASON_PREFIX) {
        reason.to_owned()
    } else {
        format!("autorepair: {reason}")
    }
}

fn check_status(what: &str, resp: Response) -> Result<Response, BackendError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    let body = resp.text().unwrap_or_default();
    let detail = serde_json::from_str::<Value>(&body)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or(body);
    Err(api(match status.as_u16() {
        401 => format!(
            "{what}: RAPI refused the credentials (401): check the RAPI user and its password file"
        ),
        403 => format!(
            "{what}: the RAPI user may not do this (403): give it write access (\"USER PASSWORD write\" in /var/lib/ganeti/rapi/users)"
        ),
        // Ganeti answers 500, not 404, for the tags of an unknown object.
        _ => format!("{what}: HTTP {status}: {detail}"),
    }))
}

fn job_id(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The repair operation a Ganeti job performs, from its opcodes.
fn op_of(ops: &[Value]) -> Option<Op> {
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
fn job_from_rapi(v: &Value) -> Option<Job> {
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
        .find(|text| text.starts_with(crate::snapshot::REASON_PREFIX))
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
    })
}

/// Ganeti 3.0 drops the reason trail of reinstall jobs. A reinstall of an instance submitted
/// after the watcher's recreate-disks on it belongs to that repair: without this a pass that
/// died between submitting the reinstall and recording it would submit it again.
fn attribute_reinstalls(jobs: &mut [Job]) {
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
struct QueryResult {
    fields: Vec<Value>,
    data: Vec<Vec<(i64, Value)>>,
}

fn str_field(v: &Value, key: &str, what: &str) -> Result<String, BackendError> {
    v.get(key)
        .and_then(|x| x.as_str())
        .map(str::to_owned)
        .ok_or_else(|| api(format!("{what}: missing or non-text {key:?}")))
}

fn tag_list(v: &Value) -> Vec<String> {
    v.get("tags")
        .and_then(|t| t.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

impl Backend for Rapi {
    fn snapshot(&mut self) -> Result<Snapshot, BackendError> {
        self.last_tag_job.clear();
        let info = self.get("/2/info")?;
        let cluster = Cluster {
            name: str_field(&info, "name", "GET /2/info")?,
            tags: tag_list(&info),
        };
        let groups_v = self.get("/2/groups?bulk=1")?;
        let groups = groups_v
            .as_array()
            .ok_or_else(|| api("GET /2/groups?bulk=1: expected a list"))?
            .iter()
            .map(|g| {
                Ok(Group {
                    name: str_field(g, "name", "a group")?,
                    uuid: str_field(g, "uuid", "a group")?,
                    tags: tag_list(g),
                })
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        let nodes_v = self.get("/2/nodes?bulk=1")?;
        let nodes_v = nodes_v
            .as_array()
            .ok_or_else(|| api("GET /2/nodes?bulk=1: expected a list"))?;
        let mut pnode: HashMap<String, String> = HashMap::new();
        let mut snodes: HashMap<String, Vec<String>> = HashMap::new();
        let mut nodes = Vec::with_capacity(nodes_v.len());
        for n in nodes_v {
            let name = str_field(n, "name", "a node")?;
            let list = |key: &str| -> Vec<String> {
                n.get(key)
                    .and_then(|l| l.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            for i in list("pinst_list") {
                pnode.insert(i, name.clone());
            }
            for i in list("sinst_list") {
                snodes.entry(i).or_default().push(name.clone());
            }
            let flag =
                |key: &str, default: bool| n.get(key).and_then(|b| b.as_bool()).unwrap_or(default);
            nodes.push(Node {
                offline: flag("offline", false),
                drained: flag("drained", false),
                vm_capable: flag("vm_capable", true),
                group_uuid: str_field(n, "group.uuid", &format!("node {name}"))?,
                tags: tag_list(n),
                name,
            });
        }
        let fields = ["name", "tags", "admin_state", "disk_template"];
        let q: Value = self.get(&format!("/2/query/instance?fields={}", fields.join(",")))?;
        let q: QueryResult = serde_json::from_value(q)
            .map_err(|e| api(format!("GET /2/query/instance: unexpected shape: {e}")))?;
        if q.fields.len() != fields.len() {
            return Err(api(
                "GET /2/query/instance: the answer has other fields than asked for",
            ));
        }
        let mut instances = Vec::with_capacity(q.data.len());
        for row in q.data {
            let [(_, name), (_, tags), (_, admin), (_, template)] =
                <[(i64, Value); 4]>::try_from(row).map_err(|_| {
                    api("GET /2/query/instance: a row without the four fields asked for")
                })?;
            let name = name.as_str().unwrap_or_default().to_owned();
            instances.push(Instance {
                pnode: pnode.get(&name).cloned().unwrap_or_default(),
                snodes: snodes.remove(&name).unwrap_or_default(),
                disk_template: template.as_str().unwrap_or_default().to_owned(),
                admin_state: admin.as_str().unwrap_or("up").to_owned(),
                status: String::new(),
                tags: tags
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
                name,
            });
        }
        let jobs = self.jobs(&instances)?;
        Ok(Snapshot {
            cluster,
            groups,
            nodes,
            instances,
            jobs,
            simulation: Default::default(),
        })
    }

    fn add_tags(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        self.tags(reqwest::Method::PUT, object, tags, reason)
    }

    fn remove_tags(
        &mut self,
        object: &ObjectRef,
        tags: &[String],
        reason: &str,
    ) -> Result<(), BackendError> {
        self.tags(reqwest::Method::DELETE, object, tags, reason)
    }

    fn submit(
        &mut self,
        instance: &str,
        op: &Op,
        reason: &str,
        after: Option<u64>,
    ) -> Result<u64, BackendError> {
        let object = ObjectRef::Instance(instance.to_owned());
        let depends = after.or_else(|| self.last_tag_job.get(&object).copied());
        let base = format!("/2/instances/{}", instance.replace('/', "%2F"));
        let place = |node: &Option<String>, key: &str, alloc: &Option<String>| {
            let mut m = serde_json::Map::new();
            if let Some(n) = node {
                m.insert(key.into(), json!(n));
            } else if let Some(a) = alloc {
                m.insert("iallocator".into(), json!(a));
            }
            m
        };
        let (method, path, mut body) = match op {
            Op::Failover {
                target_node,
                iallocator,
            } => {
                let mut b = place(target_node, "target_node", iallocator);
                b.insert("ignore_consistency".into(), json!(false));
                b.insert("shutdown_timeout".into(), json!(120));
                (reqwest::Method::PUT, "failover", b)
            }
            Op::Migrate {
                target_node,
                iallocator,
                allow_failover,
            } => {
                let mut b = place(target_node, "target_node", iallocator);
                b.insert("mode".into(), json!("live"));
                b.insert("allow_failover".into(), json!(allow_failover));
                (reqwest::Method::PUT, "migrate", b)
            }
            Op::ReplaceDisks {
                remote_node,
                iallocator,
            } => {
                let mut b = place(remote_node, "remote_node", iallocator);
                b.insert("mode".into(), json!("replace_new_secondary"));
                (reqwest::Method::POST, "replace-disks", b)
            }
            Op::RecreateDisks { nodes, iallocator } => {
                let mut b = serde_json::Map::new();
                if nodes.is_empty() {
                    if let Some(a) = iallocator {
                        b.insert("iallocator".into(), json!(a));
                    }
                } else {
                    b.insert("nodes".into(), json!(nodes));
                }
                (reqwest::Method::POST, "recreate-disks", b)
            }
            Op::Reinstall => {
                // Ganeti 3.0's reinstall takes neither a reason nor depends (a body next to
                // ?reason= is refused), so the executor never chains it: it runs on a later
                // pass, once the recreate-disks before it succeeded.
                let path = format!("{base}/reinstall");
                return self.write(reqwest::Method::POST, &path, &[], None);
            }
            Op::Move { .. } => {
                return Err(api(format!(
                    "{instance}: Ganeti's RAPI has no instance move: run gnt-instance move on the master"
                )));
            }
        };
        if let Some(d) = depends {
            body.insert("depends".into(), json!([[d, ["success"]]]));
        }
        let path = format!("{base}/{path}");
        self.write(
            method,
            &path,
            &[("reason", reason)],
            Some(&Value::Object(body)),
        )
    }

    fn can_follow(&self, op: &Op) -> bool {
        op.kind() != OpKind::Reinstall
    }

    fn supports(&self, kind: OpKind) -> bool {
        kind != OpKind::Move
    }
}

mod tls {
    //! Trust for Ganeti's self-signed RAPI certificate. Ganeti 3.0 generates an X.509 v1
    //! certificate without subjectAltName, which WebPKI validation (rustls) rejects whatever
    //! the name. So the certificate in the CA file is *pinned*: a server presenting exactly that
    //! certificate is accepted (the handshake signature still proves it holds its key);
    //! anything else must pass normal validation with the file's certificates as roots.

    use super::{BackendError, api};
    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls::{DigitallySignedStruct, Error, SignatureScheme};
    use std::path::Path;
    use std::sync::Arc;

    #[derive(Debug)]
    struct Pinned {
        pinned: Vec<CertificateDer<'static>>,
        /// Normal validation against the file's certificates, when any can be a root.
        fallback: Option<Arc<dyn ServerCertVerifier>>,
        provider: Arc<CryptoProvider>,
    }

    impl ServerCertVerifier for Pinned {
        fn verify_server_cert(
            &self,
            end_entity: &CertificateDer<'_>,
            intermediates: &[CertificateDer<'_>],
            server_name: &ServerName<'_>,
            ocsp: &[u8],
            now: UnixTime,
        ) -> Result<ServerCertVerified, Error> {
            if self
                .pinned
                .iter()
                .any(|p| p.as_ref() == end_entity.as_ref())
            {
                return Ok(ServerCertVerified::assertion());
            }
            match &self.fallback {
                Some(f) => f.verify_server_cert(end_entity, intermediates, server_name, ocsp, now),
                None => Err(Error::InvalidCertificate(
                    rustls::CertificateError::UnknownIssuer,
                )),
            }
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            verify_tls12_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            )
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, Error> {
            verify_tls13_signature(
                message,
                cert,
                dss,
                &self.provider.signature_verification_algorithms,
            )
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.provider
                .signature_verification_algorithms
                .supported_schemes()
        }
    }

    pub fn pinned_config(ca_file: &Path) -> Result<rustls::ClientConfig, BackendError> {
        let shown = ca_file.display();
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(ca_file)
            .map_err(|e| {
                api(format!(
                    "cannot read the RAPI certificate file {shown}: {e}"
                ))
            })?
            .collect::<Result<_, _>>()
            .map_err(|e| api(format!("{shown} is not a PEM certificate file: {e}")))?;
        if certs.is_empty() {
            return Err(api(format!(
                "{shown} holds no certificate: give Ganeti's rapi.pem (its certificate part) or a CA"
            )));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        // Ganeti's v1 certificate cannot be a WebPKI root; it is still pinned.
        let _ = roots.add_parsable_certificates(certs.iter().cloned());
        let fallback: Option<Arc<dyn ServerCertVerifier>> = if roots.is_empty() {
            None
        } else {
            Some(
                rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider.clone(),
                )
                .build()
                .map_err(|e| api(format!("{shown}: cannot build a verifier: {e}")))?,
            )
        };
        let verifier = Pinned {
            pinned: certs,
            fallback,
            provider: provider.clone(),
        };
        Ok(rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| api(format!("TLS setup: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth())
    }
}

/// Reads the RAPI password: from the file if given (first line), else from the environment
/// variable `AUTOREPAIR_RAPI_PASSWORD`. Never from the command line.
pub fn read_password(file: Option<&Path>) -> Result<String, BackendError> {
    match file {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                api(format!("cannot read the RAPI password file {}: {e}", path.display()))
            })?;
            let pw = text.lines().next().unwrap_or_default().trim_end().to_owned();
            if pw.is_empty() {
                return Err(api(format!("the RAPI password file {} is empty", path.display())));
            }
            Ok(pw)
        }
        None => std::env::var("AUTOREPAIR_RAPI_PASSWORD").map_err(|_| {
            api("no RAPI password: give --rapi-password-file FILE (or rapi.password_file in the config), or set AUTOREPAIR_RAPI_PASSWORD")
        }),
    }
}

#[cfg(test)]
mod tests;
