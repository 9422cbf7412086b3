//! Failed Kubernetes API calls as [`BackendError`]s that name the server, the request and what
//! to do. Transport failures are classified by [`crate::transport`]; this file says what they
//! mean for a Kubernetes API server.

use crate::engine::{BackendError, ObjectRef};
use crate::transport::{self, Advice, TransportError};
use std::error::Error as StdError;
use std::time::Duration;

/// How errors name the service.
pub const SERVICE: &str = "the Kubernetes API server";

/// The hint of a 409 answer, recognisable by [`is_conflict`]'s callers in messages too.
pub const CONFLICT_HINT: &str = "not retried: the next pass re-reads it and re-plans";

/// Whether an error is a write refused because its object changed since the pass read it
/// (409 Conflict on a resourceVersion or uid precondition).
pub fn is_conflict(e: &BackendError) -> bool {
    transport::http_status(e) == Some(409)
}

/// Whether an error is a list refused because the server cannot select by that field (Pods
/// by `spec.nodeName` on some API servers): the caller lists them whole instead.
pub fn refuses_field_selector(e: &BackendError) -> bool {
    matches!(
        TransportError::of(e),
        Some(TransportError::Http { status: 400, message, .. })
            if message.contains("field label not supported")
    )
}

/// One request, for the messages.
pub struct Call<'a> {
    pub method: &'static str,
    /// The server's URL, `https://host:port`.
    pub server: &'a str,
    /// The request's path and query.
    pub path: &'a str,
    /// The object a write addresses (404 on it is [`BackendError::NoSuchObject`]).
    pub object: Option<&'a ObjectRef>,
    /// What it reads or writes, for people: `machines.cluster.x-k8s.io`.
    pub what: &'a str,
    /// The resourceVersion the write was conditioned on.
    pub version: Option<&'a str>,
    pub timeout: Duration,
}

impl Call<'_> {
    fn url(&self) -> String {
        format!("{}{}", self.server.trim_end_matches('/'), self.path)
    }
}

/// Any error of the kube client.
pub fn from_kube(e: ::kube::Error, call: &Call) -> BackendError {
    match e {
        ::kube::Error::Api(status) => http(&status, call),
        ::kube::Error::SerdeError(e) => nonsense(call, &e.to_string()),
        ::kube::Error::FromUtf8(e) => nonsense(call, &e.to_string()),
        ::kube::Error::Auth(e) => BackendError::Api(format!(
            "{}: cannot authenticate to {SERVICE} at {}: {e}. Check the credentials of the kubeconfig",
            call.what, call.server
        )),
        ::kube::Error::HyperError(e) => transport(&e, call),
        ::kube::Error::Service(e) => transport(e.as_ref(), call),
        other => BackendError::Api(format!(
            "{} {} ({}): {other}",
            call.method,
            call.url(),
            call.what
        )),
    }
}

/// A 2xx answer that is not what a Kubernetes API server sends.
pub fn nonsense(call: &Call, why: &str) -> BackendError {
    BackendError::Api(format!(
        "{} {} ({}): the answer is not what a Kubernetes API server sends ({why}): is {} a Kubernetes API server, and is nothing between us rewriting its answers?",
        call.method,
        call.url(),
        call.what,
        call.server
    ))
}

fn http(status: &::kube::core::Status, call: &Call) -> BackendError {
    let code = status.code;
    let write = call.method != "GET";
    if code == 404
        && write
        && let Some(object) = call.object
    {
        return BackendError::NoSuchObject {
            object: object.clone(),
        };
    }
    let hint = match code {
        409 if write => {
            let what = call
                .object
                .map_or_else(|| call.what.to_owned(), ToString::to_string);
            match call.version {
                Some(v) => format!(
                    " — {what} changed since this pass read it (resourceVersion {v}): nothing was written, {CONFLICT_HINT}"
                ),
                None => format!(
                    " — {what} changed since this pass read it: nothing was written, {CONFLICT_HINT}"
                ),
            }
        }
        401 => " — the server does not accept the kubeconfig's credentials".to_owned(),
        403 => format!(
            " — the account may not do this: autorepair needs get, list, patch and delete on {} (docs/metal3-kube.md and docs/drain.md list the rules)",
            call.what
        ),
        0 => " — the server answered an error that names no HTTP status".to_owned(),
        c if c == 429 || c >= 500 => " — the next pass tries again".to_owned(),
        _ => String::new(),
    };
    let message = if status.message.is_empty() {
        status.reason.clone()
    } else {
        status.message.clone()
    };
    TransportError::Http {
        service: SERVICE,
        method: call.method.to_owned(),
        url: call.url(),
        status: code,
        message,
        hint,
    }
    .into()
}

/// A request that got no HTTP answer.
fn transport(e: &(dyn StdError + 'static), call: &Call) -> BackendError {
    // kube's client does not say when it was connecting: any failure may be a name that does
    // not resolve.
    transport::classify(e, call.server, false, true).into_error(
        call.url(),
        &Advice {
            service: SERVICE,
            tls: &|_| "The server's certificate is not signed by the kubeconfig's certificate-authority(-data), or names another host: check the kubeconfig (not retried: the same certificate fails the same way)".to_owned(),
            timeout: call.timeout,
            timeout_limit: None,
            timed_out: "The API server may be overloaded, or a firewall drops the packets",
            refused: "Check that the API server runs and that the kubeconfig's server URL is right",
            unresolvable: "check the kubeconfig's server URL and this host's DNS",
            other: "Check the address and the network path to the API server",
        },
    )
    .into()
}
