//! Failed RAPI requests as typed errors that name the URL, the underlying cause and what to do.
//! Transport failures are classified by `crate::transport`; this file says what they mean for
//! Ganeti's RAPI.

use crate::engine::backend::BackendError;
use crate::transport::{self, Advice, Failure, TransportError};
use reqwest::{Method, StatusCode};
use std::net::ToSocketAddrs;
use std::path::Path;
use std::time::Duration;

/// How errors name the server.
const SERVICE: &str = "the Ganeti RAPI";

/// What the error messages need to know about the endpoint.
pub(super) struct Context<'a> {
    /// The limit of a whole request (`rapi.timeout`).
    pub timeout: Duration,
    /// The limit of connecting: the TCP connection and the TLS handshake.
    pub connect_timeout: Duration,
    pub ca_file: Option<&'a Path>,
    pub user: &'a str,
}

/// Whether the server refused the TLS versions offered (a server that speaks only TLS 1.3,
/// when the client offered only 1.2).
pub(super) fn refuses_protocol_version(e: &reqwest::Error) -> bool {
    use rustls::AlertDescription as A;
    matches!(
        transport::chain(e).tls,
        Some(
            rustls::Error::AlertReceived(A::ProtocolVersion | A::HandshakeFailure)
                | rustls::Error::PeerIncompatible(_)
        )
    )
}

/// A request that got no HTTP answer.
pub(super) fn transport(e: &reqwest::Error, url: &str, ctx: &Context) -> BackendError {
    let failed = transport::classify(e, url, e.is_timeout(), e.is_connect());
    let url = url.to_owned();
    if matches!(failed.failure, Failure::TimedOut) && e.is_connect() {
        // Raising rapi.timeout does not help here: say which limit it was, and tell a host
        // that cannot be reached from a daemon that accepts connections but never answers.
        let within = ctx.connect_timeout;
        let failed = match accepts_tcp(&url, within) {
            true => TransportError::Connect {
                service: SERVICE,
                url,
                cause: format!(
                    "the port accepts TCP connections, but the TLS handshake did not finish within {within:?}, the connect timeout (10 s, or rapi.timeout if shorter)"
                ),
                hint: "ganeti-rapi accepts connections but does not answer them: it is hung or overloaded. Check it on the master (/usr/lib/ganeti/daemon-util check ganeti-rapi) and restart it",
            },
            false => TransportError::Connect {
                service: SERVICE,
                url,
                cause: format!(
                    "no TCP connection within {within:?}, the connect timeout (10 s, or rapi.timeout if shorter)"
                ),
                hint: "The master is down or unreachable, or a firewall drops the packets: check the host, the address and the network path to port 5080",
            },
        };
        return failed.into();
    }
    failed.into_error(
        url,
        &Advice {
            service: SERVICE,
            tls: &|tls| tls_hint(tls, ctx),
            timeout: ctx.timeout,
            timeout_limit: Some("the limit of a whole request, rapi.timeout"),
            timed_out: "The RAPI daemon took the request but Ganeti did not answer in time: a large cluster or a busy master is slow (raise rapi.timeout in the config), or its master daemons hang (check ganeti-luxid and ganeti-wconfd on the master)",
            refused: "Check that ganeti-rapi runs on the master (/usr/lib/ganeti/daemon-util check ganeti-rapi) and that host and port (5080 by default) are right",
            unresolvable: "check the name given with --rapi (or rapi.url) and this host's DNS",
            other: "Check the address and the network path to the master",
        },
    )
    .into()
}

/// Whether a TCP connection to the URL's host and port opens within `within` (at most 2 s).
fn accepts_tcp(url: &str, within: Duration) -> bool {
    let Some(addrs) = reqwest::Url::parse(url).ok().and_then(|u| {
        let port = u.port_or_known_default()?;
        (u.host_str()?.trim_matches(['[', ']']), port)
            .to_socket_addrs()
            .ok()
    }) else {
        return false;
    };
    let within = within.min(Duration::from_secs(2));
    addrs
        .take(2)
        .any(|a| std::net::TcpStream::connect_timeout(&a, within).is_ok())
}

fn tls_hint(tls: &rustls::Error, ctx: &Context) -> String {
    let not_retried = "(not retried: the same certificate fails the same way)";
    match (tls, ctx.ca_file) {
        (rustls::Error::InvalidCertificate(_), Some(ca)) => format!(
            "The server's certificate is neither the one in {} nor signed by a CA in it: a wrong file, or the master's certificate was renewed. Copy the certificate part of the master's /var/lib/ganeti/rapi.pem again (openssl x509 -in /var/lib/ganeti/rapi.pem) and give it with --rapi-ca (or rapi.ca_file) {not_retried}",
            ca.display()
        ),
        (rustls::Error::InvalidCertificate(_), None) => format!(
            "No --rapi-ca was given, so the server was checked against the public web roots, which Ganeti's self-signed certificate never passes: copy the master's /var/lib/ganeti/rapi.pem and give it with --rapi-ca (or rapi.ca_file) {not_retried}"
        ),
        _ => format!(
            "The server does not speak TLS as Ganeti's RAPI does: check that the URL names the RAPI port of the master (5080 by default) {not_retried}"
        ),
    }
}

/// A request that got an HTTP error status. `body` is the answer's text: Ganeti's errors are
/// JSON objects with a `message`.
pub(super) fn http(
    method: &Method,
    url: &str,
    status: StatusCode,
    body: &str,
    ctx: &Context,
) -> BackendError {
    let message = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message")?.as_str().map(str::to_owned))
        .unwrap_or_else(|| body.trim().chars().take(300).collect());
    let user = ctx.user;
    let users = "/var/lib/ganeti/rapi/users on the master";
    if status == StatusCode::FORBIDDEN && method != Method::GET {
        return BackendError::NoWriteAccess(format!(
            "{method} {url}: {SERVICE} answered 403 ({message}): the RAPI user {user:?} may not write: give it the `write` option (`{user} PASSWORD write`) in {users}, which Ganeti reads without a restart; status and run --dry-run need only read access"
        ));
    }
    let hint = match status.as_u16() {
        401 => format!(
            ": the user name or password was refused: check the RAPI user {user:?} (a line `{user} PASSWORD …` in {users}) and the password file"
        ),
        403 => format!(
            ": the RAPI user {user:?} may not read this resource: give it the `read` option (`{user} PASSWORD read`) in {users}"
        ),
        502..=504 => ": the RAPI daemon runs but got no answer from Ganeti's master daemons: check ganeti-luxid and ganeti-wconfd on the master".into(),
        _ => String::new(),
    };
    TransportError::Http {
        service: SERVICE,
        method: method.to_string(),
        url: url.to_owned(),
        status: status.as_u16(),
        message,
        hint,
    }
    .into()
}
