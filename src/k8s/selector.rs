//! `metav1.LabelSelector` (`matchLabels` + `matchExpressions`), as CKE's `protected_namespaces`
//! and `protected_job_pods` carry it: parsed strictly and checked like
//! `LabelSelectorAsSelector` here, the one parser of both families' selectors; matched against
//! labels and written as the `labelSelector` query text by kube's own [`Selector`].

use super::names;
use kube::core::{Expression, Selector, SelectorExt};
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

/// A selector `LabelSelectorAsSelector` would refuse: the entry (`matchLabels key`,
/// `matchExpressions[0].values`…) and what is wrong with it; with the config key the selector
/// was given at, when [`LabelSelector::validate_at`] knows it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{entry}: {problem}", .key.as_ref().map(|k| format!("{k}: ")).unwrap_or_default())]
pub struct SelectorError {
    pub key: Option<String>,
    pub entry: String,
    pub problem: SelectorProblem,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectorProblem {
    #[error(transparent)]
    Name(#[from] names::NameError),
    #[error("for 'In', 'NotIn' operators, values set can't be empty")]
    NoValues,
    #[error("values set must be empty for exists and does not exist")]
    Values,
}

impl LabelSelector {
    /// Checks it as `LabelSelectorAsSelector` does: keys and values well formed, `In` and
    /// `NotIn` with values, `Exists` and `DoesNotExist` without. The error says which entry.
    pub fn validate(&self) -> Result<(), SelectorError> {
        self.check()
    }

    /// [`Self::validate`], the error naming `key`, where the selector was given.
    pub fn validate_at(&self, key: &str) -> Result<(), SelectorError> {
        self.check().map_err(|e| SelectorError {
            key: Some(key.to_owned()),
            ..e
        })
    }

    fn check(&self) -> Result<(), SelectorError> {
        let bad = |entry: String, problem: SelectorProblem| SelectorError {
            key: None,
            entry,
            problem,
        };
        for (k, v) in &self.match_labels {
            names::qualified_name(k).map_err(|e| bad("matchLabels key".into(), e.into()))?;
            names::label_value(v).map_err(|e| bad(format!("matchLabels[{k:?}]"), e.into()))?;
        }
        for (i, r) in self.match_expressions.iter().enumerate() {
            let at = format!("matchExpressions[{i}]");
            names::qualified_name(&r.key).map_err(|e| bad(format!("{at}.key"), e.into()))?;
            match (r.operator, r.values.is_empty()) {
                (Operator::In | Operator::NotIn, true) => {
                    return Err(bad(at, SelectorProblem::NoValues));
                }
                (Operator::Exists | Operator::DoesNotExist, false) => {
                    return Err(bad(at, SelectorProblem::Values));
                }
                _ => {}
            }
            for v in &r.values {
                names::label_value(v).map_err(|e| bad(format!("{at}.values"), e.into()))?;
            }
        }
        Ok(())
    }

    /// Selects everything (`{}`).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// The same selector as kube's: `matchLabels`, then `matchExpressions` in order.
    pub fn selector(&self) -> Selector {
        let labels = self
            .match_labels
            .iter()
            .map(|(k, v)| Expression::Equal(k.clone(), v.clone()));
        let expressions = self.match_expressions.iter().map(|r| {
            let key = r.key.clone();
            let values = r.values.iter().cloned().collect();
            match r.operator {
                Operator::In => Expression::In(key, values),
                Operator::NotIn => Expression::NotIn(key, values),
                Operator::Exists => Expression::Exists(key),
                Operator::DoesNotExist => Expression::DoesNotExist(key),
            }
        });
        labels.chain(expressions).collect()
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.selector().matches(labels)
    }

    /// The `labelSelector` query text (`metav1.FormatLabelSelector` without its `<none>`, a
    /// requirement's values sorted as there): empty selects everything.
    pub fn query(&self) -> String {
        self.selector().to_string()
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

    /// Every selector of both families (CKE's `protected_namespaces` and `protected_job_pods`
    /// on the machines side, the drain's on metal3's) is read and matched here.
    #[test]
    fn selectors_match_and_format_like_metav1() {
        let pod = [("app", "web"), ("tier", "front")];
        let both = "{matchLabels: {a: x}, matchExpressions: [{key: b, operator: In, values: ['1', '2']}, {key: c, operator: DoesNotExist}]}";
        // (selector, labels, matches, query text)
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], bool, &'a str);
        let cases: [Case; 14] = [
            ("{}", &pod, true, ""),
            ("{}", &[], true, ""),
            ("{matchLabels: {app: web}}", &pod, true, "app=web"),
            ("{matchLabels: {app: db}}", &pod, false, "app=db"),
            (
                "{matchExpressions: [{key: tier, operator: In, values: [front, back]}]}",
                &pod,
                true,
                "tier in (back,front)",
            ),
            (
                "{matchExpressions: [{key: tier, operator: NotIn, values: [front]}]}",
                &pod,
                false,
                "tier notin (front)",
            ),
            (
                "{matchExpressions: [{key: missing, operator: NotIn, values: [x]}]}",
                &pod,
                true,
                "missing notin (x)",
            ),
            (
                "{matchExpressions: [{key: app, operator: Exists}]}",
                &pod,
                true,
                "app",
            ),
            (
                "{matchExpressions: [{key: app, operator: Exists}]}",
                &[],
                false,
                "app",
            ),
            (
                "{matchLabels: {app: web}, matchExpressions: [{key: debug, operator: DoesNotExist}]}",
                &pod,
                true,
                "app=web,!debug",
            ),
            (both, &[("a", "x"), ("b", "2")], true, "a=x,b in (1,2),!c"),
            (both, &[("a", "x"), ("b", "3")], false, "a=x,b in (1,2),!c"),
            (
                both,
                &[("a", "x"), ("b", "1"), ("c", "")],
                false,
                "a=x,b in (1,2),!c",
            ),
            (both, &[("b", "1")], false, "a=x,b in (1,2),!c"),
        ];
        for (yaml, pairs, want, query) in cases {
            let s: LabelSelector = serde_yaml_ng::from_str(yaml).unwrap();
            assert_eq!(s.validate(), Ok(()), "{yaml}");
            assert_eq!(s.matches(&labels(pairs)), want, "{yaml} on {pairs:?}");
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
            assert!(e.to_string().starts_with(want), "{yaml}: {e}");
            let at = s.validate_at("repair.protected_job_pods").unwrap_err();
            assert_eq!(at.key.as_deref(), Some("repair.protected_job_pods"));
            assert_eq!(
                at.to_string(),
                format!("repair.protected_job_pods: {e}"),
                "{yaml}"
            );
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
