//! `metav1.LabelSelector` (`matchLabels` + `matchExpressions`), as CKE's `protected_namespaces`
//! and `protected_job_pods` carry it: parsed and checked like `LabelSelectorAsSelector`, matched
//! against labels here, and written as the `labelSelector` query text for the API server.

use super::names;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelector {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<Requirement>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl LabelSelector {
    /// Checks it as `LabelSelectorAsSelector` does: keys and values well formed, `In` and
    /// `NotIn` with values, `Exists` and `DoesNotExist` without. The error says which entry.
    pub fn validate(&self) -> Result<(), String> {
        for (k, v) in &self.match_labels {
            names::qualified_name(k).map_err(|e| format!("matchLabels key: {e}"))?;
            names::label_value(v).map_err(|e| format!("matchLabels[{k:?}]: {e}"))?;
        }
        for (i, r) in self.match_expressions.iter().enumerate() {
            let at = format!("matchExpressions[{i}]");
            names::qualified_name(&r.key).map_err(|e| format!("{at}.key: {e}"))?;
            match (r.operator, r.values.is_empty()) {
                (Operator::In | Operator::NotIn, true) => {
                    return Err(format!(
                        "{at}: for 'In', 'NotIn' operators, values set can't be empty"
                    ));
                }
                (Operator::Exists | Operator::DoesNotExist, false) => {
                    return Err(format!(
                        "{at}: values set must be empty for exists and does not exist"
                    ));
                }
                _ => {}
            }
            for v in &r.values {
                names::label_value(v).map_err(|e| format!("{at}.values: {e}"))?;
            }
        }
        Ok(())
    }

    /// Selects everything (`{}`).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| {
                let got = labels.get(&r.key);
                match r.operator {
                    Operator::In => got.is_some_and(|g| r.values.contains(g)),
                    Operator::NotIn => !got.is_some_and(|g| r.values.contains(g)),
                    Operator::Exists => got.is_some(),
                    Operator::DoesNotExist => got.is_none(),
                }
            })
    }

    /// The `labelSelector` query text (`metav1.FormatLabelSelector` without its `<none>`):
    /// empty selects everything.
    pub fn query(&self) -> String {
        let mut parts: Vec<String> = self
            .match_labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        for r in &self.match_expressions {
            parts.push(match r.operator {
                Operator::In => format!("{} in ({})", r.key, r.values.join(",")),
                Operator::NotIn => format!("{} notin ({})", r.key, r.values.join(",")),
                Operator::Exists => r.key.clone(),
                Operator::DoesNotExist => format!("!{}", r.key),
            });
        }
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn selectors_match_and_format_like_metav1() {
        let pod = labels(&[("app", "web"), ("tier", "front")]);
        let cases = [
            ("{}", true, ""),
            ("{matchLabels: {app: web}}", true, "app=web"),
            ("{matchLabels: {app: db}}", false, "app=db"),
            (
                "{matchExpressions: [{key: tier, operator: In, values: [front, back]}]}",
                true,
                "tier in (front,back)",
            ),
            (
                "{matchExpressions: [{key: tier, operator: NotIn, values: [front]}]}",
                false,
                "tier notin (front)",
            ),
            (
                "{matchExpressions: [{key: missing, operator: NotIn, values: [x]}]}",
                true,
                "missing notin (x)",
            ),
            (
                "{matchExpressions: [{key: app, operator: Exists}]}",
                true,
                "app",
            ),
            (
                "{matchLabels: {app: web}, matchExpressions: [{key: debug, operator: DoesNotExist}]}",
                true,
                "app=web,!debug",
            ),
        ];
        for (yaml, want, query) in cases {
            let s: LabelSelector = serde_yaml_ng::from_str(yaml).unwrap();
            assert_eq!(s.validate(), Ok(()), "{yaml}");
            assert_eq!(s.matches(&pod), want, "{yaml}");
            assert_eq!(s.query(), query, "{yaml}");
        }
    }

    #[test]
    fn invalid_selectors_say_which_entry() {
        let cases = [
            (
                "{matchExpressions: [{key: a, operator: In}]}",
                "matchExpressions[0]: for 'In', 'NotIn' operators, values set can't be empty",
            ),
            (
                "{matchExpressions: [{key: a, operator: Exists, values: [x]}]}",
                "matchExpressions[0]: values set must be empty for exists and does not exist",
            ),
            ("{matchLabels: {'a b': x}}", "matchLabels key"),
            ("{matchLabels: {a: 'x y'}}", "matchLabels[\"a\"]"),
        ];
        for (yaml, want) in cases {
            let s: LabelSelector = serde_yaml_ng::from_str(yaml).unwrap();
            let e = s.validate().unwrap_err();
            assert!(e.starts_with(want), "{yaml}: {e}");
        }
        assert!(serde_yaml_ng::from_str::<LabelSelector>("{matchLabel: {a: b}}").is_err());
        assert!(
            serde_yaml_ng::from_str::<LabelSelector>(
                "{matchExpressions: [{key: a, operator: Near}]}"
            )
            .is_err()
        );
    }
}
