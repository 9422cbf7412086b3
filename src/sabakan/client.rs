//! Sabakan's GraphQL API: the query CKE sends for cluster generation, and its variables.
//! The only code of the module that talks to the world.

use super::model::{Machine, MachinesError, State, machines_from_value};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// CKE's query, with the same operation, defaults and selection: boot machines and RETIRED
/// ones are left out unless the variables say otherwise.
pub const QUERY: &str = r#"query ckeSearch($having: MachineParams = null,
                $notHaving: MachineParams = {
                  roles: ["boot"]
                  states: [RETIRED]
                }) {
  searchMachines(having: $having, notHaving: $notHaving) {
    spec {
      serial
      labels {
        name
        value
      }
      rack
      indexInRack
      role
      ipv4
      registerDate
      retireDate
      bmc {
        bmcType
      }
    }
    status {
      state
      duration
    }
  }
}
"#;

/// `$having` and `$notHaving`, as `ckecli sabakan set-variables` takes them. Both are always
/// sent once variables are given, `null` when absent: an explicit `null` replaces the query's
/// default, as with CKE (`{}` selects every machine, boot and RETIRED included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variables {
    #[serde(default)]
    pub having: Option<MachineParams>,
    #[serde(default, rename = "notHaving")]
    pub not_having: Option<MachineParams>,
}

/// sabakan's `MachineParams`. Unset lists are sent as `null` (no condition), as Go does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineParams {
    #[serde(default)]
    pub labels: Option<Vec<LabelParam>>,
    #[serde(default)]
    pub racks: Option<Vec<i64>>,
    #[serde(default)]
    pub roles: Option<Vec<String>>,
    #[serde(default)]
    pub states: Option<Vec<String>>,
    #[serde(
        default,
        rename = "minDaysBeforeRetire",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_days_before_retire: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelParam {
    pub name: String,
    pub value: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("variables: {0}")]
    Variables(String),
    #[error("sabakan at {url}: {problem}")]
    Query { url: String, problem: String },
}

impl Variables {
    pub fn parse(text: &str) -> Result<Variables, ClientError> {
        let bad = |e: String| {
            ClientError::Variables(format!(
                "{e} (expected {{\"having\": {{…}}, \"notHaving\": {{…}}}} with labels, racks, \
                 roles, states, minDaysBeforeRetire)"
            ))
        };
        // An object only: serde would also take a list for a struct.
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        if !value.is_object() {
            return Err(bad("not a JSON object".into()));
        }
        let v: Variables = serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
        for (which, p) in [("having", &v.having), ("notHaving", &v.not_having)] {
            for s in p.iter().flat_map(|p| p.states.iter().flatten()) {
                if !State::ALL.iter().any(|st| st.as_str() == s) {
                    return Err(ClientError::Variables(format!(
                        "{which}.states: {s:?} is not a state; use UNINITIALIZED, HEALTHY, \
                         UNHEALTHY, UNREACHABLE, UPDATING, RETIRING or RETIRED"
                    )));
                }
            }
        }
        Ok(v)
    }
}

/// The GraphQL endpoint for a sabakan URL: `/graphql` is appended unless already there (as
/// `ckecli sabakan set-url` does).
pub fn endpoint(url: &str) -> String {
    let url = url.trim_end_matches('/');
    if url.ends_with("/graphql") {
        url.to_owned()
    } else {
        format!("{url}/graphql")
    }
}

/// The request body: the query, and the variables when given (else the query's defaults apply).
pub fn request_body(variables: Option<&Variables>) -> serde_json::Value {
    let mut body = serde_json::json!({ "query": QUERY });
    if let Some(v) = variables {
        body["variables"] = serde_json::to_value(v).expect("variables serialise");
    }
    body
}

/// Asks sabakan for the machines. A non-200 answer or GraphQL errors are errors.
pub fn search_machines(
    url: &str,
    variables: Option<&Variables>,
    now: Timestamp,
    timeout: Duration,
) -> Result<Vec<Machine>, ClientError> {
    let url = endpoint(url);
    let fail = |problem: String| ClientError::Query {
        url: url.clone(),
        problem,
    };
    let client = reqwest::blocking::Client::builder()
        .timeout(timeout)
        .user_agent(concat!("autorepair/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| fail(format!("cannot set up the HTTP client: {e}")))?;
    let resp = client
        .post(&url)
        .json(&request_body(variables))
        .send()
        .map_err(|e| fail(format!("no answer: {e}")))?;
    let status = resp.status();
    let text = resp
        .text()
        .map_err(|e| fail(format!("reading the answer: {e}")))?;
    if !status.is_success() {
        let excerpt: String = text.chars().take(300).collect();
        return Err(fail(format!("HTTP {status}: {excerpt}")));
    }
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| fail(format!("the answer is not JSON: {e}")))?;
    machines_from_value(value, now).map_err(|MachinesError(e)| fail(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_appends_graphql_once() {
        for (url, want) in [
            ("http://sabakan:10080", "http://sabakan:10080/graphql"),
            ("http://sabakan:10080/", "http://sabakan:10080/graphql"),
            (
                "http://sabakan:10080/graphql",
                "http://sabakan:10080/graphql",
            ),
        ] {
            assert_eq!(endpoint(url), want);
        }
    }

    /// The spec's example variables, and CKE's marshalling: unset lists as null, both keys sent.
    #[test]
    fn variables_as_cke_sends_them() {
        let spec_example = r#"{
          "having": {"labels": [{"name": "foo", "value": "bar"}], "roles": ["worker", "gpu"]},
          "notHaving": {"states": ["UNINITIALIZED", "RETIRED"]}
        }"#;
        let v = Variables::parse(spec_example).unwrap();
        let body = request_body(Some(&v));
        assert_eq!(
            body["variables"],
            serde_json::json!({
                "having": {"labels": [{"name": "foo", "value": "bar"}], "racks": null,
                           "roles": ["worker", "gpu"], "states": null},
                "notHaving": {"labels": null, "racks": null, "roles": null,
                              "states": ["UNINITIALIZED", "RETIRED"]}
            })
        );
        let empty = request_body(Some(&Variables::parse("{}").unwrap()));
        assert_eq!(
            empty["variables"],
            serde_json::json!({"having": null, "notHaving": null})
        );
        assert!(request_body(None).get("variables").is_none());
        assert!(QUERY.contains("states: [RETIRED]") && QUERY.contains("roles: [\"boot\"]"));
    }

    #[test]
    fn bad_variables_say_what_is_wrong() {
        let cases = [
            (
                r#"{"notHaving":{"states":["retired"]}}"#,
                "notHaving.states: \"retired\"",
            ),
            (r#"{"having":{"role":["cs"]}}"#, "unknown field `role`"),
            ("[]", "expected"),
        ];
        for (text, want) in cases {
            let e = Variables::parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
        }
    }
}
