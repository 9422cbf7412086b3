//! Which machines a search selects: GraphQL `MachineParams` (gql/match.go) and the REST
//! machine query (query.go), with sabakan's rules.

use crate::sabakan::machine::{Machine, State};
use jiff::Timestamp;
use std::collections::HashMap;

/// A coerced `MachineParams` input. An empty list is no condition, as a null one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MachineParams {
    pub labels: Vec<(String, String)>,
    pub racks: Vec<i64>,
    pub roles: Vec<String>,
    pub states: Vec<State>,
    pub min_days_before_retire: Option<i64>,
}

/// `MatchMachine`: `having` needs every label, any listed rack/role/state and at least
/// `minDaysBeforeRetire` days left; `notHaving` excludes any label match, any listed
/// rack/role/state and at least that many days left. `None` is no condition.
pub fn matches(
    m: &Machine,
    having: Option<&MachineParams>,
    not_having: Option<&MachineParams>,
    now: Timestamp,
) -> bool {
    let has_label = |(k, v): &(String, String)| m.labels.get(k) == Some(v);
    fn any_of<T: PartialEq>(list: &[T], x: &T, if_empty: bool) -> bool {
        if list.is_empty() {
            if_empty
        } else {
            list.contains(x)
        }
    }
    let rack = i64::from(m.rack);
    if let Some(h) = having
        && (!h.labels.iter().all(has_label)
            || !any_of(&h.racks, &rack, true)
            || !any_of(&h.roles, &m.role, true)
            || !any_of(&h.states, &m.state, true))
    {
        return false;
    }
    if let Some(n) = not_having
        && (n.labels.iter().any(has_label)
            || any_of(&n.racks, &rack, false)
            || any_of(&n.roles, &m.role, false)
            || any_of(&n.states, &m.state, false))
    {
        return false;
    }
    let days = m.days_before_retire(now);
    if having
        .and_then(|h| h.min_days_before_retire)
        .is_some_and(|min| min > days)
    {
        return false;
    }
    if not_having
        .and_then(|n| n.min_days_before_retire)
        .is_some_and(|min| min <= days)
    {
        return false;
    }
    true
}

/// A REST query `?serial=…&without-role=…` failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// `x` and `without-x` together (sabakan: 400).
    Conflict,
    /// A `labels`/`without-labels` item without `=` (sabakan: 500).
    BadLabels(String),
}

/// sabakan's `Query`: the first value of each parameter; comma-separated lists.
pub struct RestQuery(HashMap<String, String>);

const KEYS: [&str; 8] = [
    "serial", "rack", "role", "ipv4", "ipv6", "bmc-type", "state", "labels",
];

impl RestQuery {
    pub fn parse(raw: &str) -> Result<RestQuery, QueryError> {
        let mut q = HashMap::new();
        for (k, v) in form_urlencoded::parse(raw.as_bytes()) {
            q.entry(k.into_owned()).or_insert_with(|| v.into_owned());
        }
        let q = RestQuery(q);
        if KEYS
            .iter()
            .any(|k| !q.get(k).is_empty() && !q.get(&format!("without-{k}")).is_empty())
        {
            return Err(QueryError::Conflict);
        }
        Ok(q)
    }

    fn get(&self, k: &str) -> &str {
        self.0.get(k).map(String::as_str).unwrap_or_default()
    }

    fn list(&self, k: &str) -> Option<Vec<&str>> {
        let v = self.get(k);
        (!v.is_empty()).then(|| v.split(',').collect())
    }

    /// `Query.Match`.
    pub fn matches(&self, m: &Machine) -> Result<bool, QueryError> {
        let rack = m.rack.to_string();
        let state = m.state.rest();
        let one = |x: &str| vec![x.to_owned()];
        let fields: [(&str, Vec<String>); 7] = [
            ("serial", one(&m.serial)),
            ("ipv4", m.ipv4_list().to_vec()),
            ("ipv6", m.ipv6.clone()),
            ("rack", one(&rack)),
            ("role", one(&m.role)),
            ("bmc-type", one(&m.bmc_type)),
            ("state", one(state)),
        ];
        for (k, have) in &fields {
            if let Some(want) = self.list(k)
                && !want.iter().any(|w| have.iter().any(|h| h == w))
            {
                return Ok(false);
            }
            if let Some(not) = self.list(&format!("without-{k}"))
                && not.iter().any(|w| have.iter().any(|h| h == w))
            {
                return Ok(false);
            }
        }
        let pairs = |k: &str| -> Result<Option<Vec<(String, String)>>, QueryError> {
            self.list(k)
                .map(|items| {
                    items
                        .into_iter()
                        .map(|item| {
                            item.split_once('=')
                                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                                .ok_or_else(|| {
                                    QueryError::BadLabels(format!("invalid query in {k}: {item}"))
                                })
                        })
                        .collect()
                })
                .transpose()
        };
        let has = |(k, v): &(String, String)| m.labels.get(k) == Some(v);
        if let Some(want) = pairs("labels")?
            && !want.iter().all(has)
        {
            return Ok(false);
        }
        // Excluded only when every listed label matches.
        if let Some(not) = pairs("without-labels")?
            && not.iter().all(has)
        {
            return Ok(false);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sabakan::machine::machine;

    fn p() -> MachineParams {
        MachineParams::default()
    }

    /// The cases of sabakan's gql/match_test.go, and the rules of its gql/match.go.
    #[test]
    fn machine_params_match_as_sabakan() {
        let now: Timestamp = "2018-11-26T00:00:00Z".parse().unwrap();
        let m = machine("s")
            .label("foo", "bar")
            .label("foo2", "bar2")
            .rack(2)
            .role("worker")
            .state(State::Unhealthy)
            .retire_date("2019-01-25T00:00:00Z"); // 60 days later
        let lab = |k: &str, v: &str| vec![(k.to_owned(), v.to_owned())];
        let cases: Vec<(&str, Option<MachineParams>, Option<MachineParams>, bool)> = vec![
            ("trivial", Some(p()), Some(p()), true),
            ("nulls", None, None, true),
            (
                "label-match",
                Some(MachineParams {
                    labels: lab("foo", "bar"),
                    ..p()
                }),
                None,
                true,
            ),
            (
                "label-mismatch",
                Some(MachineParams {
                    labels: lab("foo", "zot"),
                    ..p()
                }),
                None,
                false,
            ),
            (
                "label-missing",
                Some(MachineParams {
                    labels: lab("nope", "bar"),
                    ..p()
                }),
                None,
                false,
            ),
            (
                "not-label-found",
                None,
                Some(MachineParams {
                    labels: lab("foo2", "bar2"),
                    ..p()
                }),
                false,
            ),
            (
                "not-label-other-value",
                None,
                Some(MachineParams {
                    labels: lab("foo2", "x"),
                    ..p()
                }),
                true,
            ),
            (
                "rack-any-of",
                Some(MachineParams {
                    racks: vec![0, 2],
                    ..p()
                }),
                None,
                true,
            ),
            (
                "rack-mismatch",
                Some(MachineParams {
                    racks: vec![0, 1],
                    ..p()
                }),
                None,
                false,
            ),
            (
                "not-rack",
                None,
                Some(MachineParams {
                    racks: vec![2],
                    ..p()
                }),
                false,
            ),
            (
                "role",
                Some(MachineParams {
                    roles: vec!["worker".into()],
                    ..p()
                }),
                None,
                true,
            ),
            (
                "not-role-boot",
                None,
                Some(MachineParams {
                    roles: vec!["boot".into()],
                    ..p()
                }),
                true,
            ),
            (
                "not-role",
                None,
                Some(MachineParams {
                    roles: vec!["worker".into()],
                    ..p()
                }),
                false,
            ),
            (
                "states-any-of",
                Some(MachineParams {
                    states: vec![State::Unhealthy, State::Unreachable],
                    ..p()
                }),
                None,
                true,
            ),
            (
                "states-mismatch",
                Some(MachineParams {
                    states: vec![State::Healthy],
                    ..p()
                }),
                None,
                false,
            ),
            (
                "not-state",
                None,
                Some(MachineParams {
                    states: vec![State::Unhealthy],
                    ..p()
                }),
                false,
            ),
            (
                "days-enough",
                Some(MachineParams {
                    min_days_before_retire: Some(60),
                    ..p()
                }),
                None,
                true,
            ),
            (
                "days-short",
                Some(MachineParams {
                    min_days_before_retire: Some(61),
                    ..p()
                }),
                None,
                false,
            ),
            (
                "not-days-reached",
                None,
                Some(MachineParams {
                    min_days_before_retire: Some(60),
                    ..p()
                }),
                false,
            ),
            (
                "not-days-unreached",
                None,
                Some(MachineParams {
                    min_days_before_retire: Some(61),
                    ..p()
                }),
                true,
            ),
        ];
        for (name, h, n, want) in cases {
            assert_eq!(matches(&m, h.as_ref(), n.as_ref(), now), want, "{name}");
        }
    }

    #[test]
    fn rest_query_as_sabakan() {
        let m = machine("s1")
            .rack(3)
            .role("cs")
            .ipv4("10.0.0.1")
            .state(State::Unreachable)
            .label("a", "1")
            .label("b", "2");
        for (q, want) in [
            ("", Ok(true)),
            ("serial=s0,s1", Ok(true)),
            ("serial=s0", Ok(false)),
            ("rack=3&role=cs", Ok(true)),
            ("without-role=boot", Ok(true)),
            ("without-role=cs", Ok(false)),
            ("state=unreachable", Ok(true)),
            ("state=UNREACHABLE", Ok(false)),
            ("ipv4=10.0.0.1", Ok(true)),
            ("labels=a=1,b=2", Ok(true)),
            ("labels=a=1,b=3", Ok(false)),
            ("without-labels=a=1,b=3", Ok(true)),
            ("without-labels=a=1,b=2", Ok(false)),
            (
                "labels=a",
                Err(QueryError::BadLabels("invalid query in labels: a".into())),
            ),
            // Only the first value counts.
            ("role=ss&role=cs", Ok(false)),
        ] {
            let got = RestQuery::parse(q).and_then(|q| q.matches(&m));
            assert_eq!(got, want, "{q}");
        }
        assert_eq!(
            RestQuery::parse("role=cs&without-role=boot").err(),
            Some(QueryError::Conflict)
        );
    }
}
