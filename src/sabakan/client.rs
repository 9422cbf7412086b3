//! sabakan's API: CKE's GraphQL query and its variables, the REST machine list and label
//! writes. The only code of the module that talks to the world.

use super::model::{Machine, MachinesError, State, machines_from_value};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
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
        v.validate()
            .map_err(|e| ClientError::Variables(format!("{}: {e}", e.key)))?;
        Ok(v)
    }

    /// What the schema checks beyond the shape: states are sabakan's.
    pub fn validate(&self) -> Result<(), NotAState> {
        for (key, p) in [
            ("having.states", &self.having),
            ("notHaving.states", &self.not_having),
        ] {
            for s in p.iter().flat_map(|p| p.states.iter().flatten()) {
                if !State::ALL.iter().any(|st| st.as_str() == s) {
                    return Err(NotAState {
                        key,
                        state: s.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// A state in the variables' `having` or `notHaving` (`key`) that is not one of sabakan's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{state:?} is not a state; use UNINITIALIZED, HEALTHY, UNHEALTHY, UNREACHABLE, UPDATING, \
     RETIRING or RETIRED"
)]
pub struct NotAState {
    pub key: &'static str,
    pub state: String,
}

impl Variables {
    /// What the machines family asks by default, as CKE's sabakan-triggered repair does when
    /// no variables are stored (CKE's sabakan/query.go): the UNHEALTHY and UNREACHABLE machines
    /// that are not boot servers. Both keys are sent, so the query's own defaults do not apply.
    pub fn auto_repair() -> Variables {
        let none = MachineParams {
            labels: None,
            racks: None,
            roles: None,
            states: None,
            min_days_before_retire: None,
        };
        Variables {
            having: Some(MachineParams {
                states: Some(vec![
                    State::Unhealthy.as_str().to_owned(),
                    State::Unreachable.as_str().to_owned(),
                ]),
                ..none.clone()
            }),
            not_having: Some(MachineParams {
                roles: Some(vec!["boot".to_owned()]),
                ..none
            }),
        }
    }
}

/// What went wrong talking to sabakan. Every message names the URL asked (without any
/// user information it carried) and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("variables: {0}")]
    Variables(String),
    #[error("sabakan URL {url:?}: {problem}")]
    Url { url: String, problem: String },
    #[error("CA certificate {path}: {problem}")]
    Ca { path: PathBuf, problem: String },
    #[error(
        "sabakan at {url}: no answer: {problem}; check that sabakan runs there and that the URL \
         is right"
    )]
    Unreachable { url: String, problem: String },
    #[error("sabakan at {url} answered HTTP {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error(
        "sabakan at {url} answered what sabakan never sends ({problem}); is this sabakan's URL, \
         or is a proxy in the way?"
    )]
    Garbage { url: String, problem: String },
    #[error("sabakan at {url}: the query failed: {problem}")]
    Query { url: String, problem: String },
    #[error(
        "sabakan at {url} refused label {name:?}{} on machine {serial:?} (HTTP 400: {reason}); \
         a label name, and a value unless empty, is 1-63 characters of A-Z a-z 0-9 - _ . that \
         begins and ends with a letter or digit: this is a bug in the label's encoder, report it",
        value.as_ref().map(|v| format!(" = {v:?}")).unwrap_or_default()
    )]
    BadLabel {
        url: String,
        serial: String,
        name: String,
        value: Option<String>,
        reason: String,
    },
    #[error(
        "sabakan at {url} has no machine with serial {serial:?} (HTTP 404): it was deleted \
         since it was listed, or the serial is wrong"
    )]
    NoMachine { url: String, serial: String },
    #[error(
        "sabakan at {url} refused to write (HTTP 403): sabakan takes writes only from the \
         networks in its allowed-ips setting; run autorepair from one of them"
    )]
    Forbidden { url: String },
    /// A label write not sent: this replica's lease ends too soon (src/fence.rs).
    #[error("sabakan at {url}: {fenced}")]
    Fenced {
        url: String,
        fenced: crate::fence::TooLate,
    },
}

/// How to reach sabakan.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// sabakan's base URL, e.g. `http://sabakan.example:10080` (a trailing `/graphql` is
    /// accepted, as `ckecli sabakan set-url` takes either).
    pub url: String,
    /// For each request, connection included.
    pub timeout: Duration,
    /// A PEM file of the CA to trust for an `https://` URL, besides the usual roots.
    pub ca_file: Option<PathBuf>,
}

impl Endpoint {
    pub fn new(url: &str) -> Endpoint {
        Endpoint {
            url: url.to_owned(),
            timeout: Duration::from_secs(30),
            ca_file: None,
        }
    }
}

/// A synchronous sabakan client: CKE's GraphQL search, the REST machine list, and label
/// writes. It counts its requests, so callers can check what a pass costs.
#[derive(Debug)]
pub struct Sabakan {
    http: reqwest::blocking::Client,
    /// The base URL, without `/graphql`.
    base: reqwest::Url,
    /// Each request's timeout; a write's is cut to the time its replica still leads.
    timeout: Duration,
    /// The deadline of the write being made, kept by the backend that asked its write guard.
    lead: crate::fence::Lead,
    requests: AtomicU64,
}

/// sabakan records this header in its audit log as the user who made a change.
const USER_HEADER: &str = "X-Sabakan-User";

impl Sabakan {
    pub fn new(endpoint: &Endpoint) -> Result<Sabakan, ClientError> {
        let trimmed = endpoint.url.trim_end_matches('/');
        let trimmed = trimmed.strip_suffix("/graphql").unwrap_or(trimmed);
        let bad = |problem: String| ClientError::Url {
            url: shown_str(&endpoint.url),
            problem,
        };
        let base = reqwest::Url::parse(trimmed).map_err(|e| bad(format!("{e}")))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(bad(
                "expected http://HOST[:PORT] or https://HOST[:PORT] (sabakan listens on \
                 http://…:10080 by default)"
                    .into(),
            ));
        }
        let mut builder = reqwest::blocking::Client::builder()
            .timeout(endpoint.timeout)
            .connect_timeout(endpoint.timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("autorepair/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = &endpoint.ca_file {
            let ca = |problem: String| ClientError::Ca {
                path: path.clone(),
                problem,
            };
            let pem = crate::files::read_input_bytes(path)
                .map(|(bytes, _)| bytes)
                .map_err(|e| ca(e.to_string()))?;
            let cert = reqwest::Certificate::from_pem(&pem)
                .map_err(|e| ca(format!("not a PEM certificate: {e}")))?;
            builder = builder.add_root_certificate(cert);
        }
        let http = builder.build().map_err(|e| ClientError::Url {
            url: shown(&base),
            problem: format!("cannot set up the HTTP client: {e}"),
        })?;
        Ok(Sabakan {
            http,
            base,
            timeout: endpoint.timeout,
            lead: crate::fence::Lead::default(),
            requests: AtomicU64::new(0),
        })
    }

    /// Where the backend using this client keeps the deadline of the write it makes
    /// ([`crate::fence::leading`]); a client nobody gives one to is bounded by its timeout.
    pub fn lead(&self) -> &crate::fence::Lead {
        &self.lead
    }

    /// Requests sent so far (answered or not).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    fn url(&self, segments: &[&str]) -> reqwest::Url {
        let mut url = self.base.clone();
        // Each segment percent-encoded: a serial or name with `/` or `?` stays one segment.
        url.path_segments_mut()
            .expect("checked in new: a base URL")
            .pop_if_empty()
            .extend(segments);
        url
    }

    /// A label write's timeout: the configured one, cut to the time this replica still leads.
    fn write_budget(&self, url: &reqwest::Url) -> Result<Duration, ClientError> {
        self.lead
            .request_budget(self.timeout)
            .map_err(|fenced| ClientError::Fenced {
                url: shown(url),
                fenced,
            })
    }

    /// Sends one request; an answer of any status is returned with its body.
    fn send(
        &self,
        req: reqwest::blocking::RequestBuilder,
        url: &reqwest::Url,
    ) -> Result<(u16, String), ClientError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let unreachable = |e: reqwest::Error| ClientError::Unreachable {
            url: shown(url),
            problem: causes(e),
        };
        let resp = req
            .header(USER_HEADER, "autorepair")
            .send()
            .map_err(unreachable)?;
        let status = resp.status().as_u16();
        let text = resp.text().map_err(unreachable)?;
        Ok((status, text))
    }

    /// CKE's `searchMachines` query with these variables (`None`: the query's defaults,
    /// which leave out boot and RETIRED machines). A non-200 answer or GraphQL errors fail.
    pub fn search_machines(
        &self,
        variables: Option<&Variables>,
        now: Timestamp,
    ) -> Result<Vec<Machine>, ClientError> {
        let (value, url) = self.search(variables)?;
        machines_from_value(value, now).map_err(|MachinesError(problem)| ClientError::Garbage {
            url: shown(&url),
            problem,
        })
    }

    /// [`Sabakan::search_machines`]'s answer as sabakan sent it
    /// (`{"data":{"searchMachines":[…]}}`), for a caller that keeps the labels as they are.
    pub fn search_answer(
        &self,
        variables: Option<&Variables>,
    ) -> Result<serde_json::Value, ClientError> {
        let (value, url) = self.search(variables)?;
        if !value
            .pointer("/data/searchMachines")
            .is_some_and(serde_json::Value::is_array)
        {
            return Err(ClientError::Garbage {
                url: shown(&url),
                problem: "no data.searchMachines list".into(),
            });
        }
        Ok(value)
    }

    /// The base URL, as messages show it (no user information).
    pub fn shown_url(&self) -> String {
        shown(&self.base)
    }

    fn search(
        &self,
        variables: Option<&Variables>,
    ) -> Result<(serde_json::Value, reqwest::Url), ClientError> {
        let url = self.url(&["graphql"]);
        let req = self.http.post(url.clone()).json(&request_body(variables));
        let (status, text) = self.send(req, &url)?;
        if status != 200 {
            return Err(status_error(&url, status, &text));
        }
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| ClientError::Garbage {
                url: shown(&url),
                problem: format!("not JSON: {e}"),
            })?;
        let errors = value
            .get("errors")
            .and_then(serde_json::Value::as_array)
            .filter(|e| !e.is_empty());
        if let Some(errors) = errors {
            let messages: Vec<&str> = errors
                .iter()
                .map(|e| e["message"].as_str().unwrap_or("(no message)"))
                .collect();
            return Err(ClientError::Query {
                url: shown(&url),
                problem: messages.join("; "),
            });
        }
        Ok((value, url))
    }

    /// `GET /api/v1/machines` with sabakan's query parameters (`[("without-role", "boot")]`;
    /// lists comma-separated). sabakan answers 404 when nothing matches: that is no machine.
    pub fn list_machines(
        &self,
        query: &[(&str, &str)],
        now: Timestamp,
    ) -> Result<Vec<Machine>, ClientError> {
        let mut url = self.url(&["api", "v1", "machines"]);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let (status, text) = self.send(self.http.get(url.clone()), &url)?;
        match status {
            200 => {}
            404 => return Ok(Vec::new()),
            _ => return Err(status_error(&url, status, &text)),
        }
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| ClientError::Garbage {
                url: shown(&url),
                problem: format!("not JSON: {e}"),
            })?;
        if !value.is_array() {
            return Err(ClientError::Garbage {
                url: shown(&url),
                problem: "not a JSON array of machines".into(),
            });
        }
        machines_from_value(value, now).map_err(|MachinesError(problem)| ClientError::Garbage {
            url: shown(&url),
            problem,
        })
    }

    /// Sets one label (`PUT /api/v1/labels/<serial>/<name>`, the value as the body).
    pub fn put_label(&self, serial: &str, name: &str, value: &str) -> Result<(), ClientError> {
        let url = self.url(&["api", "v1", "labels", serial, name]);
        let req = self
            .http
            .put(url.clone())
            .timeout(self.write_budget(&url)?)
            .header(reqwest::header::CONTENT_TYPE, "text/plain")
            .body(value.to_owned());
        let (status, text) = self.send(req, &url)?;
        self.label_answer(&url, status, &text, serial, name, Some(value))
            .map(|_| ())
    }

    /// Removes one label (`DELETE /api/v1/labels/<serial>/<name>`). Returns whether it was
    /// there: sabakan's 404 means the machine has no such label or no longer exists, and
    /// either way the label is absent, which is what was asked.
    pub fn delete_label(&self, serial: &str, name: &str) -> Result<bool, ClientError> {
        let url = self.url(&["api", "v1", "labels", serial, name]);
        let req = self
            .http
            .delete(url.clone())
            .timeout(self.write_budget(&url)?);
        let (status, text) = self.send(req, &url)?;
        self.label_answer(&url, status, &text, serial, name, None)
    }

    fn label_answer(
        &self,
        url: &reqwest::Url,
        status: u16,
        text: &str,
        serial: &str,
        name: &str,
        value: Option<&str>,
    ) -> Result<bool, ClientError> {
        match status {
            200 => Ok(true),
            404 if value.is_none() => Ok(false),
            404 => Err(ClientError::NoMachine {
                url: shown(url),
                serial: serial.to_owned(),
            }),
            400 => Err(ClientError::BadLabel {
                url: shown(url),
                serial: serial.to_owned(),
                name: name.to_owned(),
                value: value.map(str::to_owned),
                reason: sabakan_error(text),
            }),
            _ => Err(status_error(url, status, text)),
        }
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

fn status_error(url: &reqwest::Url, status: u16, text: &str) -> ClientError {
    if status == 403 {
        return ClientError::Forbidden { url: shown(url) };
    }
    ClientError::Status {
        url: shown(url),
        status,
        body: sabakan_error(text),
    }
}

/// The `error` of sabakan's error body, else the start of whatever came.
fn sabakan_error(text: &str) -> String {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text)
        && let Some(e) = v.get("error").and_then(serde_json::Value::as_str)
    {
        return e.to_owned();
    }
    let excerpt: String = text.trim().chars().take(300).collect();
    if excerpt.is_empty() {
        "(empty body)".into()
    } else {
        excerpt
    }
}

/// The error and its causes ("error sending request: client error (Connect): tcp connect
/// error: Connection refused"), without the URL reqwest adds: it would carry any user
/// information.
fn causes(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut out = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// A URL as messages show it: without user and password.
fn shown(url: &reqwest::Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.to_string()
}

/// A URL given as text, as messages show it: without user and password.
pub fn shown_str(url: &str) -> String {
    reqwest::Url::parse(url)
        .map(|u| shown(&u))
        .unwrap_or_else(|_| match url.rsplit_once('@') {
            Some((_, host)) => format!("…@{host}"),
            None => url.to_owned(),
        })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_from_the_base_url() {
        for (base, segments, want) in [
            (
                "http://sabakan:10080",
                &["graphql"][..],
                "http://sabakan:10080/graphql",
            ),
            (
                "http://sabakan:10080/",
                &["graphql"],
                "http://sabakan:10080/graphql",
            ),
            (
                "http://sabakan:10080/graphql",
                &["graphql"],
                "http://sabakan:10080/graphql",
            ),
            (
                "http://sabakan:10080/graphql/",
                &["api", "v1", "machines"],
                "http://sabakan:10080/api/v1/machines",
            ),
            (
                "https://proxy.example/sabakan",
                &["api", "v1", "labels", "S/1", "a?b"],
                "https://proxy.example/sabakan/api/v1/labels/S%2F1/a%3Fb",
            ),
        ] {
            let client = Sabakan::new(&Endpoint::new(base)).unwrap();
            assert_eq!(client.url(segments).as_str(), want, "{base}");
        }
    }

    #[test]
    fn bad_urls_say_so_without_credentials() {
        for (url, want) in [
            ("sabakan:10080", "expected http://"),
            ("ftp://sabakan", "expected http://"),
            ("http://", "empty host"),
        ] {
            let e = Sabakan::new(&Endpoint::new(url)).unwrap_err().to_string();
            assert!(e.contains(want), "{url}: {e}");
        }
        let e = Sabakan::new(&Endpoint::new("ftp://admin:hunter2@sabakan"))
            .unwrap_err()
            .to_string();
        assert!(!e.contains("hunter2") && !e.contains("admin"), "{e}");
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

    /// The check beyond the shape names the key and the state, for the config's message.
    #[test]
    fn a_state_that_is_not_sabakans_is_refused_by_its_key() {
        for (text, want) in [
            (r#"{"having":{"states":["HEALTHY"]}}"#, None),
            (
                r#"{"having":{"states":["HEALTHY","broken"]}}"#,
                Some(("having.states", "broken")),
            ),
            (
                r#"{"notHaving":{"states":["retired"]}}"#,
                Some(("notHaving.states", "retired")),
            ),
        ] {
            let v: Variables = serde_json::from_str(text).unwrap();
            let got = v.validate().err();
            assert_eq!(
                got,
                want.map(|(key, state)| NotAState {
                    key,
                    state: state.into()
                }),
                "{text}"
            );
        }
    }
}
