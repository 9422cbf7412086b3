//! What the generator reads: sabakan machines (GraphQL or REST shape), CKE constraints and the
//! Kubernetes Nodes' taints. Parsing only; no I/O.

use jiff::Timestamp;
use jiff::tz::Offset;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Error as _};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// A machine's lifecycle state (sabakan's GraphQL enum; the REST API spells it lower-case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum State {
    Uninitialized,
    Healthy,
    Unhealthy,
    Unreachable,
    Updating,
    Retiring,
    Retired,
}

impl State {
    pub const ALL: [State; 7] = [
        State::Uninitialized,
        State::Healthy,
        State::Unhealthy,
        State::Unreachable,
        State::Updating,
        State::Retiring,
        State::Retired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Uninitialized => "UNINITIALIZED",
            State::Healthy => "HEALTHY",
            State::Unhealthy => "UNHEALTHY",
            State::Unreachable => "UNREACHABLE",
            State::Updating => "UPDATING",
            State::Retiring => "RETIRING",
            State::Retired => "RETIRED",
        }
    }

    /// Either spelling: GraphQL's `HEALTHY` or REST's `healthy`.
    pub fn parse(s: &str) -> Option<State> {
        State::ALL
            .into_iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s))
    }

    /// The value of the `cke.cybozu.com/state` taint a node of a machine in this state carries,
    /// with its effect (CKE's sabakan/generator.go).
    pub fn taint(self) -> Option<(&'static str, &'static str)> {
        match self {
            State::Unreachable => Some(("unreachable", "NoSchedule")),
            State::Retiring => Some(("retiring", "NoExecute")),
            State::Retired => Some(("retired", "NoExecute")),
            _ => None,
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An instant with the UTC offset it was written with: CKE renders register and retire dates
/// in the offset sabakan gave them (Go keeps a parsed time's offset).
/// A date sabakan gave that is not an RFC 3339 date-time with an offset, naming the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StampError {
    #[error("{text:?} is not an RFC 3339 date-time: {why}")]
    NotADate { text: String, why: String },
    #[error("{text:?}: {why}")]
    BadOffset { text: String, why: String },
    #[error("{text:?} has no UTC offset (Z or ±hh:mm)")]
    NoOffset { text: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub at: Timestamp,
    pub offset: Offset,
}

impl Stamp {
    /// Go's zero `time.Time`, what a machine without the field has.
    pub fn zero() -> Stamp {
        Stamp {
            at: "0001-01-01T00:00:00Z".parse().expect("a valid instant"),
            offset: Offset::UTC,
        }
    }

    /// An RFC 3339 date-time, `Z` or a numeric offset.
    pub fn parse(s: &str) -> Result<Stamp, StampError> {
        let at: Timestamp = s.parse().map_err(|e: jiff::Error| StampError::NotADate {
            text: s.to_owned(),
            why: e.to_string(),
        })?;
        let offset = match s.as_bytes() {
            [.., b'Z' | b'z'] => Offset::UTC,
            [.., sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
                let digits = [*h1, *h2, *m1, *m2];
                if !digits.iter().all(u8::is_ascii_digit) {
                    return Err(StampError::BadOffset {
                        text: s.to_owned(),
                        why: "bad UTC offset".into(),
                    });
                }
                let d = |i: usize| i32::from(digits[i] - b'0');
                let secs = ((d(0) * 10 + d(1)) * 60 + d(2) * 10 + d(3)) * 60;
                Offset::from_seconds(if *sign == b'-' { -secs } else { secs }).map_err(|e| {
                    StampError::BadOffset {
                        text: s.to_owned(),
                        why: e.to_string(),
                    }
                })?
            }
            _ => {
                return Err(StampError::NoOffset { text: s.to_owned() });
            }
        };
        Ok(Stamp { at, offset })
    }

    /// Go's `time.RFC3339` layout: seconds, no fraction, `Z` for a zero offset.
    pub fn rfc3339(&self) -> String {
        self.rfc3339_and_month().0
    }

    /// `YYYY-MM` in the stamp's own offset.
    pub fn month(&self) -> String {
        self.rfc3339_and_month().1
    }

    /// Both forms from one calendar conversion (rendering needs both for every node).
    pub fn rfc3339_and_month(&self) -> (String, String) {
        use std::fmt::Write;
        let dt = self.offset.to_datetime(self.at);
        let mut out = String::with_capacity(25);
        let _ = write!(out, "{:04}-{:02}", dt.year(), dt.month());
        let month = out.clone();
        let _ = write!(
            out,
            "-{:02}T{:02}:{:02}:{:02}",
            dt.day(),
            dt.hour(),
            dt.minute(),
            dt.second()
        );
        let secs = self.offset.seconds();
        if secs == 0 {
            out.push('Z');
        } else {
            let (sign, abs) = if secs < 0 { ('-', -secs) } else { ('+', secs) };
            let _ = write!(out, "{sign}{:02}:{:02}", abs / 3600, abs / 60 % 60);
        }
        (out, month)
    }

    /// Whole days from `now` to this instant, truncated toward zero (negative when past).
    pub fn days_from(&self, now: Timestamp) -> i64 {
        const DAY_NS: i128 = 86_400 * 1_000_000_000;
        ((self.at.as_nanosecond() - now.as_nanosecond()) / DAY_NS) as i64
    }
}

/// One machine as the generator sees it. Labels keep sabakan's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub serial: String,
    pub labels: Vec<(String, String)>,
    pub rack: i64,
    pub index_in_rack: i64,
    pub role: String,
    pub ipv4: Vec<String>,
    pub register_date: Stamp,
    pub retire_date: Stamp,
    pub bmc_type: String,
    pub state: State,
    /// Seconds since the last state change.
    pub duration: f64,
}

impl Machine {
    /// The node address, `ipv4[0]`; CKE ignores a machine without one.
    pub fn address(&self) -> Option<&str> {
        self.ipv4.first().map(String::as_str)
    }
}

/// A machines file (or a sabakan answer) that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MachinesError(pub String);

/// Reads machines from any of the shapes sabakan gives: a GraphQL answer
/// (`{"data":{"searchMachines":[…]}}`, or `{"searchMachines":[…]}`) or the REST list
/// (`GET /api/v1/machines`, a JSON array); each machine in GraphQL or REST spelling.
/// `now` completes a REST machine that has a `timestamp` but no `duration`.
pub fn parse_machines(text: &str, now: Timestamp) -> Result<Vec<Machine>, MachinesError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| MachinesError(format!("not JSON: {e}")))?;
    machines_from_value(value, now)
}

pub fn machines_from_value(value: Value, now: Timestamp) -> Result<Vec<Machine>, MachinesError> {
    let list = match value {
        Value::Array(list) => list,
        Value::Object(mut obj) => {
            if let Some(errors) = obj.get("errors").filter(|e| !e.is_null()) {
                let empty = errors.as_array().is_some_and(Vec::is_empty);
                if !empty {
                    return Err(MachinesError(format!(
                        "sabakan answered with errors: {errors}"
                    )));
                }
            }
            let inner = match obj.remove("data") {
                Some(Value::Object(mut data)) => data.remove("searchMachines"),
                Some(_) => None,
                None => obj.remove("searchMachines"),
            };
            match inner {
                Some(Value::Array(list)) => list,
                _ => {
                    return Err(MachinesError(
                        "expected a JSON array of machines (REST), or {\"data\":{\"searchMachines\":[…]}} \
                         (GraphQL); found an object without searchMachines"
                            .into(),
                    ));
                }
            }
        }
        _ => {
            return Err(MachinesError(
                "expected a JSON array of machines or a GraphQL answer".into(),
            ));
        }
    };
    list.into_iter()
        .enumerate()
        .map(|(i, v)| machine(v, now).map_err(|e| MachinesError(format!("machine [{i}]: {e}"))))
        .collect()
}

/// Both spellings of a machine: GraphQL (`indexInRack`, labels as a list of `{name,value}`,
/// `bmc.bmcType`) and REST (`index-in-rack`, labels as a map, `bmc.type`).
#[derive(Deserialize)]
struct RawMachine {
    spec: RawSpec,
    status: RawStatus,
}

#[derive(Deserialize)]
struct RawSpec {
    serial: String,
    #[serde(default)]
    labels: Option<RawLabels>,
    #[serde(default)]
    rack: i64,
    #[serde(default, alias = "index-in-rack", rename = "indexInRack")]
    index_in_rack: i64,
    #[serde(default)]
    role: String,
    #[serde(default)]
    ipv4: Option<Vec<String>>,
    #[serde(default, alias = "register-date", rename = "registerDate")]
    register_date: Option<String>,
    #[serde(default, alias = "retire-date", rename = "retireDate")]
    retire_date: Option<String>,
    #[serde(default)]
    bmc: Option<RawBmc>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawLabels {
    List(Vec<RawLabel>),
    Map(BTreeMap<String, String>),
}

#[derive(Deserialize)]
struct RawLabel {
    name: String,
    value: String,
}

#[derive(Deserialize)]
struct RawBmc {
    #[serde(default, alias = "type", rename = "bmcType")]
    bmc_type: String,
}

#[derive(Deserialize)]
struct RawStatus {
    state: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    timestamp: Option<String>,
}

/// One machine of sabakan's answer that cannot be read, naming its serial and the field.
#[derive(Debug, thiserror::Error)]
enum MachineError {
    #[error("{0}")]
    Shape(#[from] serde_json::Error),
    #[error(
        "serial {serial:?}: status.state: unknown state {state:?} (one of UNINITIALIZED, \
         HEALTHY, UNHEALTHY, UNREACHABLE, UPDATING, RETIRING, RETIRED)"
    )]
    UnknownState { serial: String, state: String },
    #[error("serial {serial:?}: {field}: {source}")]
    Date {
        serial: String,
        field: &'static str,
        source: StampError,
    },
}

fn machine(v: Value, now: Timestamp) -> Result<Machine, MachineError> {
    let raw: RawMachine = serde_json::from_value(v)?;
    let serial = raw.spec.serial;
    let ctx = |field: &'static str, source: StampError| MachineError::Date {
        serial: serial.clone(),
        field,
        source,
    };
    let state = State::parse(&raw.status.state).ok_or_else(|| MachineError::UnknownState {
        serial: serial.clone(),
        state: raw.status.state.clone(),
    })?;
    let date = |field: &'static str, s: Option<String>| match s {
        Some(s) => Stamp::parse(&s).map_err(|e| ctx(field, e)),
        None => Ok(Stamp::zero()),
    };
    let register_date = date("spec.registerDate", raw.spec.register_date)?;
    let retire_date = date("spec.retireDate", raw.spec.retire_date)?;
    let duration = match (raw.status.duration, raw.status.timestamp) {
        (Some(d), _) => d,
        (None, Some(ts)) => {
            let ts = Stamp::parse(&ts).map_err(|e| ctx("status.timestamp", e))?;
            now.duration_since(ts.at).as_secs_f64()
        }
        (None, None) => 0.0,
    };
    let labels = match raw.spec.labels {
        None => Vec::new(),
        Some(RawLabels::List(l)) => l.into_iter().map(|l| (l.name, l.value)).collect(),
        Some(RawLabels::Map(m)) => m.into_iter().collect(),
    };
    Ok(Machine {
        serial,
        labels,
        rack: raw.spec.rack,
        index_in_rack: raw.spec.index_in_rack,
        role: raw.spec.role,
        ipv4: raw.spec.ipv4.unwrap_or_default(),
        register_date,
        retire_date,
        bmc_type: raw.spec.bmc.map(|b| b.bmc_type).unwrap_or_default(),
        state,
        duration,
    })
}

/// The constraints the generator obeys, with CKE's names and (legacy) defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Constraints {
    pub control_plane_count: usize,
    pub minimum_workers: usize,
    /// 0 = no maximum.
    pub maximum_workers: usize,
}

impl Default for Constraints {
    fn default() -> Self {
        Constraints {
            control_plane_count: 1,
            minimum_workers: 1,
            maximum_workers: 0,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConstraintsError(pub String);

/// Constraint names CKE knows but the generator does not use (accepted, ignored), so the JSON of
/// `ckecli constraints show` can be given as it is.
const OTHER_CONSTRAINTS: &[&str] = &[
    "minimum-workers-rate",
    "maximum-unreachable-nodes-for-reboot",
    "maximum-repair-queue-entries",
    "wait-seconds-to-repair-rebooting",
];

impl Constraints {
    /// A JSON object such as `ckecli constraints show` prints. Missing names take CKE's
    /// defaults; unknown names are errors (a typo would otherwise silently mean the default).
    pub fn parse(text: &str) -> Result<Constraints, ConstraintsError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| ConstraintsError(format!("not JSON: {e}")))?;
        let Value::Object(obj) = value else {
            return Err(ConstraintsError(
                "expected a JSON object such as {\"control-plane-count\": 3, \"minimum-workers\": 2}"
                    .into(),
            ));
        };
        let mut c = Constraints::default();
        for (key, v) in &obj {
            let slot = match key.as_str() {
                "control-plane-count" => &mut c.control_plane_count,
                "minimum-workers" => &mut c.minimum_workers,
                "maximum-workers" => &mut c.maximum_workers,
                k if OTHER_CONSTRAINTS.contains(&k) => continue,
                k => {
                    return Err(ConstraintsError(format!(
                        "unknown constraint {k:?}: the generator reads control-plane-count, \
                         minimum-workers and maximum-workers"
                    )));
                }
            };
            *slot = v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| ConstraintsError(format!("{key}: {v} is not a whole number ≥ 0")))?;
        }
        c.check()?;
        Ok(c)
    }

    pub fn check(&self) -> Result<(), ConstraintsError> {
        if self.control_plane_count == 0 {
            return Err(ConstraintsError(
                "control-plane-count is 0: a cluster needs at least one control plane (etcd member)"
                    .into(),
            ));
        }
        if self.maximum_workers != 0 && self.maximum_workers < self.minimum_workers {
            return Err(ConstraintsError(format!(
                "maximum-workers {} is below minimum-workers {}: raise maximum-workers (0 means no \
                 maximum) or lower minimum-workers",
                self.maximum_workers, self.minimum_workers
            )));
        }
        Ok(())
    }
}

/// A Kubernetes taint (`corev1.Taint` without `timeAdded`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize)]
pub struct Taint {
    pub key: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    pub effect: String,
}

/// The taints of the Kubernetes Nodes, by Node name (CKE names a Node after its address).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KubeNodes {
    pub taints: HashMap<String, Vec<Taint>>,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NodesError(pub String);

impl KubeNodes {
    /// `kubectl get nodes -o json`: a List whose items are Nodes.
    pub fn parse(text: &str) -> Result<KubeNodes, NodesError> {
        #[derive(Deserialize)]
        struct List {
            items: Vec<Node>,
        }
        #[derive(Deserialize)]
        struct Node {
            metadata: Meta,
            #[serde(default)]
            spec: Spec,
            #[serde(default)]
            status: Status,
        }
        #[derive(Deserialize)]
        struct Meta {
            name: String,
        }
        #[derive(Deserialize, Default)]
        struct Spec {
            #[serde(default, deserialize_with = "nullable")]
            taints: Vec<Taint>,
        }
        #[derive(Deserialize, Default)]
        struct Status {
            #[serde(default, deserialize_with = "nullable")]
            addresses: Vec<Address>,
        }
        #[derive(Deserialize)]
        struct Address {
            #[serde(rename = "type")]
            kind: String,
            address: String,
        }
        let list: List = serde_json::from_str(text).map_err(|e| {
            NodesError(format!(
                "expected the output of `kubectl get nodes -o json` (a List of Nodes): {e}"
            ))
        })?;
        Ok(KubeNodes::index(list.items.into_iter().map(|n| {
            let ip = n
                .status
                .addresses
                .into_iter()
                .find(|a| a.kind == "InternalIP")
                .map(|a| a.address);
            (n.metadata.name, ip, n.spec.taints)
        })))
    }

    /// The Nodes a cluster's API server lists (`crate::k8s::nodes`).
    pub fn from_nodes(nodes: &[crate::k8s::NodeInfo]) -> KubeNodes {
        KubeNodes::index(nodes.iter().map(|n| {
            let taints = n
                .taints
                .iter()
                .map(|t| Taint {
                    key: t.key.clone(),
                    value: t.value.clone(),
                    effect: t.effect.clone(),
                })
                .collect();
            (n.name.clone(), n.internal_ip.clone(), taints)
        }))
    }

    /// Taints by Node name, and by InternalIP where no Node has that name (a machine is a
    /// Node when a Node's name or InternalIP is its address, `k8s::node_for`).
    fn index(nodes: impl Iterator<Item = (String, Option<String>, Vec<Taint>)>) -> KubeNodes {
        let nodes: Vec<_> = nodes.collect();
        let mut taints: HashMap<String, Vec<Taint>> = nodes
            .iter()
            .map(|(name, _, t)| (name.clone(), t.clone()))
            .collect();
        for (_, ip, t) in nodes {
            if let Some(ip) = ip {
                taints.entry(ip).or_insert(t);
            }
        }
        KubeNodes { taints }
    }
}

/// `null` reads as the empty value, as Go's encoders write empty maps and lists.
pub(crate) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v: Option<T> = Option::deserialize(d).map_err(D::Error::custom)?;
    Ok(v.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    #[test]
    fn stamps_keep_their_offset_like_go() {
        let cases = [
            ("2024-03-31T22:30:00Z", "2024-03-31T22:30:00Z", "2024-03"),
            ("2024-03-31T22:30:00.5Z", "2024-03-31T22:30:00Z", "2024-03"),
            (
                "2024-03-31T22:30:00+09:00",
                "2024-03-31T22:30:00+09:00",
                "2024-03",
            ),
            (
                "2024-03-31T22:30:00-02:30",
                "2024-03-31T22:30:00-02:30",
                "2024-03",
            ),
            (
                "2024-03-31T22:30:00+00:00",
                "2024-03-31T22:30:00Z",
                "2024-03",
            ),
        ];
        for (input, rfc, month) in cases {
            let s = Stamp::parse(input).unwrap();
            assert_eq!(s.rfc3339(), rfc, "{input}");
            assert_eq!(s.month(), month, "{input}");
        }
        assert!(
            matches!(Stamp::parse("2024-03-31"), Err(StampError::NotADate { text, .. }) if text == "2024-03-31")
        );
        assert_eq!(Stamp::zero().rfc3339(), "0001-01-01T00:00:00Z");
    }

    #[test]
    fn days_truncate_toward_zero() {
        let cases = [
            ("2026-01-01T23:59:59Z", 0),
            ("2026-01-02T00:00:00Z", 1),
            ("2025-12-31T00:00:01Z", 0),
            ("2025-12-31T00:00:00Z", -1),
            ("2026-09-09T00:00:00Z", 251),
        ];
        for (date, days) in cases {
            assert_eq!(Stamp::parse(date).unwrap().days_from(now()), days, "{date}");
        }
    }

    #[test]
    fn graphql_and_rest_shapes_read_the_same() {
        let gql = r#"{"data":{"searchMachines":[{"spec":{"serial":"s1","labels":[{"name":"product","value":"R630"}],
            "rack":3,"indexInRack":4,"role":"cs","ipv4":["10.0.0.1"],"registerDate":"2025-01-01T00:00:00Z",
            "retireDate":"2030-01-01T00:00:00Z","bmc":{"bmcType":"IPMI-2.0"}},"status":{"state":"HEALTHY","duration":12.5}}]}}"#;
        let rest = r#"[{"spec":{"serial":"s1","labels":{"product":"R630"},"rack":3,"index-in-rack":4,"role":"cs",
            "ipv4":["10.0.0.1"],"ipv6":[],"register-date":"2025-01-01T00:00:00Z","retire-date":"2030-01-01T00:00:00Z",
            "bmc":{"type":"IPMI-2.0","ipv4":"10.1.0.1"}},"status":{"state":"healthy","timestamp":"2025-12-31T23:59:47.5Z","duration":12.5}}]"#;
        let a = parse_machines(gql, now()).unwrap();
        let b = parse_machines(rest, now()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a[0].state, State::Healthy);
        assert_eq!(a[0].index_in_rack, 4);
        assert_eq!(a[0].bmc_type, "IPMI-2.0");
        // REST without duration: computed from the timestamp.
        let rest = rest.replace(",\"duration\":12.5", "");
        assert_eq!(parse_machines(&rest, now()).unwrap()[0].duration, 12.5);
    }

    #[test]
    fn machine_errors_name_the_machine_and_field() {
        let cases = [
            (
                r#"[{"spec":{"serial":"s9"},"status":{"state":"BROKEN"}}]"#,
                "serial \"s9\": status.state",
            ),
            (
                r#"[{"spec":{"serial":"s9","retireDate":"soon"},"status":{"state":"HEALTHY"}}]"#,
                "serial \"s9\": spec.retireDate",
            ),
            (
                r#"{"errors":[{"message":"boom"}]}"#,
                "sabakan answered with errors",
            ),
            (r#"{"foo":1}"#, "without searchMachines"),
        ];
        for (text, want) in cases {
            let e = parse_machines(text, now()).unwrap_err().to_string();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
        }
    }

    #[test]
    fn constraints_use_cke_names_and_defaults() {
        type Want = Result<(usize, usize, usize), &'static str>;
        let cases: [(&str, Want); 7] = [
            ("{}", Ok((1, 1, 0))),
            (
                r#"{"control-plane-count":3,"minimum-workers":2,"maximum-workers":5}"#,
                Ok((3, 2, 5)),
            ),
            (r#"{"maximum-repair-queue-entries":4}"#, Ok((1, 1, 0))),
            (
                r#"{"control-plane-count":0}"#,
                Err("control-plane-count is 0"),
            ),
            (
                r#"{"minimum-workers":3,"maximum-workers":2}"#,
                Err("below minimum-workers"),
            ),
            (
                r#"{"minimum-worker":3}"#,
                Err("unknown constraint \"minimum-worker\""),
            ),
            (r#"{"minimum-workers":-1}"#, Err("minimum-workers: -1")),
        ];
        for (text, want) in cases {
            let got = Constraints::parse(text)
                .map(|c| (c.control_plane_count, c.minimum_workers, c.maximum_workers))
                .map_err(|e| e.to_string());
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{text}"),
                (Err(g), Err(w)) => assert!(g.contains(w), "{text}: {g:?} lacks {w:?}"),
                (g, w) => panic!("{text}: got {g:?}, want {w:?}"),
            }
        }
    }

    #[test]
    fn kube_nodes_read_taints_by_name() {
        let text = r#"{"apiVersion":"v1","kind":"List","items":[
            {"metadata":{"name":"10.0.0.1"},"spec":{"taints":[{"key":"a","value":"b","effect":"NoSchedule","timeAdded":"2026-01-01T00:00:00Z"}]}},
            {"metadata":{"name":"10.0.0.2"},"spec":{}}]}"#;
        let nodes = KubeNodes::parse(text).unwrap();
        assert_eq!(nodes.taints["10.0.0.1"][0].key, "a");
        assert!(nodes.taints["10.0.0.2"].is_empty());
    }

    #[test]
    fn kube_nodes_named_after_hosts_are_found_by_internal_ip() {
        let text = r#"{"apiVersion":"v1","kind":"List","items":[
            {"metadata":{"name":"host-1"},"spec":{"taints":[{"key":"a","effect":"NoSchedule"}]},
             "status":{"addresses":[{"type":"Hostname","address":"host-1"},{"type":"InternalIP","address":"10.0.0.1"}]}},
            {"metadata":{"name":"10.0.0.2"},"spec":{},"status":{"addresses":null}},
            {"metadata":{"name":"host-2"},"spec":{"taints":[{"key":"b","effect":"NoExecute"}]},
             "status":{"addresses":[{"type":"InternalIP","address":"10.0.0.2"}]}}]}"#;
        let nodes = KubeNodes::parse(text).unwrap();
        assert_eq!(nodes.taints["host-1"][0].key, "a");
        assert_eq!(nodes.taints["10.0.0.1"][0].key, "a");
        // A Node named by the address wins over another Node's InternalIP.
        assert!(nodes.taints["10.0.0.2"].is_empty());
        assert_eq!(nodes.taints["host-2"][0].key, "b");
        let listed = [crate::k8s::NodeInfo {
            name: "host-3".into(),
            internal_ip: Some("10.0.0.3".into()),
            taints: vec![crate::k8s::nodes::Taint {
                key: "c".into(),
                value: "d".into(),
                effect: "NoSchedule".into(),
            }],
            ..Default::default()
        }];
        let nodes = KubeNodes::from_nodes(&listed);
        let want = Taint {
            key: "c".into(),
            value: "d".into(),
            effect: "NoSchedule".into(),
        };
        assert_eq!(nodes.taints["host-3"], std::slice::from_ref(&want));
        assert_eq!(nodes.taints["10.0.0.3"], [want]);
    }
}
