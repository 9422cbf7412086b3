//! YAML as every reader reads it back. serde_yaml_ng writes YAML 1.2, but the YAML this program
//! writes is read by YAML 1.1 readers too: `ckecli cluster set` reads `cluster.yml` through Go's
//! yaml.v2, and operators' scripts read `-o yaml` with PyYAML. Both take a plain `no`, `on`,
//! `y`, `1_000`, `1:20` or `2024-04-01` for a boolean, a number or a timestamp, so a machine's
//! label `no` would become the Node label `false`. [`to_string`] quotes those, as kubectl
//! (sigs.k8s.io/yaml over yaml.v2) does.

use serde::Serialize;
use serde_yaml_ng::Value;

/// `value` as YAML that YAML 1.2 and YAML 1.1 readers read back the same.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_yaml_ng::Error> {
    serde_yaml_ng::to_string(value).map(|text| quote_for_yaml11(&text))
}

/// Quotes the plain scalars (keys and values) that YAML 1.2 reads as strings but a YAML 1.1
/// reader would not. Only the key and the value on each line are looked at, never the inside of
/// a block scalar; a plain scalar that YAML 1.2 itself reads as a boolean or a number (a real
/// one of the document) is left alone.
fn quote_for_yaml11(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len() + 64);
    // The indentation of the line that opened a block scalar (`|`, `>`…) we are inside.
    let mut block: Option<usize> = None;
    for line in yaml.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let indent = body.len() - body.trim_start_matches(' ').len();
        if let Some(opened) = block {
            if body.trim().is_empty() || indent > opened {
                out.push_str(line);
                continue;
            }
            block = None;
        }
        let mut rest = &body[indent..];
        let mut prefix = indent;
        while let Some(r) = rest.strip_prefix("- ") {
            rest = r;
            prefix += 2;
        }
        out.push_str(&body[..prefix]);
        let value = match rest.find(": ") {
            Some(i) if !rest.starts_with(['\'', '"', '?']) => {
                push_scalar(&mut out, &rest[..i]);
                out.push_str(": ");
                &rest[i + 2..]
            }
            Some(_) => {
                out.push_str(rest);
                out.push_str(&line[body.len()..]);
                continue;
            }
            None => match rest.strip_suffix(':') {
                // A key whose value follows on the next lines.
                Some(key) if !rest.starts_with(['\'', '"', '?']) => {
                    push_scalar(&mut out, key);
                    out.push(':');
                    out.push_str(&line[body.len()..]);
                    continue;
                }
                // A list item's scalar.
                _ if prefix > indent => rest,
                _ => {
                    out.push_str(rest);
                    out.push_str(&line[body.len()..]);
                    continue;
                }
            },
        };
        if value.starts_with(['|', '>']) {
            block = Some(indent);
        }
        push_scalar(&mut out, value);
        out.push_str(&line[body.len()..]);
    }
    out
}

/// Writes `scalar` as it was, or single-quoted when it is a plain string a YAML 1.1 reader
/// would read as something else.
fn push_scalar(out: &mut String, scalar: &str) {
    let plain =
        !scalar.is_empty() && !scalar.starts_with(['\'', '"', '|', '>', '[', '{', '&', '*', '!']);
    if plain
        && yaml11_not_a_string(scalar)
        && matches!(serde_yaml_ng::from_str(scalar), Ok(Value::String(_)))
    {
        out.push('\'');
        out.push_str(scalar);
        out.push('\'');
    } else {
        out.push_str(scalar);
    }
}

/// Whether a YAML 1.1 reader resolves this plain scalar to something other than a string: the
/// union of PyYAML's resolver (the YAML 1.1 type regexes) and Go's yaml.v2 (which drops `_`
/// before parsing a number and adds `y`/`n`). Loose where they differ: quoting a string that
/// only looks like one of these is harmless.
fn yaml11_not_a_string(v: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~", "<<",
        "=",
    ];
    WORDS.contains(&v) || yaml11_timestamp(v) || yaml11_number(v)
}

/// YAML 1.1's ints and floats (binary, octal, hexadecimal, decimal, base 60, `.inf`, `.nan`,
/// `_` anywhere after the first character).
fn yaml11_number(v: &str) -> bool {
    if matches!(v, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let unsigned = v.strip_prefix(['+', '-']).unwrap_or(v);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    if !unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return false;
    }
    let n: String = unsigned.chars().filter(|&c| c != '_').collect();
    let all = |s: &str, f: fn(&char) -> bool| !s.is_empty() && s.chars().all(|c| f(&c));
    for (prefix, digit) in [
        ("0x", char::is_ascii_hexdigit as fn(&char) -> bool),
        ("0X", char::is_ascii_hexdigit),
        ("0o", |c: &char| ('0'..='7').contains(c)),
        ("0O", |c: &char| ('0'..='7').contains(c)),
        ("0b", |c: &char| matches!(c, '0' | '1')),
        ("0B", |c: &char| matches!(c, '0' | '1')),
    ] {
        if let Some(rest) = n.strip_prefix(prefix) {
            return all(rest, digit);
        }
    }
    // Decimal, with a fraction and an exponent: `1`, `1.`, `.5`, `1.5e+3`, `1e3`.
    let (mantissa, exponent) = match n.find(['e', 'E']) {
        Some(i) => (&n[..i], Some(&n[i + 1..])),
        None => (n.as_str(), None),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        all(
            e.strip_prefix(['+', '-']).unwrap_or(e),
            char::is_ascii_digit,
        )
    });
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let digits_or_empty = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let decimal = (all(whole, char::is_ascii_digit) && fraction.is_none_or(digits_or_empty))
        || (whole.is_empty() && fraction.is_some_and(|f| all(f, char::is_ascii_digit)));
    if decimal && exponent_ok {
        return true;
    }
    // Base 60: `1:20`, `190:20:30.15`.
    if exponent.is_none() {
        let mut groups = whole.split(':');
        let first = groups.next().unwrap_or("");
        let rest: Vec<&str> = groups.collect();
        return all(first, char::is_ascii_digit)
            && !rest.is_empty()
            && rest
                .iter()
                .all(|g| (1..=2).contains(&g.len()) && all(g, char::is_ascii_digit))
            && fraction.is_none_or(digits_or_empty);
    }
    false
}

/// YAML 1.1's timestamp: `YYYY-M-D`, optionally followed by `T` or spaces and a time of
/// digits, `:`, `.`, a zone `Z` or `±hh[:mm]` (checked loosely: quoting a string that only
/// looks like one is harmless).
fn yaml11_timestamp(v: &str) -> bool {
    let b = v.as_bytes();
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let mut parts = v.splitn(3, '-');
    let (Some(y), Some(m), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let day_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if y.len() != 4 || !digits(y.as_bytes()) || !(1..=2).contains(&m.len()) || !digits(m.as_bytes())
    {
        return false;
    }
    if !(1..=2).contains(&day_len) {
        return false;
    }
    let time = &rest[day_len..];
    if time.is_empty() {
        return y.len() + m.len() + day_len + 2 == b.len();
    }
    let time = match time.strip_prefix(['T', 't']) {
        Some(t) => t,
        None if time.starts_with([' ', '\t']) => time.trim_start_matches([' ', '\t']),
        None => return false,
    };
    time.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && time.contains(':')
        && time.bytes().all(|c| {
            c.is_ascii_digit() || matches!(c, b':' | b'.' | b'+' | b'-' | b'Z' | b' ' | b'\t')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What YAML 1.1 readers (PyYAML, Go's yaml.v2 under `ckecli cluster set`) would not read
    /// as a string, row by row: `true` when it must be quoted.
    #[test]
    fn scalars_yaml_1_1_reads_as_something_else() {
        let cases = [
            ("2024-04-01T00:00:00Z", true),
            ("2029-12-31T23:00:00-02:00", true),
            ("0001-01-01T00:00:00Z", true),
            ("2024-04-01", true),
            ("2024-4-1 10:00:00.5 +09", true),
            ("2024-04", false),
            ("2024-04-01x", false),
            ("SN0101", false),
            ("10.0.0.1", false),
            ("2024-04-01T", false),
            ("rack-2024-04-01", false),
            ("yes", true),
            ("No", true),
            ("y", true),
            ("N", true),
            ("on", true),
            ("OFF", true),
            ("~", true),
            ("<<", true),
            ("=", true),
            ("yess", false),
            ("onn", false),
            ("1_000", true),
            ("1__0", true),
            ("_1", false),
            ("0x_1F", true),
            ("0o17", true),
            ("0b101", true),
            ("-0b1", true),
            ("0777", true),
            ("08", true),
            ("1:20", true),
            ("190:20:30.15", true),
            ("1:2:3", true),
            ("1:200", false),
            ("1_0.5", true),
            ("685.230_15e+03", true),
            ("1.", true),
            (".5", true),
            ("+.inf", true),
            (".NaN", true),
            ("1e3", true),
            ("1.2.3", false),
            ("0xZZ", false),
            ("1e", false),
            ("R640", false),
            ("cs", false),
            ("rack1", false),
            ("", false),
        ];
        for (v, want) in cases {
            assert_eq!(yaml11_not_a_string(v), want, "{v:?}");
        }
    }

    #[test]
    fn keys_and_values_are_quoted_for_yaml_1_1_readers_and_read_back_the_same() {
        let text = "nodes:
- address: 10.0.0.1
  annotations:
    cke.cybozu.com/register-date: 2024-04-01T00:00:00Z
    cke.cybozu.com/serial: SN0101
  control_plane: true
  labels:
    cke.cybozu.com/register-month: 2024-04
    sabakan.cke.cybozu.com/ssd: no
    sabakan.cke.cybozu.com/size: 1_000
    no: on
    y:
    - n
  weight: 2
- 2024-04-01
- yes
note: |-
  kept: 2024-04-01T00:00:00Z
  - 2024-04-01
  no: yes
after: 2024-04-01
";
        let want = "nodes:
- address: 10.0.0.1
  annotations:
    cke.cybozu.com/register-date: '2024-04-01T00:00:00Z'
    cke.cybozu.com/serial: SN0101
  control_plane: true
  labels:
    cke.cybozu.com/register-month: 2024-04
    sabakan.cke.cybozu.com/ssd: 'no'
    sabakan.cke.cybozu.com/size: '1_000'
    'no': 'on'
    'y':
    - 'n'
  weight: 2
- '2024-04-01'
- 'yes'
note: |-
  kept: 2024-04-01T00:00:00Z
  - 2024-04-01
  no: yes
after: '2024-04-01'
";
        assert_eq!(quote_for_yaml11(text), want);
        // Read back as YAML 1.2, the values are the same strings, and the real boolean and
        // number stay what they were.
        let a: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).unwrap();
        let b: serde_yaml_ng::Value = serde_yaml_ng::from_str(want).unwrap();
        assert_eq!(a, b);
    }
}
