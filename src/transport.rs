//! Requests that got no HTTP answer, classified once for every HTTP client the families use
//! (reqwest for Ganeti's RAPI, the kube client's hyper for Kubernetes) into the
//! [`TransportError`] kinds the retries and the messages tell apart: TLS, timeout, connection
//! refused, a host name that does not resolve, any other failure to connect; and requests
//! that got an HTTP error status. The engine sees them as [`BackendError::Service`] and only
//! reports them: whether to try again is decided here ([`TransportError::is_transient`]).
//!
//! The class is decided on the error *types* in the source chain (rustls, io), never on
//! message text: the text only goes into the message as the cause. Each client says what to do
//! about each kind ([`Advice`]): the remedies are the service's.

use crate::engine::BackendError;
use std::error::Error as StdError;
use std::io::ErrorKind;
use std::net::ToSocketAddrs;
use std::time::Duration;

/// What a failed request's source chain holds.
#[derive(Default, Debug)]
pub struct Chain {
    pub tls: Option<rustls::Error>,
    /// The innermost I/O error's kind.
    pub io: Option<ErrorKind>,
    /// The innermost error's text: the cause without the clients' wrappers ("error sending
    /// request for url", "client error (Connect)").
    pub root: String,
}

/// An HTTP request to a service that failed: no answer, or an error status. Each names the
/// service, the URL and what to do.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The TLS handshake failed: most often a server certificate that the configured CA file
    /// does not vouch for. Never retried: the same certificate fails the same way.
    #[error("TLS handshake with {service} at {url} failed: {cause}. {hint}")]
    Tls {
        service: &'static str,
        url: String,
        cause: String,
        hint: String,
    },
    /// Nothing listens on the port: the daemon is down, or host or port are wrong.
    #[error("connection to {service} at {url} refused ({cause}): nothing listens there. {hint}")]
    Refused {
        service: &'static str,
        url: String,
        cause: String,
        hint: &'static str,
    },
    #[error("{service} at {url} did not answer within {after:?} ({cause}). {hint}")]
    Timeout {
        service: &'static str,
        url: String,
        after: Duration,
        cause: String,
        hint: &'static str,
    },
    #[error("cannot resolve {host}, the host of {service} URL {url} ({cause}): {hint}")]
    Dns {
        service: &'static str,
        url: String,
        host: String,
        cause: String,
        hint: &'static str,
    },
    /// Any other failure to connect or to read the answer (reset, unreachable network, …).
    #[error("cannot talk to {service} at {url}: {cause}. {hint}")]
    Connect {
        service: &'static str,
        url: String,
        cause: String,
        hint: &'static str,
    },
    /// The server answered with an HTTP error status.
    #[error("{method} {url}: {service} answered {status}: {message}{hint}")]
    Http {
        service: &'static str,
        method: String,
        url: String,
        status: u16,
        message: String,
        /// What to do, with a leading separator, or empty.
        hint: String,
    },
}

impl TransportError {
    /// Whether the same request may succeed if tried again shortly (the daemon restarting, a
    /// slow master). A refused certificate, an unknown name or a refused user never is.
    pub fn is_transient(&self) -> bool {
        match self {
            TransportError::Refused { .. }
            | TransportError::Timeout { .. }
            | TransportError::Connect { .. } => true,
            TransportError::Http { status, .. } => *status >= 500,
            TransportError::Tls { .. } | TransportError::Dns { .. } => false,
        }
    }

    /// The transport failure a backend error carries, if it carries one.
    pub fn of(e: &BackendError) -> Option<&TransportError> {
        e.service_error()
    }

    /// The transport failure a backend error carries, to add to what it says.
    pub fn of_mut(e: &mut BackendError) -> Option<&mut TransportError> {
        e.service_error_mut()
    }

    /// The HTTP status the service answered, if it answered an error.
    pub fn status(&self) -> Option<u16> {
        match self {
            TransportError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }
}

impl From<TransportError> for BackendError {
    fn from(e: TransportError) -> BackendError {
        BackendError::service(e)
    }
}

/// Whether a backend error is a transport failure that may pass if the request is tried again
/// ([`TransportError::is_transient`]); any other backend error is not.
pub fn is_transient(e: &BackendError) -> bool {
    TransportError::of(e).is_some_and(TransportError::is_transient)
}

/// The HTTP status of a backend error that is a service's error answer.
pub fn http_status(e: &BackendError) -> Option<u16> {
    TransportError::of(e).and_then(TransportError::status)
}

/// Walks an error's source chain.
pub fn chain(e: &(dyn StdError + 'static)) -> Chain {
    let mut c = Chain::default();
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(t) = err.downcast_ref::<rustls::Error>() {
            c.tls.get_or_insert_with(|| t.clone());
        }
        c.root = err.to_string();
        cur = match err.downcast_ref::<std::io::Error>() {
            Some(io) => {
                c.io = Some(io.kind());
                // io::Error::source() skips the error it wraps (an I/O error or the rustls
                // error, in hyper-rustls and tokio-rustls), so descend into that one instead.
                match io.get_ref() {
                    Some(inner) => Some(inner as &(dyn StdError + 'static)),
                    None => io.source(),
                }
            }
            None => err.source(),
        };
    }
    c
}

/// Why a request got no answer.
#[derive(Debug)]
pub enum Failure {
    Tls(rustls::Error),
    TimedOut,
    Refused,
    /// The URL's host name does not resolve.
    Unresolvable {
        host: String,
        cause: String,
    },
    Other,
}

/// A classified failure with its cause's text.
#[derive(Debug)]
pub struct Failed {
    pub failure: Failure,
    pub cause: String,
}

/// Classifies a request to `url` that got no answer. `timed_out`: the client says it timed
/// out (reqwest does; hyper leaves an I/O `TimedOut` in the chain). `connecting`: it failed
/// before a connection stood, so a host name that does not resolve may be why.
pub fn classify(
    e: &(dyn StdError + 'static),
    url: &str,
    timed_out: bool,
    connecting: bool,
) -> Failed {
    let c = chain(e);
    let failure = if let Some(tls) = c.tls {
        Failure::Tls(tls)
    } else if timed_out || c.io == Some(ErrorKind::TimedOut) {
        Failure::TimedOut
    } else if c.io == Some(ErrorKind::ConnectionRefused) {
        Failure::Refused
    } else if let Some((host, cause)) = connecting.then(|| unresolvable(url)).flatten() {
        Failure::Unresolvable { host, cause }
    } else {
        Failure::Other
    };
    Failed {
        failure,
        cause: c.root,
    }
}

/// What to do about each kind of failure, for one service.
pub struct Advice<'a> {
    /// How messages name the service: `the Ganeti RAPI`.
    pub service: &'static str,
    /// The hint for a TLS failure.
    pub tls: &'a dyn Fn(&rustls::Error) -> String,
    /// The limit a timeout hit, and what it is called (appended to the cause), if anything.
    pub timeout: Duration,
    pub timeout_limit: Option<&'static str>,
    pub timed_out: &'static str,
    pub refused: &'static str,
    pub unresolvable: &'static str,
    pub other: &'static str,
}

impl Failed {
    pub fn into_error(self, url: String, advice: &Advice) -> TransportError {
        let service = advice.service;
        let cause = self.cause;
        match self.failure {
            Failure::Tls(tls) => TransportError::Tls {
                service,
                url,
                cause: tls.to_string(),
                hint: (advice.tls)(&tls),
            },
            Failure::TimedOut => TransportError::Timeout {
                service,
                url,
                after: advice.timeout,
                cause: match advice.timeout_limit {
                    Some(limit) => format!("{cause}; {limit}"),
                    None => cause,
                },
                hint: advice.timed_out,
            },
            Failure::Refused => TransportError::Refused {
                service,
                url,
                cause,
                hint: advice.refused,
            },
            Failure::Unresolvable { host, cause } => TransportError::Dns {
                service,
                url,
                host,
                cause,
                hint: advice.unresolvable,
            },
            Failure::Other => TransportError::Connect {
                service,
                url,
                cause,
                hint: advice.other,
            },
        }
    }
}

/// The resolver's error carries no type of its own; asking the system resolver again tells a
/// name that does not resolve from any other failure to connect.
fn unresolvable(url: &str) -> Option<(String, String)> {
    let u = reqwest::Url::parse(url).ok()?;
    let host = u.host_str()?.to_owned();
    if host.starts_with('[') || host.parse::<std::net::IpAddr>().is_ok() {
        return None; // an address: nothing to resolve
    }
    let port = u.port_or_known_default()?;
    match (host.as_str(), port).to_socket_addrs() {
        Err(e) => Some((host, e.to_string())),
        Ok(mut addrs) => addrs.next().is_none().then(|| (host, "no address".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_classified_on_the_types_in_its_chain() {
        let io = |kind| std::io::Error::new(kind, "inner");
        let tls = std::io::Error::other(rustls::Error::DecryptError);
        let cases: [(&(dyn StdError + 'static), bool, &str); 5] = [
            (&tls, false, "Tls(DecryptError)"),
            (&io(ErrorKind::TimedOut), false, "TimedOut"),
            (&io(ErrorKind::Other), true, "TimedOut"),
            (&io(ErrorKind::ConnectionRefused), false, "Refused"),
            (&io(ErrorKind::ConnectionReset), false, "Other"),
        ];
        for (e, timed_out, want) in cases {
            let got = classify(e, "https://192.0.2.1:443", timed_out, true);
            assert_eq!(format!("{:?}", got.failure), want);
        }
    }

    /// Inside the engine's error, a transport failure says the same words and is retried as
    /// before; the engine's own errors are never retried.
    #[test]
    fn a_transport_failure_in_a_backend_error_keeps_its_words_and_its_class() {
        let (service, url) = ("the X API", "https://x.example:1".to_owned());
        let http = |status| TransportError::Http {
            service,
            method: "GET".into(),
            url: url.clone(),
            status,
            message: "no".into(),
            hint: ": fix it".into(),
        };
        let cases = [
            (
                TransportError::Tls {
                    service,
                    url: url.clone(),
                    cause: "bad cert".into(),
                    hint: "Check the CA".into(),
                },
                false,
                None,
            ),
            (
                TransportError::Refused {
                    service,
                    url: url.clone(),
                    cause: "os error 111".into(),
                    hint: "Start it",
                },
                true,
                None,
            ),
            (
                TransportError::Timeout {
                    service,
                    url: url.clone(),
                    after: Duration::from_secs(2),
                    cause: "slow".into(),
                    hint: "Wait",
                },
                true,
                None,
            ),
            (
                TransportError::Dns {
                    service,
                    url: url.clone(),
                    host: "x.example".into(),
                    cause: "no such name".into(),
                    hint: "check DNS",
                },
                false,
                None,
            ),
            (
                TransportError::Connect {
                    service,
                    url: url.clone(),
                    cause: "reset".into(),
                    hint: "Check the network",
                },
                true,
                None,
            ),
            (http(404), false, Some(404)),
            (http(409), false, Some(409)),
            (http(500), true, Some(500)),
            (http(503), true, Some(503)),
        ];
        for (failure, transient, status) in cases {
            let words = failure.to_string();
            assert_eq!(failure.is_transient(), transient, "{words}");
            let e = BackendError::from(failure);
            assert_eq!(e.to_string(), words);
            assert!(StdError::source(&e).is_none(), "{words}");
            assert_eq!(is_transient(&e), transient, "{words}");
            assert_eq!(http_status(&e), status, "{words}");
            assert!(TransportError::of(&e).is_some(), "{words}");
        }
        for other in [
            BackendError::Api("boom".into()),
            BackendError::Halted("lease lost".into()),
            BackendError::NoWriteAccess("grant write".into()),
            BackendError::service(std::io::Error::other("not HTTP")),
        ] {
            assert!(!is_transient(&other), "{other}");
            assert_eq!(http_status(&other), None, "{other}");
            assert!(TransportError::of(&other).is_none(), "{other}");
        }
    }

    #[test]
    fn only_a_host_name_can_fail_to_resolve() {
        assert_eq!(unresolvable("https://192.0.2.1:6443"), None);
        assert_eq!(unresolvable("https://[2001:db8::1]:6443/api"), None);
        let (host, _) = unresolvable("https://no-such-host.invalid:6443").expect("unresolvable");
        assert_eq!(host, "no-such-host.invalid");
    }
}
