//! A fake Ganeti RAPI: HTTPS on 127.0.0.1 with [`crate::CA_FILE`]'s certificate, one
//! connection per request as ganeti-rapi does, HTTP basic auth read but not checked. It keeps
//! no cluster of its own: the test's answer function gives each request its status and JSON
//! body, seeing every request so far, so a test can play a cluster that changes, a password
//! that was rotated, or a user who may not write.
//!
//! ```ignore
//! let rapi = FakeRapi::start(Box::new(|seen| match seen.last().unwrap().path.as_str() {
//!     "/2/info" => (200, r#"{"name":"c"}"#.into()),
//!     _ => (404, "{}".into()),
//! }));
//! ```

use crate::serve::{Options, Server};
use base64::Engine as _;
use bytes::Bytes;
use http::{Response, header};
use http_body_util::{BodyExt, Full};
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request the server received.
#[derive(Clone, Debug, PartialEq)]
pub struct Seen {
    pub method: String,
    /// The path with its query, as sent.
    pub path: String,
    /// The password of its basic auth, if any.
    pub password: Option<String>,
    pub body: String,
}

/// The status and JSON body for a request, given every request so far (this one last).
pub type Answer = Box<dyn FnMut(&[Seen]) -> (u16, String) + Send>;

/// An answer that is always the same.
pub fn fixed(status: u16, body: &str) -> Answer {
    let body = body.to_owned();
    Box::new(move |_| (status, body.clone()))
}

/// Settings for [`FakeRapi`]: TLS versions and a delay before each answer.
pub struct Builder {
    versions: Vec<&'static rustls::SupportedProtocolVersion>,
    delay: Duration,
}

impl Builder {
    /// Speak only these TLS versions (default: TLS 1.2 and 1.3).
    pub fn versions(mut self, versions: &[&'static rustls::SupportedProtocolVersion]) -> Builder {
        self.versions = versions.to_vec();
        self
    }

    /// Answer each request after `d` (the requests in progress meanwhile are counted, see
    /// [`FakeRapi::most_in_flight`]).
    pub fn delay(mut self, d: Duration) -> Builder {
        self.delay = d;
        self
    }

    /// Binds 127.0.0.1:0 and starts serving.
    pub fn start(self, answer: Answer) -> FakeRapi {
        let state = Arc::new(State {
            answer: Mutex::new((Vec::new(), answer)),
            in_flight: AtomicUsize::new(0),
            most_in_flight: AtomicUsize::new(0),
            delay: self.delay,
        });
        let options = Options {
            name: "fake-rapi",
            tls: Some(crate::serve::tls_config(&self.versions)),
            one_request_per_connection: true,
        };
        let s = state.clone();
        let server = Server::start(options, move |_| move |req| handle(s.clone(), req));
        FakeRapi { server, state }
    }
}

struct State {
    /// The requests so far and the answer function, under one lock: answers are given in
    /// the order the requests are recorded.
    answer: Mutex<(Vec<Seen>, Answer)>,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
    delay: Duration,
}

async fn handle(
    state: Arc<State>,
    req: http::Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.most_in_flight.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(state.delay).await;
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    let password = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|up| up.split_once(':').map(|(_, p)| p.to_owned()));
    let seen = Seen {
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_default(),
        password,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let (status, text) = {
        let mut guard = state.answer.lock().expect("fake-rapi lock");
        let (log, answer) = &mut *guard;
        log.push(seen);
        answer(log)
    };
    Ok(Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(text)))
        .expect("a valid response"))
}

/// A running fake RAPI. Dropping it stops the server.
pub struct FakeRapi {
    server: Server,
    state: Arc<State>,
}

impl FakeRapi {
    /// TLS 1.2 and 1.3, no delay.
    pub fn start(answer: Answer) -> FakeRapi {
        FakeRapi::builder().start(answer)
    }

    pub fn builder() -> Builder {
        Builder {
            versions: rustls::DEFAULT_VERSIONS.to_vec(),
            delay: Duration::ZERO,
        }
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        self.server.url()
    }

    /// The requests so far, in the order they were answered.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.answer.lock().expect("fake-rapi lock").0.clone()
    }

    /// TCP connections so far, handshakes the client refused included: with one request per
    /// connection, the attempts a client made.
    pub fn connections(&self) -> usize {
        self.server.connections()
    }

    /// The most requests that waited for their answer at once (see [`Builder::delay`]).
    pub fn most_in_flight(&self) -> usize {
        self.state.most_in_flight.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> reqwest::blocking::Client {
        let ca = reqwest::Certificate::from_pem(crate::CA_PEM.as_bytes()).unwrap();
        reqwest::blocking::Client::builder()
            .add_root_certificate(ca)
            .build()
            .unwrap()
    }

    #[test]
    fn each_request_gets_its_answer_on_a_connection_of_its_own_and_is_recorded() {
        let rapi = FakeRapi::start(Box::new(|seen| {
            (200 + seen.len() as u16 - 1, format!("[{}]", seen.len()))
        }));
        let c = client();
        let first = c
            .get(format!("{}/2/info?x=1", rapi.url()))
            .basic_auth("u", Some("secret"))
            .send()
            .unwrap();
        assert_eq!(first.status(), 200);
        assert_eq!(first.text().unwrap(), "[1]");
        let second = c
            .put(format!("{}/2/instances/a/tags", rapi.url()))
            .body("{}")
            .send()
            .unwrap();
        assert_eq!(second.status(), 201);
        assert_eq!(
            rapi.seen(),
            vec![
                Seen {
                    method: "GET".into(),
                    path: "/2/info?x=1".into(),
                    password: Some("secret".into()),
                    body: String::new(),
                },
                Seen {
                    method: "PUT".into(),
                    path: "/2/instances/a/tags".into(),
                    password: None,
                    body: "{}".into(),
                },
            ]
        );
        assert_eq!(rapi.connections(), 2, "one connection per request");
    }
}
