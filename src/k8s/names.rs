//! Kubernetes' syntax rules for label keys and values, annotation keys and taints (as CKE
//! checks a cluster.yml with them, and as label selectors need them). Each check returns the
//! rule broken and the text breaking it ([`NameError`]), for the caller to name the key.

/// The rule a name, label value or taint effect breaks, with the text that breaks it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{0:?} must be 1 to 63 characters")]
    Length(String),
    #[error(
        "{0:?} must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
    )]
    Characters(String),
    #[error("prefix {0:?} must be a lower-case DNS subdomain of at most 253 characters")]
    Prefix(String),
    #[error("effect {0:?} must be NoSchedule, PreferNoSchedule or NoExecute")]
    Effect(String),
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, at most 63 characters.
pub fn name_part(s: &str) -> Result<(), NameError> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 63 {
        return Err(NameError::Length(s.to_owned()));
    }
    let inner_ok = b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    if !inner_ok || !b[0].is_ascii_alphanumeric() || !b[b.len() - 1].is_ascii_alphanumeric() {
        return Err(NameError::Characters(s.to_owned()));
    }
    Ok(())
}

/// A DNS subdomain (RFC 1123), at most 253 characters.
fn dns_subdomain(s: &str) -> Result<(), NameError> {
    let ok = !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            let b = l.as_bytes();
            !b.is_empty()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        });
    if ok {
        Ok(())
    } else {
        Err(NameError::Prefix(s.to_owned()))
    }
}

/// A label key, annotation key or taint key: `[prefix/]name`.
pub fn qualified_name(s: &str) -> Result<(), NameError> {
    match s.split_once('/') {
        Some((prefix, name)) => {
            dns_subdomain(prefix)?;
            name_part(name)
        }
        None => name_part(s),
    }
}

/// A label value or taint value: empty, or a name part.
pub fn label_value(s: &str) -> Result<(), NameError> {
    if s.is_empty() { Ok(()) } else { name_part(s) }
}

pub fn taint_effect(s: &str) -> Result<(), NameError> {
    match s {
        "NoSchedule" | "PreferNoSchedule" | "NoExecute" => Ok(()),
        _ => Err(NameError::Effect(s.to_owned())),
    }
}

/// All annotations of one object together: keys and values at most 256 KiB.
pub const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values() {
        let keys = [
            ("cke.cybozu.com/role", true),
            ("role", true),
            ("node-role.kubernetes.io/cs", true),
            ("a/b/c", false),
            ("Cke.com/role", false),
            ("/role", false),
            ("cke.cybozu.com/", false),
            ("-role", false),
            (&*"x".repeat(64), false),
            ("sabakan.cke.cybozu.com/product_x.1", true),
        ];
        for (k, ok) in keys {
            assert_eq!(qualified_name(k).is_ok(), ok, "{k}");
        }
        for (v, ok) in [
            ("", true),
            ("6.0", true),
            ("rack1", true),
            ("a b", false),
            ("x-", false),
        ] {
            assert_eq!(label_value(v).is_ok(), ok, "{v:?}");
        }
        for (e, ok) in [("NoExecute", true), ("noexecute", false), ("", false)] {
            assert_eq!(taint_effect(e).is_ok(), ok, "{e:?}");
        }
    }

    #[test]
    fn each_refusal_names_the_rule_and_the_text() {
        let cases: [(Result<(), NameError>, NameError, &str); 5] = [
            (
                qualified_name("Cke.com/role"),
                NameError::Prefix("Cke.com".into()),
                "prefix \"Cke.com\" must be a lower-case DNS subdomain",
            ),
            (
                qualified_name("a/-role"),
                NameError::Characters("-role".into()),
                "\"-role\" must be letters, digits",
            ),
            (
                label_value(&"x".repeat(64)),
                NameError::Length("x".repeat(64)),
                "must be 1 to 63 characters",
            ),
            (
                qualified_name("cke.cybozu.com/"),
                NameError::Length(String::new()),
                "\"\" must be 1 to 63",
            ),
            (
                taint_effect("noexecute"),
                NameError::Effect("noexecute".into()),
                "effect \"noexecute\" must be NoSchedule, PreferNoSchedule or NoExecute",
            ),
        ];
        for (got, want, says) in cases {
            let e = got.unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
            assert_eq!(e, want);
        }
    }
}
