//! Kubernetes' syntax rules for label keys and values, annotation keys and taints (as CKE
//! checks a cluster.yml with them, and as label selectors need them). Each check returns what is wrong, for the caller to name
//! the key.

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, at most 63 characters.
pub fn name_part(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 63 {
        return Err(format!("{s:?} must be 1 to 63 characters"));
    }
    let inner_ok = b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    if !inner_ok || !b[0].is_ascii_alphanumeric() || !b[b.len() - 1].is_ascii_alphanumeric() {
        return Err(format!(
            "{s:?} must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        ));
    }
    Ok(())
}

/// A DNS subdomain (RFC 1123), at most 253 characters.
fn dns_subdomain(s: &str) -> Result<(), String> {
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
        Err(format!(
            "prefix {s:?} must be a lower-case DNS subdomain of at most 253 characters"
        ))
    }
}

/// A label key, annotation key or taint key: `[prefix/]name`.
pub fn qualified_name(s: &str) -> Result<(), String> {
    match s.split_once('/') {
        Some((prefix, name)) => {
            dns_subdomain(prefix)?;
            name_part(name)
        }
        None => name_part(s),
    }
}

/// A label value or taint value: empty, or a name part.
pub fn label_value(s: &str) -> Result<(), String> {
    if s.is_empty() { Ok(()) } else { name_part(s) }
}

pub fn taint_effect(s: &str) -> Result<(), String> {
    match s {
        "NoSchedule" | "PreferNoSchedule" | "NoExecute" => Ok(()),
        _ => Err(format!(
            "effect {s:?} must be NoSchedule, PreferNoSchedule or NoExecute"
        )),
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
}
