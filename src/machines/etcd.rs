//! CKE's etcd gate (its server/strategy.go and node_filter.go `EtcdIsGoodForRepair`): no
//! repair step moves while the cluster's etcd is unhealthy, while a member is out of sync for
//! another reason than the failure of its own control plane, or while fewer than
//! `control-plane-count − 1` members are in sync.
//!
//! [`read`] asks etcd (the only I/O here), as CKE does: the cluster through every control
//! plane's endpoint (`https://ADDRESS:2379`), then each member alone; [`judge`] decides, a pure
//! function of what was read. etcd's JSON gateway (`/v3/…`, served by etcd itself) is used over
//! HTTPS with a client certificate, so no gRPC stack is needed.

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

/// CKE's etcd client port.
pub const CLIENT_PORT: u16 = 2379;

/// The key CKE reads to see a member's revision, `health`, base64 as the gateway takes keys.
const HEALTH_KEY: &str = "aGVhbHRo";

/// CKE's timeout for each etcd request (op/constants.go).
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// How to reach the cluster's etcd: the CA that signed its certificates, and a client
/// certificate and key, all files (never on the command line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Why etcd could not be read, or a client for it not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EtcdError {
    #[error("cannot read the etcd {what} {}: {message}", path.display())]
    File {
        what: &'static str,
        path: PathBuf,
        message: String,
    },
    #[error("the etcd CA {} is not a PEM certificate: {message}", path.display())]
    Ca { path: PathBuf, message: String },
    #[error("the etcd client certificate {} and key {} are not a PEM certificate and key: {message}", cert.display(), key.display())]
    Identity {
        cert: PathBuf,
        key: PathBuf,
        message: String,
    },
    #[error("cannot set up the etcd client: {0}")]
    Setup(String),
    /// The request failed, or etcd answered with an error or with what is not its JSON.
    #[error("{url}: {message}")]
    Request { url: String, message: String },
    /// etcd's answer lacks what the question is for.
    #[error("{address}: {message}")]
    Answer { address: String, message: String },
    #[error("an etcd member cannot be named: {0}")]
    Member(String),
    #[error("the cluster configuration names no control plane, so no etcd endpoint")]
    NoControlPlane,
    /// No endpoint gave the member list: why each failed.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    NoEndpoint(Vec<EtcdError>),
    #[error("the question to etcd panicked")]
    Panicked,
}

/// Why CKE's etcd gate holds every repair step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Closed {
    #[error("etcd cannot be read ({0})")]
    Unreadable(EtcdError),
    #[error(
        "etcd is not healthy: no control plane's endpoint answered a linearizable read (no quorum?)"
    )]
    NoQuorum,
    #[error(
        "etcd member {0} is out of sync and is not a control plane of the cluster configuration"
    )]
    Stranger(String),
    #[error(
        "etcd member {0} is out of sync while its machine is reachable (sabakan does not say UNREACHABLE): not a failure a repair mends"
    )]
    Reachable(String),
    #[error("only {in_sync} etcd member(s) in sync, fewer than control-plane-count − 1 = {needed}")]
    TooFewInSync { in_sync: usize, needed: usize },
}

/// What etcd said: the cluster's revision when it answered a linearizable read (healthy), and
/// each member by CKE's name for it (its name, else its first peer URL's host) with whether it
/// is in sync (it answered a linearizable read of its own at that revision or later).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub revision: Option<i64>,
    pub members: Vec<(String, bool)>,
}

/// Whether etcd answered at all with a quorum: CKE does nothing else while it does not (its
/// strategy waits for etcd before any other phase, the uncordons included).
pub fn healthy(read: &Result<Status, EtcdError>) -> bool {
    read.as_ref().is_ok_and(|s| s.revision.is_some())
}

/// Whether the gate lets repair steps move: `Err` says why not.
///
/// `control_planes` are the cluster's control-plane addresses, `unreachable` the machines
/// sabakan cannot reach (CKE asks whether it can SSH to the node; autorepair has only
/// sabakan's word), `count` the constraints' `control-plane-count`.
pub fn judge(
    status: &Result<Status, EtcdError>,
    control_planes: &BTreeSet<String>,
    unreachable: &BTreeSet<String>,
    count: usize,
) -> Result<(), Closed> {
    let status = status
        .as_ref()
        .map_err(|why| Closed::Unreadable(why.clone()))?;
    if status.revision.is_none() {
        return Err(Closed::NoQuorum);
    }
    let mut in_sync = 0usize;
    for (name, synced) in &status.members {
        if *synced {
            in_sync += 1;
            continue;
        }
        if !control_planes.contains(name) {
            return Err(Closed::Stranger(name.clone()));
        }
        if !unreachable.contains(name) {
            return Err(Closed::Reachable(name.clone()));
        }
    }
    let needed = count.saturating_sub(1);
    if in_sync < needed {
        return Err(Closed::TooFewInSync { in_sync, needed });
    }
    Ok(())
}

/// A client for one run: TLS with the given CA (only: not the system's roots, as CKE trusts
/// its own CA) and client certificate.
pub struct Client {
    http: reqwest::blocking::Client,
}

impl Client {
    pub fn new(access: &Access) -> Result<Client, EtcdError> {
        let read = |what: &'static str, path: &PathBuf| {
            crate::files::read_input_bytes(path)
                .map(|(bytes, _)| bytes)
                .map_err(|e| EtcdError::File {
                    what,
                    path: path.clone(),
                    message: e.to_string(),
                })
        };
        let ca = reqwest::Certificate::from_pem(&read("CA", &access.ca)?).map_err(|e| {
            EtcdError::Ca {
                path: access.ca.clone(),
                message: e.to_string(),
            }
        })?;
        let mut identity = read("client certificate", &access.cert)?;
        identity.push(b'\n');
        identity.extend(read("client key", &access.key)?);
        let identity = reqwest::Identity::from_pem(&identity).map_err(|e| EtcdError::Identity {
            cert: access.cert.clone(),
            key: access.key.clone(),
            message: e.to_string(),
        })?;
        let http = reqwest::blocking::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
            .identity(identity)
            .timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            .build()
            .map_err(|e| EtcdError::Setup(e.to_string()))?;
        Ok(Client { http })
    }

    fn call(&self, address: &str, path: &str, body: &Value) -> Result<Value, EtcdError> {
        let host = if address.contains(':') {
            format!("[{address}]")
        } else {
            address.to_owned()
        };
        let url = format!("https://{host}:{CLIENT_PORT}{path}");
        let answer = self
            .http
            .post(&url)
            .json(body)
            .send()
            .map_err(|e| EtcdError::Request {
                url: url.clone(),
                message: e.to_string(),
            })?;
        let status = answer.status();
        let value: Value = answer.json().map_err(|e| EtcdError::Request {
            url: url.clone(),
            message: format!("not etcd's JSON: {e}"),
        })?;
        if !status.is_success() || value.get("error").is_some() {
            let said = value
                .get("error")
                .or_else(|| value.get("message"))
                .unwrap_or(&value);
            return Err(EtcdError::Request {
                url,
                message: format!("{status}: {said}"),
            });
        }
        Ok(value)
    }

    /// A linearizable read through `address` alone: the revision it answers at.
    fn revision(&self, address: &str) -> Result<i64, EtcdError> {
        let v = self.call(address, "/v3/kv/range", &json!({ "key": HEALTH_KEY }))?;
        // The gateway writes int64 as a string.
        let rev = &v["header"]["revision"];
        rev.as_str()
            .and_then(|s| s.parse().ok())
            .or_else(|| rev.as_i64())
            .ok_or_else(|| EtcdError::Answer {
                address: address.to_owned(),
                message: format!("no header.revision in {v}"),
            })
    }

    fn members(&self, address: &str) -> Result<Vec<String>, EtcdError> {
        let v = self.call(address, "/v3/cluster/member/list", &json!({}))?;
        let list = v["members"].as_array().ok_or_else(|| EtcdError::Answer {
            address: address.to_owned(),
            message: format!("no members in {v}"),
        })?;
        list.iter().map(member_name).collect()
    }
}

/// CKE's `GuessMemberName`: the member's name, else its first peer URL's host.
fn member_name(m: &Value) -> Result<String, EtcdError> {
    if let Some(name) = m["name"].as_str().filter(|n| !n.is_empty()) {
        return Ok(name.to_owned());
    }
    let url = m["peerURLs"][0]
        .as_str()
        .ok_or_else(|| EtcdError::Member(format!("it has neither a name nor a peer URL: {m}")))?;
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| EtcdError::Member(format!("its peer URL {url:?}: {e}")))?;
    parsed
        .host_str()
        .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
        .ok_or_else(|| EtcdError::Member(format!("its peer URL {url:?} has no host")))
}

/// Reads the cluster's etcd through the control planes' endpoints, as CKE does, every
/// question at once (a member that answers nothing costs one timeout a pass, not one a
/// question): the member list, and a linearizable read through each endpoint alone. The
/// cluster is healthy when one of them answered (a linearizable read needs a quorum); its
/// revision is the lowest answered, and a member is in sync when its own read answered at
/// that revision or later (a member that is not a control plane is asked after). `Err` when no
/// endpoint gave the member list: etcd cannot be read at all.
pub fn read(client: &Client, control_planes: &BTreeSet<String>) -> Result<Status, EtcdError> {
    if control_planes.is_empty() {
        return Err(EtcdError::NoControlPlane);
    }
    let panicked = || EtcdError::Panicked;
    type Answers<T> = Vec<Result<T, EtcdError>>;
    let (listed, reads): (Answers<Vec<String>>, Answers<i64>) = std::thread::scope(|s| {
        let lists: Vec<_> = control_planes
            .iter()
            .map(|cp| s.spawn(move || client.members(cp)))
            .collect();
        let reads: Vec<_> = control_planes
            .iter()
            .map(|cp| s.spawn(move || client.revision(cp)))
            .collect();
        (
            lists
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(panicked())))
                .collect(),
            reads
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(panicked())))
                .collect(),
        )
    });
    let mut errors = Vec::new();
    let mut members = None;
    for l in listed {
        match l {
            Ok(m) => {
                members.get_or_insert(m);
            }
            Err(e) => errors.push(e),
        }
    }
    let members = members.ok_or(EtcdError::NoEndpoint(errors))?;
    let own: Vec<(&String, Option<i64>)> = control_planes
        .iter()
        .zip(reads)
        .map(|(cp, r)| (cp, r.ok()))
        .collect();
    let revision = own.iter().filter_map(|(_, r)| *r).min();
    let others: Vec<&String> = members
        .iter()
        .filter(|m| !control_planes.contains(*m))
        .collect();
    let other_reads: Vec<Option<i64>> = std::thread::scope(|s| {
        let asked: Vec<_> = others
            .iter()
            .map(|m| s.spawn(move || client.revision(m).ok()))
            .collect();
        asked.into_iter().map(|h| h.join().ok().flatten()).collect()
    });
    let answered = |name: &String| -> Option<i64> {
        own.iter()
            .find(|(cp, _)| *cp == name)
            .map(|(_, r)| *r)
            .or_else(|| {
                others
                    .iter()
                    .position(|o| *o == name)
                    .map(|i| other_reads[i])
            })
            .flatten()
    };
    // A member whose question failed in any way is out of sync: never one left out.
    let members = members
        .iter()
        .map(|name| {
            let synced =
                revision.is_some_and(|cluster| answered(name).is_some_and(|r| r >= cluster));
            (name.clone(), synced)
        })
        .collect();
    Ok(Status { revision, members })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_gate_follows_ckes_rule() {
        let cps = set(&["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
        let status = |rev: Option<i64>, members: &[(&str, bool)]| {
            Ok(Status {
                revision: rev,
                members: members.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
            })
        };
        let all = [("10.0.0.1", true), ("10.0.0.2", true), ("10.0.0.3", true)];
        let one_behind = [("10.0.0.1", true), ("10.0.0.2", true), ("10.0.0.3", false)];
        let two_behind = [("10.0.0.1", true), ("10.0.0.2", false), ("10.0.0.3", false)];
        let stranger = [("10.0.0.1", true), ("10.0.0.2", true), ("10.0.0.9", false)];
        // (what was read, unreachable machines, control-plane-count, what the gate says)
        type Case<'a> = (
            Result<Status, EtcdError>,
            &'a [&'a str],
            usize,
            Result<(), &'a str>,
        );
        let cases: Vec<Case> = vec![
            (status(Some(7), &all), &[], 3, Ok(())),
            (status(None, &all), &[], 3, Err("not healthy")),
            (
                Err(EtcdError::Setup("refused".into())),
                &[],
                3,
                Err("cannot be read (cannot set up the etcd client: refused)"),
            ),
            // Out of sync on the failed control plane itself: what a repair mends.
            (status(Some(7), &one_behind), &["10.0.0.3"], 3, Ok(())),
            (
                status(Some(7), &one_behind),
                &[],
                3,
                Err("while its machine is reachable"),
            ),
            (
                status(Some(7), &stranger),
                &["10.0.0.9"],
                3,
                Err("not a control plane"),
            ),
            // Two control planes down: fewer than count − 1 in sync.
            (
                status(Some(7), &two_behind),
                &["10.0.0.2", "10.0.0.3"],
                3,
                Err("only 1 etcd member(s) in sync"),
            ),
            (
                status(Some(7), &two_behind),
                &["10.0.0.2", "10.0.0.3"],
                2,
                Ok(()),
            ),
            (status(Some(7), &[]), &[], 0, Ok(())),
        ];
        for (i, (read, unreachable, count, want)) in cases.into_iter().enumerate() {
            let got = judge(&read, &cps, &set(unreachable), count);
            match (got, want) {
                (Ok(()), Ok(())) => {}
                (Err(g), Err(w)) => assert!(g.to_string().contains(w), "case {i}: {g}"),
                (g, w) => panic!("case {i}: got {g:?}, want {w:?}"),
            }
        }
    }

    #[test]
    fn the_key_read_is_health() {
        use base64::Engine as _;
        let key = base64::engine::general_purpose::STANDARD.decode(HEALTH_KEY);
        assert_eq!(key.unwrap(), b"health");
    }

    #[test]
    fn a_member_is_named_as_cke_names_it() {
        let cases = [
            (
                json!({"name": "10.0.0.1", "peerURLs": ["https://10.0.0.9:2380"]}),
                Ok("10.0.0.1"),
            ),
            (
                json!({"name": "", "peerURLs": ["https://10.0.0.2:2380"]}),
                Ok("10.0.0.2"),
            ),
            (
                json!({"peerURLs": ["https://[fd00::1]:2380"]}),
                Ok("fd00::1"),
            ),
            (json!({"name": ""}), Err(())),
        ];
        for (m, want) in cases {
            assert_eq!(
                member_name(&m).map_err(drop),
                want.map(str::to_owned),
                "{m}"
            );
        }
    }
}
