//! Label selectors (equality- and set-based) and the `metadata.name` / `metadata.namespace`
//! field selectors.

use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
enum Req {
    Eq(String, String),
    Ne(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed `labelSelector`: every requirement must hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelSelector(Vec<Req>);

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for part in split_top(s)? {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            reqs.push(parse_req(part)?);
        }
        Ok(LabelSelector(reqs))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels");
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Req::Eq(k, v) => get(k) == Some(v),
            Req::Ne(k, v) => get(k) != Some(v),
            Req::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::Exists(k) => get(k).is_some(),
            Req::NotExists(k) => get(k).is_none(),
        })
    }
}

/// Splits on commas outside parentheses.
fn split_top(s: &str) -> Result<Vec<&str>, String> {
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
            return Err(format!("unbalanced parentheses in {s:?}"));
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced parentheses in {s:?}"));
    }
    out.push(&s[start..]);
    Ok(out)
}

fn parse_req(part: &str) -> Result<Req, String> {
    let bad = || format!("unable to parse requirement: {part:?}");
    if let Some(k) = part.strip_prefix('!') {
        return Ok(Req::NotExists(key(k.trim()).ok_or_else(bad)?));
    }
    if let Some((k, v)) = part.split_once("!=") {
        return Ok(Req::Ne(
            key(k.trim()).ok_or_else(bad)?,
            v.trim().to_string(),
        ));
    }
    if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
        return Ok(Req::Eq(
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
            "in" => Ok(Req::In(k, values)),
            "notin" => Ok(Req::NotIn(k, values)),
            _ => Err(bad()),
        };
    }
    Ok(Req::Exists(key(part).ok_or_else(bad)?))
}

fn key(k: &str) -> Option<String> {
    let ok = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    ok.then(|| k.to_string())
}

/// A parsed `fieldSelector`: only `metadata.name` and `metadata.namespace`, with `=`, `==`
/// and `!=`, as every custom resource supports. Others are refused (400), like the
/// apiserver does for fields a resource does not index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, eq, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (f, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{part}'; can't understand '{part}'"
                ));
            };
            let field = field.trim();
            if field != "metadata.name" && field != "metadata.namespace" {
                return Err(format!("field label not supported: {field}"));
            }
            out.push((field.to_string(), eq, value.trim().to_string()));
        }
        Ok(FieldSelector(out))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(field, eq, value)| {
            let ptr = if field == "metadata.name" {
                "/metadata/name"
            } else {
                "/metadata/namespace"
            };
            let actual = obj.pointer(ptr).and_then(Value::as_str).unwrap_or_default();
            (actual == value) == *eq
        })
    }
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
        for sel in ["role in (a", "role in a)", "=x", "role between (a)", "a b"] {
            assert!(LabelSelector::parse(sel).is_err(), "{sel}");
        }
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
        assert!(FieldSelector::parse("spec.nodeName=x").is_err());
        assert!(FieldSelector::parse("metadata.name").is_err());
    }
}
