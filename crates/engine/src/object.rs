//! Objects that carry marks: a kind the family names (`cluster`, `group`, a target kind…) and
//! a name. A scope that is one of a kind (a cluster) has an empty name.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectRef {
    pub kind: Cow<'static, str>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

impl ObjectRef {
    pub fn new(kind: &'static str, name: impl Into<String>) -> Self {
        ObjectRef {
            kind: Cow::Borrowed(kind),
            name: name.into(),
        }
    }

    /// The one object of its kind (it has no name).
    pub fn singleton(kind: &'static str) -> Self {
        ObjectRef::new(kind, String::new())
    }

    pub fn is(&self, kind: &str) -> bool {
        self.kind == kind
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Printed, never parsed back: a name from the fleet must not add a line or a
        // terminal control to what is printed (crate::text::shown).
        let kind = crate::text::shown(&self.kind);
        if self.name.is_empty() {
            f.write_str(&kind)
        } else {
            write!(f, "{kind}/{}", crate::text::shown(&self.name))
        }
    }
}

/// Why a text names no object a family's marks live on. The message names the text and shows
/// the forms that are taken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ObjectRefError {
    #[error("{text:?} names no object: write e.g. {example}/NAME")]
    NoName { text: String, example: &'static str },
    #[error("unknown object kind {kind:?} in {text:?}: use {shapes}")]
    UnknownKind {
        text: String,
        kind: String,
        /// The forms taken, as the message lists them (`room, shelf/NAME or box/NAME`).
        shapes: String,
    },
    /// The kind's objects live in namespaces, and the name gives none.
    #[error("{text:?}: a {kind} is namespaced: write {kind}/NAMESPACE/NAME")]
    NeedsNamespace { text: String, kind: String },
    /// A kind this family's fleets do not have (another family's, most often); `hint` says
    /// what this family takes instead.
    #[error("{text:?}: {hint}")]
    NotInFleet {
        text: String,
        kind: String,
        hint: String,
    },
}

/// Reads `KIND/NAME`, a singleton's `KIND`, or a bare name as a `default_kind` object; `kinds`
/// are the kinds a family's marks live on, `singletons` those without a name.
pub fn parse_object_ref(
    text: &str,
    kinds: &[&'static str],
    singletons: &[&'static str],
    default_kind: &'static str,
) -> Result<ObjectRef, ObjectRefError> {
    if let Some(kind) = singletons.iter().find(|k| **k == text) {
        return Ok(ObjectRef::singleton(kind));
    }
    let nonempty = |n: &str| {
        if n.is_empty() {
            Err(ObjectRefError::NoName {
                text: text.to_owned(),
                example: kinds.first().copied().unwrap_or(default_kind),
            })
        } else {
            Ok(n.to_owned())
        }
    };
    match text.split_once('/') {
        Some((kind, name)) => match kinds.iter().find(|k| **k == kind) {
            Some(k) => Ok(ObjectRef::new(k, nonempty(name)?)),
            None => {
                let mut shapes: Vec<String> = singletons.iter().map(|s| s.to_string()).collect();
                shapes.extend(kinds.iter().map(|k| format!("{k}/NAME")));
                let last = shapes.pop().unwrap_or_default();
                let list = if shapes.is_empty() {
                    last
                } else {
                    format!("{} or {last}", shapes.join(", "))
                };
                Err(ObjectRefError::UnknownKind {
                    text: text.to_owned(),
                    kind: kind.to_owned(),
                    shapes: list,
                })
            }
        },
        None => Ok(ObjectRef::new(default_kind, nonempty(text)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_every_shape() {
        let kinds = ["shelf", "box"];
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("room", Ok("room")),
            ("shelf/a", Ok("shelf/a")),
            ("box/b", Ok("box/b")),
            ("b", Ok("box/b")),
            ("shelf/", Err("names no object")),
            ("crate/x", Err("unknown object kind \"crate\"")),
            ("", Err("names no object")),
        ];
        for (text, want) in cases {
            let got = parse_object_ref(text, &kinds, &["room"], "box");
            match (got, want) {
                (Ok(o), Ok(w)) => assert_eq!(o.to_string(), *w, "{text:?}"),
                (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{text:?}: {e}"),
                (got, want) => panic!("{text:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn a_refusal_names_the_text_and_the_forms_taken() {
        let got = parse_object_ref("crate/x", &["shelf", "box"], &["room"], "box");
        assert_eq!(
            got,
            Err(ObjectRefError::UnknownKind {
                text: "crate/x".into(),
                kind: "crate".into(),
                shapes: "room, shelf/NAME or box/NAME".into(),
            })
        );
        let got = parse_object_ref("shelf/", &["shelf", "box"], &["room"], "box");
        assert_eq!(
            got,
            Err(ObjectRefError::NoName {
                text: "shelf/".into(),
                example: "shelf",
            })
        );
    }

    #[test]
    fn serialises_without_an_empty_name() {
        let json = serde_json::to_string(&ObjectRef::singleton("room")).unwrap();
        assert_eq!(json, r#"{"kind":"room"}"#);
        let json = serde_json::to_string(&ObjectRef::new("box", "b")).unwrap();
        assert_eq!(json, r#"{"kind":"box","name":"b"}"#);
    }
}
