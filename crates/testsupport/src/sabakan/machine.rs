//! A sabakan machine: its states and their permitted transitions, the syntax of labels, the
//! builder tests use, and the two JSON shapes sabakan serves (REST and GraphQL).

use jiff::Timestamp;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt;

/// sabakan's machine states. REST spells them lower-case, GraphQL upper-case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
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

    /// The REST spelling (`healthy`).
    pub fn rest(self) -> &'static str {
        match self {
            State::Uninitialized => "uninitialized",
            State::Healthy => "healthy",
            State::Unhealthy => "unhealthy",
            State::Unreachable => "unreachable",
            State::Updating => "updating",
            State::Retiring => "retiring",
            State::Retired => "retired",
        }
    }

    /// The GraphQL enum value (`HEALTHY`).
    pub fn gql(self) -> &'static str {
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

    /// Exactly the REST spelling: sabakan compares the request body byte for byte.
    pub fn from_rest(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.rest() == s)
    }

    /// Exactly the GraphQL enum value.
    pub fn from_gql(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.gql() == s)
    }

    /// sabakan's `permittedTransitions` (machines.go). Setting the current state again is
    /// allowed separately, as a no-op.
    pub fn may_become(self, to: State) -> bool {
        use State::*;
        let allowed: &[State] = match self {
            Uninitialized => &[Healthy, Retiring],
            Healthy => &[Unhealthy, Unreachable, Updating, Retiring],
            Unhealthy => &[Healthy, Unreachable, Updating, Retiring],
            Unreachable => &[Healthy, Unhealthy, Updating, Retiring],
            Updating => &[Uninitialized],
            Retiring => &[Retired],
            Retired => &[Uninitialized],
        };
        allowed.contains(&to)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rest())
    }
}

/// sabakan's label-name syntax (`reValidLabelName`, the same as Kubernetes label values):
/// 1-63 ASCII characters of `[A-Za-z0-9_.-]`, alphanumeric at both ends.
pub fn is_valid_label_name(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-');
    match b {
        [] => false,
        [only] => only.is_ascii_alphanumeric(),
        [first, mid @ .., last] => {
            b.len() <= 63
                && first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && mid.iter().all(inner)
        }
    }
}

/// sabakan's label-value syntax: empty, or the name syntax.
pub fn is_valid_label_value(s: &str) -> bool {
    s.is_empty() || is_valid_label_name(s)
}

/// Why a state change is refused, as sabakan tells it apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    /// Not a permitted transition (REST 500, GraphQL `INVALID_STATE_TRANSITION`).
    Forbidden { from: State, to: State },
    /// RETIRING -> RETIRED while disk-encryption keys exist (REST 400, GraphQL
    /// `ENCRYPTION_KEY_EXISTS`).
    EncryptionKeyExists,
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // sabakan's SetStateErrorFormat.
            StateError::Forbidden { from, to } => {
                write!(f, "transition from [ {from} ] to [ {to} ] is forbidden")
            }
            StateError::EncryptionKeyExists => f.write_str("encryption key exists"),
        }
    }
}

/// One machine as the fake stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub serial: String,
    pub labels: BTreeMap<String, String>,
    pub rack: u32,
    /// `None`: given by [`crate::sabakan::FakeSabakan::insert`], the next free index in the rack.
    pub index_in_rack: Option<u32>,
    pub role: String,
    /// `None`: derived from rack and index by [`crate::sabakan::FakeSabakan::insert`].
    pub ipv4: Option<Vec<String>>,
    pub ipv6: Vec<String>,
    pub bmc_type: String,
    pub bmc_ipv4: String,
    pub register_date: Timestamp,
    pub retire_date: Timestamp,
    pub state: State,
    /// When the state last changed. `None`: the fake's clock at insertion.
    pub timestamp: Option<Timestamp>,
    /// Disk-encryption keys are stored: RETIRING -> RETIRED is refused.
    pub encryption_keys: bool,
}

/// Starts a machine for [`crate::sabakan::FakeSabakan::insert`]: HEALTHY, role `cs`, rack 0, BMC
/// `IPMI-2.0`, registered 2025-01-01, retiring 2030-01-01, no labels.
pub fn machine(serial: &str) -> Machine {
    Machine {
        serial: serial.to_owned(),
        labels: BTreeMap::new(),
        rack: 0,
        index_in_rack: None,
        role: "cs".into(),
        ipv4: None,
        ipv6: Vec::new(),
        bmc_type: "IPMI-2.0".into(),
        bmc_ipv4: String::new(),
        register_date: "2025-01-01T00:00:00Z".parse().expect("a valid instant"),
        retire_date: "2030-01-01T00:00:00Z".parse().expect("a valid instant"),
        state: State::Healthy,
        timestamp: None,
        encryption_keys: false,
    }
}

fn instant(s: &str) -> Timestamp {
    s.parse()
        .unwrap_or_else(|e| panic!("{s:?} is not an RFC 3339 instant: {e}"))
}

impl Machine {
    pub fn rack(mut self, rack: u32) -> Self {
        self.rack = rack;
        self
    }
    pub fn index_in_rack(mut self, i: u32) -> Self {
        self.index_in_rack = Some(i);
        self
    }
    pub fn role(mut self, role: &str) -> Self {
        self.role = role.into();
        self
    }
    /// Adds an IPv4 address (the first one is the node address CKE uses).
    pub fn ipv4(mut self, addr: &str) -> Self {
        self.ipv4.get_or_insert_with(Vec::new).push(addr.into());
        self
    }
    /// No IPv4 address at all (CKE skips such a machine).
    pub fn no_ipv4(mut self) -> Self {
        self.ipv4 = Some(Vec::new());
        self
    }
    pub fn bmc_type(mut self, t: &str) -> Self {
        self.bmc_type = t.into();
        self
    }
    pub fn bmc_ipv4(mut self, addr: &str) -> Self {
        self.bmc_ipv4 = addr.into();
        self
    }
    pub fn state(mut self, s: State) -> Self {
        self.state = s;
        self
    }
    /// When the state was entered (RFC 3339); `status.duration` counts from it.
    pub fn since(mut self, at: &str) -> Self {
        self.timestamp = Some(instant(at));
        self
    }
    /// Adds a label. Not checked: a test may plant one sabakan would refuse.
    pub fn label(mut self, name: &str, value: &str) -> Self {
        self.labels.insert(name.into(), value.into());
        self
    }
    pub fn register_date(mut self, at: &str) -> Self {
        self.register_date = instant(at);
        self
    }
    pub fn retire_date(mut self, at: &str) -> Self {
        self.retire_date = instant(at);
        self
    }
    pub fn encryption_keys(mut self, present: bool) -> Self {
        self.encryption_keys = present;
        self
    }

    /// A machine in either of sabakan's spellings (GraphQL `indexInRack`, labels as a list,
    /// `bmc.bmcType`, upper-case states; REST `index-in-rack`, labels as a map, `bmc.type`,
    /// lower-case states). Panics on a malformed one: this seeds tests.
    pub fn from_json(v: &Value, now: Timestamp) -> Machine {
        let spec = &v["spec"];
        let get = |gql: &str, rest: &str| {
            let x = &spec[gql];
            if x.is_null() { &spec[rest] } else { x }
        };
        let text = |x: &Value| x.as_str().unwrap_or_default().to_owned();
        let serial = text(&spec["serial"]);
        let bad = |what: &str| -> ! { panic!("fake sabakan: machine {serial:?}: bad {what}") };
        let mut m = machine(&serial);
        m.rack = spec["rack"].as_u64().unwrap_or_default() as u32;
        m.index_in_rack = get("indexInRack", "index-in-rack")
            .as_u64()
            .map(|i| i as u32);
        m.role = text(&spec["role"]);
        m.ipv4 = Some(
            spec["ipv4"]
                .as_array()
                .map(|a| a.iter().map(text).collect())
                .unwrap_or_default(),
        );
        m.ipv6 = spec["ipv6"]
            .as_array()
            .map(|a| a.iter().map(text).collect())
            .unwrap_or_default();
        match &spec["labels"] {
            Value::Array(list) => {
                for l in list {
                    m.labels.insert(text(&l["name"]), text(&l["value"]));
                }
            }
            Value::Object(map) => {
                for (k, val) in map {
                    m.labels.insert(k.clone(), text(val));
                }
            }
            _ => {}
        }
        for (field, gql, rest) in [
            (&mut m.register_date, "registerDate", "register-date"),
            (&mut m.retire_date, "retireDate", "retire-date"),
        ] {
            if let Some(s) = get(gql, rest).as_str() {
                *field = s.parse().unwrap_or_else(|_| bad(gql));
            }
        }
        let bmc = &spec["bmc"];
        let bmc_type = if bmc["bmcType"].is_null() {
            &bmc["type"]
        } else {
            &bmc["bmcType"]
        };
        m.bmc_type = text(bmc_type);
        m.bmc_ipv4 = text(&bmc["ipv4"]);
        let status = &v["status"];
        let state = text(&status["state"]);
        m.state = State::from_gql(&state)
            .or_else(|| State::from_rest(&state))
            .unwrap_or_else(|| bad("status.state"));
        m.timestamp = Some(match status["timestamp"].as_str() {
            Some(t) => t.parse().unwrap_or_else(|_| bad("status.timestamp")),
            None => {
                let secs = status["duration"].as_f64().unwrap_or_default();
                let ago = jiff::SignedDuration::try_from_secs_f64(secs)
                    .unwrap_or_else(|_| bad("status.duration"));
                now.checked_sub(ago)
                    .unwrap_or_else(|_| bad("status.duration"))
            }
        });
        m
    }

    /// sabakan's `Machine.SetState`: the same state is a no-op; otherwise the transition must
    /// be permitted, and the state's timestamp moves to `now`.
    pub fn set_state(&mut self, to: State, now: Timestamp) -> Result<(), StateError> {
        if self.state == to {
            return Ok(());
        }
        if !self.state.may_become(to) {
            return Err(StateError::Forbidden {
                from: self.state,
                to,
            });
        }
        if to == State::Retired && self.encryption_keys {
            return Err(StateError::EncryptionKeyExists);
        }
        self.state = to;
        self.timestamp = Some(now);
        Ok(())
    }

    pub(crate) fn ipv4_list(&self) -> &[String] {
        self.ipv4.as_deref().unwrap_or_default()
    }

    fn since_ts(&self) -> Timestamp {
        self.timestamp.unwrap_or(self.register_date)
    }

    /// Seconds in the current state, as sabakan recomputes on every read.
    pub fn duration(&self, now: Timestamp) -> f64 {
        let ns = now.as_nanosecond() - self.since_ts().as_nanosecond();
        go_duration(ns) as f64 / 1e9
    }

    /// `trunc((retireDate - now) / 24h)` with Go's saturating `time.Sub`.
    pub fn days_before_retire(&self, now: Timestamp) -> i64 {
        let ns = go_duration(self.retire_date.as_nanosecond() - now.as_nanosecond());
        // Go: int(d.Hours() / 24), a float division truncated toward zero.
        (ns as f64 / 3.6e12 / 24.0) as i64
    }

    /// The JSON `GET /api/v1/machines` serves (Go's encoding of `sabakan.Machine`).
    pub fn rest_json(&self, now: Timestamp) -> Value {
        let list = |v: &[String]| {
            if v.is_empty() { Value::Null } else { json!(v) }
        };
        let labels = if self.labels.is_empty() {
            Value::Null
        } else {
            json!(self.labels)
        };
        json!({
            "spec": {
                "serial": self.serial,
                "labels": labels,
                "rack": self.rack,
                "index-in-rack": self.index_in_rack.unwrap_or_default(),
                "role": self.role,
                "ipv4": list(self.ipv4_list()),
                "ipv6": list(&self.ipv6),
                "register-date": go_time(self.register_date),
                "retire-date": go_time(self.retire_date),
                "bmc": {"ipv4": self.bmc_ipv4, "ipv6": "", "type": self.bmc_type},
            },
            "status": {
                "timestamp": go_time(self.since_ts()),
                "duration": self.duration(now),
                "state": self.state.rest(),
            },
            "info": {
                "network": {"ipv4": null},
                "bmc": {"ipv4": {"address": "", "netmask": "", "maskbits": 0, "gateway": ""}},
            },
        })
    }

    /// Every field of the GraphQL `Machine` type, for a selection to pick from.
    pub fn gql_json(&self, now: Timestamp) -> Value {
        // The resolver: null when there are none, else sorted by name.
        let labels = if self.labels.is_empty() {
            Value::Null
        } else {
            self.labels
                .iter()
                .map(|(k, v)| json!({"name": k, "value": v}))
                .collect()
        };
        json!({
            "spec": {
                "serial": self.serial,
                "labels": labels,
                "rack": self.rack,
                "indexInRack": self.index_in_rack.unwrap_or_default(),
                "role": self.role,
                "ipv4": self.ipv4_list(),
                "registerDate": go_time(self.register_date),
                "retireDate": go_time(self.retire_date),
                "bmc": {"bmcType": self.bmc_type, "ipv4": self.bmc_ipv4},
            },
            "status": self.gql_status(now),
            "info": {
                "network": {"ipv4": []},
                "bmc": {"ipv4": {"address": "", "netmask": "", "maskbits": 0, "gateway": ""}},
            },
        })
    }

    pub(crate) fn gql_status(&self, now: Timestamp) -> Value {
        json!({
            "state": self.state.gql(),
            "timestamp": go_time(self.since_ts()),
            "duration": self.duration(now),
        })
    }
}

/// A difference of instants as Go's `time.Sub` gives it: saturated to the int64 range of
/// nanoseconds (about ±292 years), which matters for a zero retire date.
fn go_duration(ns: i128) -> i64 {
    ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// RFC 3339 with the fraction only when there is one, in UTC (Go's `RFC3339Nano`).
fn go_time(t: Timestamp) -> String {
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_syntax_as_sabakan() {
        let long = "a".repeat(63);
        let too_long = "a".repeat(64);
        for (s, name_ok) in [
            ("a", true),
            ("A-b_c.9", true),
            (long.as_str(), true),
            (too_long.as_str(), false),
            ("", false),
            ("-a", false),
            ("a-", false),
            ("a/b", false),
            ("cke.cybozu.com/x", false),
            ("a b", false),
            ("é", false),
            ("a\n", false),
        ] {
            assert_eq!(is_valid_label_name(s), name_ok, "name {s:?}");
            assert_eq!(
                is_valid_label_value(s),
                name_ok || s.is_empty(),
                "value {s:?}"
            );
        }
    }

    #[test]
    fn transitions_as_sabakan() {
        use State::*;
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let permitted = [
            (Uninitialized, Healthy),
            (Uninitialized, Retiring),
            (Healthy, Unhealthy),
            (Healthy, Unreachable),
            (Healthy, Updating),
            (Healthy, Retiring),
            (Unhealthy, Healthy),
            (Unhealthy, Unreachable),
            (Unhealthy, Updating),
            (Unhealthy, Retiring),
            (Unreachable, Healthy),
            (Unreachable, Unhealthy),
            (Unreachable, Updating),
            (Unreachable, Retiring),
            (Updating, Uninitialized),
            (Retiring, Retired),
            (Retired, Uninitialized),
        ];
        for from in State::ALL {
            for to in State::ALL {
                let mut m = machine("s").state(from).since("2025-06-01T00:00:00Z");
                let got = m.set_state(to, now);
                if from == to {
                    assert_eq!(got, Ok(()));
                    assert_eq!(m.timestamp, Some("2025-06-01T00:00:00Z".parse().unwrap()));
                } else if permitted.contains(&(from, to)) {
                    assert_eq!(got, Ok(()), "{from} -> {to}");
                    assert_eq!((m.state, m.timestamp), (to, Some(now)));
                } else {
                    assert_eq!(got, Err(StateError::Forbidden { from, to }));
                    assert_eq!(m.state, from);
                }
            }
        }
        let mut keyed = machine("s").state(Retiring).encryption_keys(true);
        assert_eq!(
            keyed.set_state(Retired, now),
            Err(StateError::EncryptionKeyExists)
        );
    }

    #[test]
    fn days_truncate_toward_zero_and_saturate() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        for (retire, want) in [
            ("2026-01-02T00:00:00Z", 1),
            ("2026-01-01T23:59:59Z", 0),
            ("2025-12-31T00:00:01Z", 0),
            ("2025-12-31T00:00:00Z", -1),
            // Go's time.Sub saturates at about 292 years.
            ("0001-01-01T00:00:00Z", -106_751),
        ] {
            let m = machine("s").retire_date(retire);
            assert_eq!(m.days_before_retire(now), want, "{retire}");
        }
    }
}
