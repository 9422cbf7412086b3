//! The HTTP side: hyper on a tokio runtime of its own, fault injection, and sabakan's REST
//! handlers (web/labels.go, state.go, machines.go, retire_date.go) with their statuses.

use crate::sabakan::fault::Action;
use crate::sabakan::machine::{State, StateError, is_valid_label_name, is_valid_label_value};
use crate::sabakan::params::{QueryError, RestQuery};
use crate::sabakan::{RecordedRequest, Shared, World, graphql};
use bytes::Bytes;
use http::{Method, Request, Response, header};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};

/// An answer: status, content type, body.
struct Reply(u16, &'static str, String);

impl Reply {
    fn json(status: u16, v: &Value) -> Reply {
        Reply(status, "application/json", v.to_string())
    }
    fn ok() -> Reply {
        Reply(200, "text/plain", String::new())
    }
    /// sabakan's `renderError` body.
    fn error(status: u16, message: &str) -> Reply {
        Reply::json(status, &json!({"status": status, "error": message}))
    }
    fn bad_request(reason: Option<&str>) -> Reply {
        match reason {
            Some(r) => Reply::error(400, &format!("invalid request: {r}")),
            None => Reply::error(400, "invalid request"),
        }
    }
    fn not_found() -> Reply {
        Reply::error(404, "requested resource is not found")
    }
    fn bad_method() -> Reply {
        Reply::error(405, "method not allowed")
    }
    fn internal(e: &str) -> Reply {
        Reply::error(500, &format!("{e}: Internal Server Error"))
    }
}

pub(crate) async fn handle(
    shared: Shared,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let (parts, body) = req.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let header = |h: &str| {
        parts
            .headers
            .get(h)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let raw_path = parts.uri.path().to_owned();
    let raw_query = parts.uri.query().unwrap_or_default().to_owned();
    let recorded = RecordedRequest {
        method: parts.method.to_string(),
        path: raw_path.clone(),
        query: raw_query.clone(),
        content_type: header(header::CONTENT_TYPE.as_str()),
        user: header("x-sabakan-user"),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    };
    let fault = {
        let mut w = shared.lock().expect("fake-sabakan lock");
        w.requests.push(recorded.clone());
        w.faults
            .take(|f| f.matches(parts.method.as_str(), &raw_path))
            .map(|f| f.action)
    };
    let reply = match fault {
        Some(Action::Respond {
            status,
            content_type,
            body,
        }) => Reply(status, content_type, body),
        Some(Action::Hangup) => {
            return Err(std::io::Error::other("hung up by an injected fault"));
        }
        Some(Action::Delay(d)) => {
            tokio::time::sleep(d).await;
            serve(&shared, &parts, &raw_path, &raw_query, &bytes)
        }
        None => serve(&shared, &parts, &raw_path, &raw_query, &bytes),
    };
    {
        let mut w = shared.lock().expect("fake-sabakan lock");
        for react in w.reactors.clone() {
            react(&recorded, &mut w.machines);
        }
    }
    let Reply(status, content_type, body) = reply;
    Ok(Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response"))
}

fn serve(
    shared: &Shared,
    parts: &http::request::Parts,
    raw_path: &str,
    raw_query: &str,
    body: &[u8],
) -> Reply {
    let mut w = shared.lock().expect("fake-sabakan lock");
    // Go's handlers see the decoded path.
    let path = percent_encoding::percent_decode_str(raw_path)
        .decode_utf8_lossy()
        .into_owned();
    let method = &parts.method;
    if path == "/graphql" {
        let json_body = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
        if method != Method::POST || !json_body {
            return Reply::json(
                400,
                &json!({"errors": [{"message": "transport not supported"}], "data": null}),
            );
        }
        let (status, v) = graphql::execute(&mut w, body);
        return Reply::json(status, &v);
    }
    if path == "/health" {
        return Reply::json(200, &json!({"health": "healthy"}));
    }
    let Some(p) = path.strip_prefix("/api/v1/") else {
        return Reply::not_found();
    };
    if w.read_only && method != Method::GET && method != Method::HEAD {
        return Reply::error(403, "forbidden");
    }
    if p.starts_with("machines") {
        match *method {
            Method::GET => machines_get(&w, raw_query),
            Method::DELETE => match p.strip_prefix("machines/") {
                Some(serial) if !serial.is_empty() => machine_delete(&mut w, serial),
                _ => Reply::bad_request(None),
            },
            Method::POST => Reply::error(
                501,
                "the fake sabakan registers machines only through FakeSabakan::insert",
            ),
            _ => Reply::bad_method(),
        }
    } else if let Some(serial) = p.strip_prefix("state/") {
        if serial.is_empty() {
            return Reply::bad_request(None);
        }
        match *method {
            Method::GET => match w.machines.get(serial) {
                Some(m) => Reply(200, "text/plain", m.state.rest().to_owned()),
                None => Reply::not_found(),
            },
            Method::PUT => state_put(&mut w, serial, body),
            _ => Reply::bad_method(),
        }
    } else if let Some(rest) = p.strip_prefix("labels/") {
        let Some((serial, name)) = rest.split_once('/') else {
            return Reply::bad_request(None);
        };
        // The name is checked before the method, so a bad name is 400 for DELETE too.
        if !is_valid_label_name(name) {
            return Reply::bad_request(Some("invalid label name"));
        }
        match *method {
            Method::PUT => label_put(&mut w, serial, name, body),
            Method::DELETE => match w.machines.get_mut(serial) {
                Some(m) => match m.labels.remove(name) {
                    Some(_) => Reply::ok(),
                    None => Reply::not_found(),
                },
                None => Reply::not_found(),
            },
            _ => Reply::bad_method(),
        }
    } else if let Some(serial) = p.strip_prefix("retire-date/") {
        if serial.is_empty() {
            return Reply::bad_request(None);
        }
        if method != Method::PUT {
            return Reply::bad_method();
        }
        if body.len() > 1024 {
            return Reply::bad_request(None);
        }
        let Ok(date) = String::from_utf8_lossy(body).trim().parse() else {
            return Reply::bad_request(None);
        };
        match w.machines.get_mut(serial) {
            Some(m) => {
                m.retire_date = date;
                Reply::ok()
            }
            None => Reply::not_found(),
        }
    } else {
        Reply::error(
            404,
            "requested resource is not found (or not served by the fake sabakan)",
        )
    }
}

fn machines_get(w: &World, raw_query: &str) -> Reply {
    let q = match RestQuery::parse(raw_query) {
        Ok(q) => q,
        Err(_) => {
            return Reply::bad_request(Some(
                "'with' and 'without' options about the same things are specified.",
            ));
        }
    };
    let now = w.now();
    let mut out = Vec::new();
    for m in w.machines.values() {
        match q.matches(m) {
            Ok(true) => out.push(m.rest_json(now)),
            Ok(false) => {}
            Err(QueryError::BadLabels(e)) => return Reply::internal(&e),
            Err(QueryError::Conflict) => unreachable!("checked by parse"),
        }
    }
    // sabakan answers 404 rather than an empty list.
    if out.is_empty() {
        return Reply::not_found();
    }
    Reply::json(200, &Value::Array(out))
}

fn machine_delete(w: &mut World, serial: &str) -> Reply {
    match w.machines.get(serial) {
        None => Reply::not_found(),
        Some(m) if m.state != State::Retired => {
            Reply::internal("non-retired machine cannot be deleted")
        }
        Some(_) => {
            w.machines.remove(serial);
            Reply::ok()
        }
    }
}

fn label_put(w: &mut World, serial: &str, name: &str, body: &[u8]) -> Reply {
    // http.MaxBytesReader(1024): a longer body fails the read, a 500.
    if body.len() > 1024 {
        return Reply::internal("http: request body too large");
    }
    let value = String::from_utf8_lossy(body);
    if !is_valid_label_value(&value) {
        return Reply::bad_request(Some("invalid label value"));
    }
    match w.machines.get_mut(serial) {
        Some(m) => {
            m.labels.insert(name.to_owned(), value.into_owned());
            Reply::ok()
        }
        None => Reply::not_found(),
    }
}

fn state_put(w: &mut World, serial: &str, body: &[u8]) -> Reply {
    if body.len() > 128 {
        return Reply::internal("http: request body too large");
    }
    let text = String::from_utf8_lossy(body);
    let Some(to) = State::from_rest(&text) else {
        return Reply::bad_request(Some(&format!("invalid state: {text}")));
    };
    let now = w.now();
    let Some(m) = w.machines.get_mut(serial) else {
        return Reply::not_found();
    };
    match m.set_state(to, now) {
        Ok(()) => Reply::ok(),
        Err(StateError::EncryptionKeyExists) => Reply::bad_request(None),
        Err(e @ StateError::Forbidden { .. }) => Reply::internal(&e.to_string()),
    }
}
