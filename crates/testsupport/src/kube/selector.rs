//! Label selectors (equality- and set-based) and the `metadata.name` / `metadata.namespace`
//! field selectors.

use crate::kube::resource::Resource;
use kube::core::{Expression, Selector, SelectorExt};
use serde_json::Value;
use std::collections::BTreeMap;

/// A selector the fake apiserver refuses (400), in the apiserver's words: the message is the
/// response's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("unbalanced parentheses in {0:?}")]
    Unbalanced(String),
    #[error("unable to parse requirement: {0:?}")]
    Requirement(String),
    #[error("invalid selector: '{0}'; can't understand '{0}'")]
    NoOperator(String),
    /// A field the resource is not indexed by.
    #[error("field label not supported: {0}")]
    FieldNotSupported(String),
    #[error("matchLabels[{0:?}] is not a string")]
    NotAString(String),
    #[error("{0:?} is not a valid label selector operator")]
    Operator(String),
}

/// A parsed `labelSelector`: every requirement must hold, matched by kube's own [`Selector`]
/// (kube has no parser of the query text: that is this module's).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSelector(Selector);

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        for part in split_top(s)? {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_req(part)?);
        }
        Ok(LabelSelector(reqs.into_iter().collect()))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels: BTreeMap<String, String> = obj
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect();
        self.0.matches(&labels)
    }
}

/// Splits on commas outside parentheses.
fn split_top(s: &str) -> Result<Vec<&str>, SelectorError> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(SelectorError::Unbalanced(s.to_owned()));
        }
    }
    if depth != 0 {
        return Err(SelectorError::Unbalanced(s.to_owned()));
    }
    out.push(&s[start..]);
    Ok(out)
}

fn parse_req(part: &str) -> Result<Expression, SelectorError> {
    let bad = || SelectorError::Requirement(part.to_owned());
    if let Some(k) = part.strip_prefix('!') {
        return Ok(Expression::DoesNotExist(key(k.trim()).ok_or_else(bad)?));
    }
    if let Some((k, v)) = part.split_once("!=") {
        return Ok(Expression::NotEqual(
            key(k.trim()).ok_or_else(bad)?,
            v.trim().to_string(),
        ));
    }
    if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
        return Ok(Expression::Equal(
            key(k.trim()).ok_or_else(bad)?,
            v.trim().to_string(),
        ));
    }
    if let Some(open) = part.find('(') {
        let head = part[..open].trim();
        let body = part[open + 1..].strip_suffix(')').ok_or_else(bad)?;
        let values = body.split(',').map(|v| v.trim().to_string()).collect();
        let (k, op) = head.rsplit_once(char::is_whitespace).ok_or_else(bad)?;
        let k = key(k.trim()).ok_or_else(bad)?;
        return match op {
            "in" => Ok(Expression::In(k, values)),
            "notin" => Ok(Expression::NotIn(k, values)),
            _ => Err(bad()),
        };
    }
    Ok(Expression::Exists(key(part).ok_or_else(bad)?))
}

fn key(k: &str) -> Option<String> {
    let ok = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    ok.then(|| k.to_string())
}

/// A parsed `fieldSelector`: `metadata.name` and `metadata.namespace` (which every resource
/// supports) and the few fields the apiserver indexes for some built-in kinds (see
/// [`FieldSelector::parse_for`]), with `=`, `==` and `!=`. Others are refused (400), as the
/// apiserver does for fields a resource does not index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

/// The fields beyond `metadata.*` a kind can be selected by (the apiserver's
/// `GetAttrs`/`AddFieldLabelConversionFunc` of each built-in), and what a missing field reads as.
fn extra_fields(res: &Resource) -> &'static [(&'static str, &'static str)] {
    match (res.group, res.kind) {
        ("", "Pod") => &[
            ("spec.nodeName", ""),
            ("spec.restartPolicy", ""),
            ("spec.schedulerName", ""),
            ("spec.serviceAccountName", ""),
            ("status.phase", ""),
            ("status.podIP", ""),
        ],
        ("", "Node") => &[("spec.unschedulable", "false")],
        ("", "Namespace") => &[("status.phase", "")],
        ("", "Secret") => &[("type", "")],
        // What `kubectl describe` selects an object's Events by, and `kubectl get events
        // --field-selector` users most often.
        ("", "Event") => &[
            ("involvedObject.apiVersion", ""),
            ("involvedObject.fieldPath", ""),
            ("involvedObject.kind", ""),
            ("involvedObject.name", ""),
            ("involvedObject.namespace", ""),
            ("involvedObject.resourceVersion", ""),
            ("involvedObject.uid", ""),
            ("reason", ""),
            ("reportingComponent", ""),
            ("type", ""),
        ],
        _ => &[],
    }
}

impl FieldSelector {
    /// Parses a selector of `metadata.name` and `metadata.namespace` only.
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        Self::parse_with(s, &[])
    }

    /// Parses a selector for `res`: Pods also by `spec.nodeName`, `status.phase` and a few
    /// more, Nodes by `spec.unschedulable`, Namespaces by `status.phase`, Secrets by `type`,
    /// Events by `involvedObject.*`, `reason` and `type`.
    pub fn parse_for(s: &str, res: &Resource) -> Result<Self, SelectorError> {
        Self::parse_with(s, extra_fields(res))
    }

    fn parse_with(s: &str, extra: &[(&str, &str)]) -> Result<Self, SelectorError> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, eq, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (f, true, v)
            } else {
                return Err(SelectorError::NoOperator(part.to_owned()));
            };
            let field = field.trim();
            let known = field == "metadata.name"
                || field == "metadata.namespace"
                || extra.iter().any(|(f, _)| *f == field);
            if !known {
                return Err(SelectorError::FieldNotSupported(field.to_owned()));
            }
            out.push((field.to_string(), eq, value.trim().to_string()));
        }
        Ok(FieldSelector(out))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, eq, value)| {
            let ptr = format!("/{}", field.replace('.', "/"));
            let actual = match obj.pointer(&ptr) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n)) => n.to_string(),
                // Unset reads as its zero value: `false` for spec.unschedulable, else "".
                _ if field == "spec.unschedulable" => "false".to_string(),
                _ => String::new(),
            };
            (actual == *value) == *eq
        })
    }
}

/// A `metav1.LabelSelector` object (`matchLabels` and `matchExpressions`), as Deployments,
/// PodDisruptionBudgets and Services carry it, as a [`LabelSelector`].
pub fn label_selector_object(v: &Value) -> Result<LabelSelector, SelectorError> {
    let mut reqs = Vec::new();
    if let Some(m) = v.get("matchLabels").and_then(Value::as_object) {
        for (k, val) in m {
            let val = val
                .as_str()
                .ok_or_else(|| SelectorError::NotAString(k.clone()))?;
            reqs.push(Expression::Equal(k.clone(), val.to_string()));
        }
    }
    for e in v
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e["key"].as_str().unwrap_or_default().to_string();
        let values = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        reqs.push(match e["operator"].as_str().unwrap_or_default() {
            "In" => Expression::In(key, values),
            "NotIn" => Expression::NotIn(key, values),
            "Exists" => Expression::Exists(key),
            "DoesNotExist" => Expression::DoesNotExist(key),
            other => return Err(SelectorError::Operator(other.to_owned())),
        });
    }
    Ok(LabelSelector(reqs.into_iter().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({ "metadata": { "name": "a", "namespace": "ns", "labels": labels } })
    }

    #[test]
    fn label_selectors() {
        let o = obj(json!({ "role": "worker", "zone": "z1", "flag": "" }));
        let cases = [
            ("", true),
            ("role=worker", true),
            ("role==worker", true),
            ("role=master", false),
            ("role!=master", true),
            ("role!=worker", false),
            ("missing!=x", true),
            ("role in (master, worker)", true),
            ("role in (master)", false),
            ("role notin (master)", true),
            ("missing notin (x)", true),
            ("zone notin (z1,z2)", false),
            ("flag", true),
            ("missing", false),
            ("!missing", true),
            ("!role", false),
            ("role=worker,zone in (z1,z2),!missing", true),
            ("role=worker,zone=z2", false),
            ("example.com/key=v", false),
        ];
        for (sel, want) in cases {
            let s = LabelSelector::parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(s.matches(&o), want, "{sel}");
        }
    }

    #[test]
    fn bad_label_selectors() {
        use SelectorError::*;
        for (sel, want) in [
            ("role in (a", Unbalanced("role in (a".into())),
            ("role in a)", Unbalanced("role in a)".into())),
            ("=x", Requirement("=x".into())),
            ("role between (a)", Requirement("role between (a)".into())),
            ("a b", Requirement("a b".into())),
        ] {
            assert_eq!(LabelSelector::parse(sel), Err(want), "{sel}");
        }
        assert_eq!(
            Requirement("=x".into()).to_string(),
            "unable to parse requirement: \"=x\""
        );
    }

    #[test]
    fn field_selectors() {
        let o = obj(json!({}));
        let cases = [
            ("metadata.name=a", true),
            ("metadata.name==a", true),
            ("metadata.name=b", false),
            ("metadata.name!=b", true),
            ("metadata.namespace=ns,metadata.name=a", true),
            ("metadata.namespace=other", false),
        ];
        for (sel, want) in cases {
            assert_eq!(
                FieldSelector::parse(sel).unwrap().matches(&o),
                want,
                "{sel}"
            );
        }
        assert_eq!(
            FieldSelector::parse("spec.nodeName=x"),
            Err(SelectorError::FieldNotSupported("spec.nodeName".into()))
        );
        let no_operator = FieldSelector::parse("metadata.name").unwrap_err();
        assert_eq!(
            no_operator,
            SelectorError::NoOperator("metadata.name".into())
        );
        assert_eq!(
            no_operator.to_string(),
            "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
        );
    }

    #[test]
    fn pod_and_node_field_selectors() {
        use crate::kube::resource::{MACHINE, NODE, POD};
        let pod = json!({
            "metadata": { "name": "p", "namespace": "ns" },
            "spec": { "nodeName": "n1" },
            "status": { "phase": "Running" },
        });
        let cases = [
            ("spec.nodeName=n1", true),
            ("spec.nodeName=n2", false),
            ("spec.nodeName!=n2", true),
            ("spec.nodeName=n1,status.phase=Running", true),
            ("spec.nodeName=n1,status.phase!=Running", false),
            ("status.phase=Succeeded", false),
            // An unscheduled Pod has no node: selected by the empty value.
            ("spec.schedulerName=", true),
        ];
        for (sel, want) in cases {
            let s = FieldSelector::parse_for(sel, &POD).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(s.matches(&pod), want, "{sel}");
        }
        let node = json!({ "metadata": { "name": "n" } });
        let cordoned = json!({ "metadata": { "name": "n" }, "spec": { "unschedulable": true } });
        let sel = FieldSelector::parse_for("spec.unschedulable=false", &NODE).unwrap();
        assert!(sel.matches(&node));
        assert!(!sel.matches(&cordoned));
        for (sel, res) in [
            ("spec.nodeName=n1", &MACHINE),
            ("spec.unschedulable=true", &POD),
        ] {
            let e = FieldSelector::parse_for(sel, res).unwrap_err();
            let field = sel.split('=').next().unwrap();
            assert_eq!(e, SelectorError::FieldNotSupported(field.into()));
            assert_eq!(e.to_string(), format!("field label not supported: {field}"));
        }
    }

    #[test]
    fn label_selector_objects() {
        let o = obj(json!({ "app": "web", "tier": "front" }));
        let cases = [
            (json!({}), Some(true)),
            (json!({ "matchLabels": { "app": "web" } }), Some(true)),
            (json!({ "matchLabels": { "app": "db" } }), Some(false)),
            (
                json!({ "matchExpressions": [{ "key": "tier", "operator": "In", "values": ["front"] }] }),
                Some(true),
            ),
            (
                json!({ "matchExpressions": [{ "key": "tier", "operator": "NotIn", "values": ["front"] }] }),
                Some(false),
            ),
            (
                json!({ "matchLabels": { "app": "web" }, "matchExpressions": [{ "key": "x", "operator": "DoesNotExist" }] }),
                Some(true),
            ),
            (
                json!({ "matchExpressions": [{ "key": "x", "operator": "Exists" }] }),
                Some(false),
            ),
            (
                json!({ "matchExpressions": [{ "key": "x", "operator": "Near" }] }),
                None,
            ),
        ];
        for (sel, want) in cases {
            let got = label_selector_object(&sel).ok().map(|s| s.matches(&o));
            assert_eq!(got, want, "{sel}");
        }
        for (sel, want) in [
            (
                json!({ "matchExpressions": [{ "key": "x", "operator": "Near" }] }),
                SelectorError::Operator("Near".into()),
            ),
            (
                json!({ "matchLabels": { "app": 1 } }),
                SelectorError::NotAString("app".into()),
            ),
        ] {
            assert_eq!(label_selector_object(&sel), Err(want), "{sel}");
        }
    }
}
