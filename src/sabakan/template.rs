//! CKE's cluster.yml, as a template (node entries without addresses) and as a current
//! configuration. Everything but the node list is kept as the template wrote it, in its order,
//! so the output is the template's cluster.yml with `nodes` filled in.

use super::k8s;
use super::model::{Taint, nullable};
use serde::{Deserialize, Serialize};
use serde_yaml_ng::{Mapping, Value};
use std::collections::{BTreeMap, HashSet};
use std::net::IpAddr;

/// The node label naming the machine role a node template is for.
pub const ROLE_LABEL: &str = "cke.cybozu.com/role";
/// The node label giving a worker template's share of the workers.
pub const WEIGHT_LABEL: &str = "cke.cybozu.com/weight";

/// One entry of `nodes` in CKE's schema (`cke.Node`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Node {
    #[serde(default)]
    pub address: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hostname: String,
    #[serde(default)]
    pub user: String,
    #[serde(default)]
    pub control_plane: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "nullable")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "nullable")]
    pub taints: Vec<Taint>,
}

/// A cluster.yml that is not a usable template or configuration: what is wrong, and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: {problem}")]
pub struct InvalidCluster {
    /// Where, e.g. `nodes[1].labels["cke.cybozu.com/weight"]`, or `(document)`.
    pub key: String,
    pub problem: String,
}

fn invalid(key: impl Into<String>, problem: impl std::fmt::Display) -> InvalidCluster {
    InvalidCluster {
        key: key.into(),
        problem: problem.to_string(),
    }
}

/// One node template with what the generator reads from it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeTemplate {
    pub node: Node,
    /// `cke.cybozu.com/role`; empty = any role.
    pub role: String,
    /// `cke.cybozu.com/weight`, 1.0 when absent.
    pub weight: f64,
}

/// A validated template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// The whole document as written.
    pub raw: Mapping,
    pub control_plane: NodeTemplate,
    /// In template order: ties between worker templates go to the earlier one.
    pub workers: Vec<NodeTemplate>,
    /// Taint keys a control plane may carry (`control_plane_tolerations`).
    pub tolerations: Vec<String>,
}

/// The typed view of the fields CKE validates; the rest stays in `raw`.
#[derive(Deserialize)]
struct View {
    #[serde(default)]
    name: String,
    #[serde(default, deserialize_with = "nullable")]
    nodes: Vec<Node>,
    #[serde(default, deserialize_with = "nullable")]
    control_plane_tolerations: Vec<String>,
    #[serde(default)]
    service_subnet: String,
    #[serde(default, deserialize_with = "nullable")]
    dns_servers: Vec<String>,
    #[serde(default)]
    options: Option<Options>,
}

#[derive(Deserialize, Default)]
struct Options {
    #[serde(default)]
    kubelet: Option<Kubelet>,
}

#[derive(Deserialize, Default)]
struct Kubelet {
    #[serde(default)]
    cri_endpoint: String,
}

fn parse_document(text: &str) -> Result<(Mapping, View), InvalidCluster> {
    let value: Value = serde_yaml_ng::from_str(text)
        .map_err(|e| invalid("(document)", format!("not YAML: {e}")))?;
    let Value::Mapping(raw) = value else {
        return Err(invalid(
            "(document)",
            "expected a mapping with name, nodes, service_subnet… (CKE's cluster.yml)",
        ));
    };
    let view: View = serde_yaml_ng::from_value(Value::Mapping(raw.clone()))
        .map_err(|e| invalid("(document)", e.to_string()))?;
    Ok((raw, view))
}

/// CKE's generic cluster rules (`Cluster.Validate`): name, service subnet, DNS servers, users,
/// addresses, label/annotation/taint syntax, tolerations, the kubelet's CRI endpoint.
fn validate_cluster(view: &View, is_template: bool) -> Result<(), InvalidCluster> {
    if view.name.is_empty() {
        return Err(invalid("name", "the cluster name is empty"));
    }
    cidr(&view.service_subnet).map_err(|p| invalid("service_subnet", p))?;
    for (i, a) in view.dns_servers.iter().enumerate() {
        if a.parse::<IpAddr>().is_err() {
            return Err(invalid(
                format!("dns_servers[{i}]"),
                format!("{a:?} is not an IP address"),
            ));
        }
    }
    for (i, t) in view.control_plane_tolerations.iter().enumerate() {
        k8s::qualified_name(t)
            .map_err(|p| invalid(format!("control_plane_tolerations[{i}]"), p))?;
    }
    let cri = view
        .options
        .as_ref()
        .and_then(|o| o.kubelet.as_ref())
        .map_or("", |k| k.cri_endpoint.as_str());
    if cri.is_empty() {
        return Err(invalid(
            "options.kubelet.cri_endpoint",
            "is empty: CKE requires it, e.g. unix:///run/containerd/containerd.sock",
        ));
    }
    let mut seen = HashSet::new();
    for (i, n) in view.nodes.iter().enumerate() {
        let at = |k: &str| format!("nodes[{i}]{k}");
        if is_template {
            if !n.address.is_empty() {
                return Err(invalid(
                    at(".address"),
                    format!(
                        "{:?}: a template's nodes have no address (the generator fills it in)",
                        n.address
                    ),
                ));
            }
        } else {
            if n.address.parse::<IpAddr>().is_err() {
                return Err(invalid(
                    at(".address"),
                    format!("{:?} is not an IP address", n.address),
                ));
            }
            if !seen.insert(n.address.as_str()) {
                return Err(invalid(
                    at(".address"),
                    format!("{} is listed twice", n.address),
                ));
            }
        }
        if n.user.is_empty() {
            return Err(invalid(at(".user"), "the SSH user is empty"));
        }
        for (k, v) in &n.labels {
            k8s::qualified_name(k).map_err(|p| invalid(at(&format!(".labels[{k:?}]")), p))?;
            k8s::label_value(v).map_err(|p| invalid(at(&format!(".labels[{k:?}]")), p))?;
        }
        let mut size = 0;
        for (k, v) in &n.annotations {
            k8s::qualified_name(k).map_err(|p| invalid(at(&format!(".annotations[{k:?}]")), p))?;
            size += k.len() + v.len();
        }
        if size > k8s::ANNOTATIONS_MAX_BYTES {
            return Err(invalid(
                at(".annotations"),
                format!("{size} bytes, more than 256 KiB"),
            ));
        }
        for (j, t) in n.taints.iter().enumerate() {
            let key = at(&format!(".taints[{j}]"));
            k8s::qualified_name(&t.key).map_err(|p| invalid(format!("{key}.key"), p))?;
            k8s::label_value(&t.value).map_err(|p| invalid(format!("{key}.value"), p))?;
            k8s::taint_effect(&t.effect).map_err(|p| invalid(format!("{key}.effect"), p))?;
        }
    }
    Ok(())
}

/// A subnet that is not in CIDR notation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a CIDR subnet such as 10.68.0.0/16")]
struct NotCidr(String);

fn cidr(s: &str) -> Result<(), NotCidr> {
    let bad = || NotCidr(s.to_owned());
    let (ip, len) = s.split_once('/').ok_or_else(bad)?;
    let ip: IpAddr = ip.parse().map_err(|_| bad())?;
    let len: u8 = len.parse().map_err(|_| bad())?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    if len > max {
        return Err(bad());
    }
    Ok(())
}

impl Template {
    /// Parses and validates a template (as CKE's docs/sabakan-integration.md has it): at least two
    /// nodes, exactly one control plane, with two or more worker templates each a distinct
    /// non-empty role, weights positive numbers; plus CKE's generic cluster rules.
    pub fn parse(text: &str) -> Result<Template, InvalidCluster> {
        let (raw, view) = parse_document(text)?;
        if view.nodes.len() < 2 {
            return Err(invalid(
                "nodes",
                format!(
                    "{} node template(s): a template needs one control plane and at least one worker",
                    view.nodes.len()
                ),
            ));
        }
        let cps: Vec<usize> = (0..view.nodes.len())
            .filter(|&i| view.nodes[i].control_plane)
            .collect();
        if cps.len() != 1 {
            return Err(invalid(
                "nodes",
                format!(
                    "{} control plane templates: exactly one node must have control_plane: true",
                    cps.len()
                ),
            ));
        }
        validate_cluster(&view, true)?;
        let mut control_plane = None;
        let mut workers = Vec::new();
        let mut roles = HashSet::new();
        // Two or more worker templates (all nodes but the one control plane).
        let several = view.nodes.len() > 2;
        for (i, node) in view.nodes.into_iter().enumerate() {
            let role = node.labels.get(ROLE_LABEL).cloned().unwrap_or_default();
            if node.control_plane {
                control_plane = Some(NodeTemplate {
                    node,
                    role,
                    weight: 1.0,
                });
                continue;
            }
            let key = |k: &str| format!("nodes[{i}].labels[{k:?}]");
            if several && role.is_empty() {
                return Err(invalid(
                    key(ROLE_LABEL),
                    "missing: with two or more worker templates, each needs its own role",
                ));
            }
            if !roles.insert(role.clone()) {
                return Err(invalid(
                    key(ROLE_LABEL),
                    format!(
                        "role {role:?} has two worker templates: give each template its own role"
                    ),
                ));
            }
            let weight = match node.labels.get(WEIGHT_LABEL) {
                None => 1.0,
                Some(w) => match w.parse::<f64>() {
                    Ok(x) if x.is_finite() && x > 0.0 => x,
                    _ => {
                        return Err(invalid(
                            key(WEIGHT_LABEL),
                            format!("{w:?} must be a number greater than 0, e.g. \"6.0\""),
                        ));
                    }
                },
            };
            workers.push(NodeTemplate { node, role, weight });
        }
        Ok(Template {
            raw,
            control_plane: control_plane.expect("checked: one control plane"),
            workers,
            tolerations: view.control_plane_tolerations,
        })
    }

    /// The worker template for a machine of `role`: the only one, or the one of that role.
    pub fn worker_for(&self, role: &str) -> Option<&NodeTemplate> {
        if self.workers.len() == 1 {
            return self.workers.first();
        }
        self.workers.iter().find(|t| t.role == role)
    }

    /// The template's document with `nodes` replaced.
    pub fn with_nodes(&self, nodes: &[Node]) -> Value {
        let mut raw = self.raw.clone();
        let nodes = serde_yaml_ng::to_value(nodes).expect("nodes serialise");
        raw.insert(Value::String("nodes".into()), nodes);
        Value::Mapping(raw)
    }
}

/// The current configuration: its text as read, and its nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Current {
    pub raw: Mapping,
    pub nodes: Vec<Node>,
}

impl Current {
    pub fn parse(text: &str) -> Result<Current, InvalidCluster> {
        let (raw, view) = parse_document(text)?;
        validate_cluster(&view, false)?;
        Ok(Current {
            raw,
            nodes: view.nodes,
        })
    }
}

/// A cluster document as YAML text that YAML 1.1 readers (`ckecli cluster set`) read back
/// unchanged.
pub fn to_yaml(doc: &Value) -> String {
    crate::yaml::to_string(doc).expect("a YAML value serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "name: cluster
nodes:
- user: cybozu
  control_plane: true
- user: cybozu
  control_plane: false
service_subnet: 10.68.0.0/16
options:
  kubelet:
    cri_endpoint: unix:///run/containerd/containerd.sock
";

    /// Every template rule of CKE's sabakan/template.go (before PR #796), one row each: an edit of
    /// the minimal template (the spec's first example) and the key the error must name, or None
    /// when valid.
    #[test]
    fn template_rules() {
        let two_workers = |a: &str, b: &str| {
            MINIMAL.replace(
                "- user: cybozu\n  control_plane: false\n",
                &format!("- user: cybozu\n  labels:\n{a}- user: cybozu\n  labels:\n{b}"),
            )
        };
        let cases: Vec<(&str, String, Option<&str>)> = vec![
            ("the spec's minimal template", MINIMAL.into(), None),
            (
                "one node only",
                MINIMAL.replace("- user: cybozu\n  control_plane: false\n", ""),
                Some("nodes"),
            ),
            (
                "no control plane",
                MINIMAL.replace("control_plane: true", "control_plane: false"),
                Some("nodes"),
            ),
            (
                "two control planes",
                MINIMAL.replace("control_plane: false", "control_plane: true"),
                Some("nodes"),
            ),
            (
                "two worker templates with roles",
                two_workers(
                    "    cke.cybozu.com/role: cs\n",
                    "    cke.cybozu.com/role: ss\n",
                ),
                None,
            ),
            (
                "two worker templates, one without role",
                two_workers("    cke.cybozu.com/role: cs\n", "    foo: bar\n"),
                Some("nodes[2].labels[\"cke.cybozu.com/role\"]"),
            ),
            (
                "two worker templates of one role",
                two_workers(
                    "    cke.cybozu.com/role: cs\n",
                    "    cke.cybozu.com/role: cs\n",
                ),
                Some("nodes[2].labels[\"cke.cybozu.com/role\"]"),
            ),
            (
                "weight not a number",
                two_workers(
                    "    cke.cybozu.com/role: cs\n    cke.cybozu.com/weight: six\n",
                    "    cke.cybozu.com/role: ss\n",
                ),
                Some("nodes[1].labels[\"cke.cybozu.com/weight\"]"),
            ),
            (
                "weight zero",
                two_workers(
                    "    cke.cybozu.com/role: cs\n",
                    "    cke.cybozu.com/role: ss\n    cke.cybozu.com/weight: \"0\"\n",
                ),
                Some("nodes[2].labels[\"cke.cybozu.com/weight\"]"),
            ),
            (
                "no name",
                MINIMAL.replace("name: cluster", "name: \"\""),
                Some("name"),
            ),
            (
                "bad subnet",
                MINIMAL.replace("10.68.0.0/16", "10.68.0.0"),
                Some("service_subnet"),
            ),
            (
                "no user",
                MINIMAL.replace(
                    "- user: cybozu\n  control_plane: true",
                    "- user: \"\"\n  control_plane: true",
                ),
                Some("nodes[0].user"),
            ),
            (
                "an address",
                MINIMAL.replace(
                    "- user: cybozu\n  control_plane: true",
                    "- user: cybozu\n  address: 10.0.0.1\n  control_plane: true",
                ),
                Some("nodes[0].address"),
            ),
            (
                "no CRI endpoint",
                MINIMAL.replace(
                    "    cri_endpoint: unix:///run/containerd/containerd.sock\n",
                    "    cri_endpoint: \"\"\n",
                ),
                Some("options.kubelet.cri_endpoint"),
            ),
            (
                "bad label",
                MINIMAL.replace(
                    "  control_plane: false\n",
                    "  control_plane: false\n  labels:\n    \"a b\": x\n",
                ),
                Some("nodes[1].labels"),
            ),
            (
                "bad taint effect",
                MINIMAL.replace(
                    "  control_plane: false\n",
                    "  control_plane: false\n  taints:\n  - key: k\n    effect: Never\n",
                ),
                Some("nodes[1].taints[0].effect"),
            ),
            (
                "bad toleration",
                format!("{MINIMAL}control_plane_tolerations: [\"-x\"]\n"),
                Some("control_plane_tolerations[0]"),
            ),
            ("not a mapping", "- 1\n".into(), Some("(document)")),
        ];
        for (what, text, want) in cases {
            match (Template::parse(&text), want) {
                (Ok(_), None) => {}
                (Err(e), Some(key)) => {
                    assert!(e.key.starts_with(key), "{what}: {e} is not about {key}")
                }
                (got, want) => panic!("{what}: got {got:?}, want error at {want:?}"),
            }
        }
    }

    #[test]
    fn weights_default_to_one_and_roles_pick_templates() {
        let t = Template::parse(&MINIMAL.replace(
            "- user: cybozu\n  control_plane: false\n",
            "- user: cybozu\n  labels:\n    cke.cybozu.com/role: cs\n    cke.cybozu.com/weight: \"6.0\"\n\
             - user: cybozu\n  labels:\n    cke.cybozu.com/role: ss\n",
        ))
        .unwrap();
        assert_eq!(t.workers[0].weight, 6.0);
        assert_eq!(t.workers[1].weight, 1.0);
        assert_eq!(t.worker_for("ss").unwrap().role, "ss");
        assert!(t.worker_for("gpu").is_none());
        let single = Template::parse(MINIMAL).unwrap();
        assert!(single.worker_for("anything").is_some());
    }

    #[test]
    fn output_keeps_the_template_fields_in_order() {
        let t = Template::parse(&format!("{MINIMAL}dns_servers: [\"1.1.1.1\"]\n")).unwrap();
        let text = to_yaml(&t.with_nodes(&[]));
        let keys: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with(' ') && !l.starts_with('-'))
            .map(|l| l.split(':').next().unwrap())
            .collect();
        assert_eq!(
            keys,
            ["name", "nodes", "service_subnet", "options", "dns_servers"]
        );
    }
}
