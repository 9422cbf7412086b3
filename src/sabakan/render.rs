//! A machine and its node template → a node of the cluster configuration (CKE's
//! sabakan/generator.go).

use super::model::{Machine, Taint};
use super::template::{Node, NodeTemplate};

/// The taint key CKE uses for a machine's state.
pub const STATE_TAINT: &str = "cke.cybozu.com/state";

/// Renders one node. Later label writes win: sabakan's labels, then the template's, then the
/// labels derived from the machine's fields. The machine must have an address.
///
/// The docs also list `failure-domain.beta.kubernetes.io/zone`; CKE's code never sets it
/// (sabakan/generator.go), and neither does this, so nodes look the same as under CKE.
pub fn node(m: &Machine, t: &NodeTemplate) -> Node {
    let tmpl = &t.node;
    let (register_date, register_month) = m.register_date.rfc3339_and_month();
    let (retire_date, retire_month) = m.retire_date.rfc3339_and_month();
    let mut annotations = tmpl.annotations.clone();
    annotations.insert("cke.cybozu.com/serial".into(), m.serial.clone());
    annotations.insert("cke.cybozu.com/register-date".into(), register_date);
    annotations.insert("cke.cybozu.com/retire-date".into(), retire_date);

    // Collected in write order and built at once: a stable sort keeps equal keys in that order
    // and the map keeps the last, so later writes win (and one bulk build is cheaper than
    // inserting one by one, for 10,000 nodes).
    let mut labels: Vec<(String, String)> =
        Vec::with_capacity(m.labels.len() + tmpl.labels.len() + 10);
    labels.extend(
        m.labels
            .iter()
            .map(|(k, v)| (format!("sabakan.cke.cybozu.com/{k}"), v.clone())),
    );
    labels.extend(tmpl.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    labels.extend([
        ("cke.cybozu.com/rack".to_owned(), m.rack.to_string()),
        (
            "cke.cybozu.com/index-in-rack".to_owned(),
            m.index_in_rack.to_string(),
        ),
        ("cke.cybozu.com/role".to_owned(), m.role.clone()),
        ("cke.cybozu.com/retire-month".to_owned(), retire_month),
        ("cke.cybozu.com/register-month".to_owned(), register_month),
        (format!("node-role.kubernetes.io/{}", m.role), "true".into()),
    ]);
    if tmpl.control_plane {
        labels.push(("node-role.kubernetes.io/master".into(), "true".into()));
        labels.push((
            "node-role.kubernetes.io/control-plane".into(),
            "true".into(),
        ));
    }
    labels.push((
        "topology.kubernetes.io/zone".into(),
        format!("rack{}", m.rack),
    ));
    let labels: std::collections::BTreeMap<String, String> = labels.into_iter().collect();

    let mut taints = tmpl.taints.clone();
    if let Some((value, effect)) = m.state.taint() {
        taints.push(Taint {
            key: STATE_TAINT.into(),
            value: value.into(),
            effect: effect.into(),
        });
    }

    Node {
        address: m.address().unwrap_or_default().to_owned(),
        hostname: String::new(),
        user: tmpl.user.clone(),
        control_plane: tmpl.control_plane,
        annotations,
        labels,
        taints,
    }
}

/// Whether a node's `cke.cybozu.com/state` taint is the one its machine's state calls for (the
/// first such taint counts, as in CKE).
pub fn has_valid_state_taint(n: &Node, m: &Machine) -> bool {
    let have = n
        .taints
        .iter()
        .find(|t| t.key == STATE_TAINT)
        .map(|t| (t.value.as_str(), t.effect.as_str()));
    have == m.state.taint()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sabakan::model::{Stamp, State};
    use std::collections::BTreeMap;

    fn machine(state: State) -> Machine {
        Machine {
            serial: "abc123".into(),
            labels: vec![
                ("product".into(), "R640".into()),
                ("datacenter".into(), "dc1".into()),
            ],
            rack: 7,
            index_in_rack: 3,
            role: "cs".into(),
            ipv4: vec!["10.0.7.3".into(), "10.1.7.3".into()],
            register_date: Stamp::parse("2024-02-03T04:05:06Z").unwrap(),
            retire_date: Stamp::parse("2029-12-31T23:00:00-02:00").unwrap(),
            bmc_type: "IPMI-2.0".into(),
            state,
            duration: 0.0,
        }
    }

    fn template(control_plane: bool) -> NodeTemplate {
        NodeTemplate {
            node: Node {
                user: "cybozu".into(),
                control_plane,
                annotations: BTreeMap::from([("note".into(), "x".into())]),
                labels: BTreeMap::from([
                    ("cke.cybozu.com/role".into(), "compute".into()),
                    ("sabakan.cke.cybozu.com/product".into(), "template".into()),
                    ("team".into(), "infra".into()),
                ]),
                taints: vec![Taint {
                    key: "dedicated".into(),
                    value: "cs".into(),
                    effect: "NoSchedule".into(),
                }],
                ..Node::default()
            },
            role: "compute".into(),
            weight: 1.0,
        }
    }

    /// The label and annotation tables of the spec (as CKE's code renders them).
    #[test]
    fn labels_and_annotations_from_machine_fields() {
        let n = node(&machine(State::Healthy), &template(false));
        let want_labels = [
            ("sabakan.cke.cybozu.com/datacenter", "dc1"),
            // The template's label wins over sabakan's.
            ("sabakan.cke.cybozu.com/product", "template"),
            ("team", "infra"),
            ("cke.cybozu.com/rack", "7"),
            ("cke.cybozu.com/index-in-rack", "3"),
            // The machine's role wins over the template's.
            ("cke.cybozu.com/role", "cs"),
            ("cke.cybozu.com/retire-month", "2029-12"),
            ("cke.cybozu.com/register-month", "2024-02"),
            ("node-role.kubernetes.io/cs", "true"),
            ("topology.kubernetes.io/zone", "rack7"),
        ];
        let got: Vec<(&str, &str)> = n
            .labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut want = want_labels.to_vec();
        want.sort();
        assert_eq!(got, want);
        let want_annotations = [
            ("cke.cybozu.com/register-date", "2024-02-03T04:05:06Z"),
            ("cke.cybozu.com/retire-date", "2029-12-31T23:00:00-02:00"),
            ("cke.cybozu.com/serial", "abc123"),
            ("note", "x"),
        ];
        let got: Vec<(&str, &str)> = n
            .annotations
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(got, want_annotations);
        assert_eq!(n.address, "10.0.7.3");
        assert_eq!(n.user, "cybozu");
        assert!(!n.control_plane);
        assert!(
            !n.labels
                .contains_key("failure-domain.beta.kubernetes.io/zone")
        );
    }

    #[test]
    fn control_planes_get_the_master_labels() {
        let n = node(&machine(State::Healthy), &template(true));
        assert!(n.control_plane);
        assert_eq!(n.labels["node-role.kubernetes.io/master"], "true");
        assert_eq!(n.labels["node-role.kubernetes.io/control-plane"], "true");
    }

    /// The spec's taint table, and no state taint for the other states.
    #[test]
    fn state_taints() {
        let cases = [
            (State::Uninitialized, None),
            (State::Healthy, None),
            (State::Unhealthy, None),
            (State::Unreachable, Some(("unreachable", "NoSchedule"))),
            (State::Updating, None),
            (State::Retiring, Some(("retiring", "NoExecute"))),
            (State::Retired, Some(("retired", "NoExecute"))),
        ];
        for (state, want) in cases {
            let m = machine(state);
            let n = node(&m, &template(false));
            assert_eq!(
                n.taints[0].key, "dedicated",
                "{state}: template taints first"
            );
            let got = n
                .taints
                .iter()
                .find(|t| t.key == STATE_TAINT)
                .map(|t| (t.value.as_str(), t.effect.as_str()));
            assert_eq!(got, want, "{state}");
            assert!(has_valid_state_taint(&n, &m), "{state}");
            for other in State::ALL.into_iter().filter(|s| s.taint() != want) {
                assert!(
                    !has_valid_state_taint(&n, &machine(other)),
                    "{state} vs {other}"
                );
            }
        }
    }
}
