//! Requests that got no HTTP answer, classified once for every HTTP client the families use
//! (reqwest for Ganeti's RAPI, the kube client's hyper for Kubernetes) into the
//! [`BackendError`] kinds the executor and the messages tell apart: TLS, timeout, connection
//! refused, a host name that does not resolve, any other failure to connect.
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
    pub fn into_error(self, url: String, advice: &Advice) -> BackendError {
        let service = advice.service;
        let cause = self.cause;
        match self.failure {
            Failure::Tls(tls) => BackendError::Tls {
                service,
                url,
                cause: tls.to_string(),
                hint: (advice.tls)(&tls),
            },
            Failure::TimedOut => BackendError::Timeout {
                service,
                url,
                after: advice.timeout,
                cause: match advice.timeout_limit {
                    Some(limit) => format!("{cause}; {limit}"),
                    None => cause,
                },
                hint: advice.timed_out,
            },
            Failure::Refused => BackendError::Refused {
                service,
                url,
                cause,
                hint: advice.refused,
            },
            Failure::Unresolvable { host, cause } => BackendError::Dns {
                service,
                url,
                host,
                cause,
                hint: advice.unresolvable,
            },
            Failure::Other => BackendError::Connect {
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

    #[test]
    fn only_a_host_name_can_fail_to_resolve() {
        assert_eq!(unresolvable("https://192.0.2.1:6443"), None);
        assert_eq!(unresolvable("https://[2001:db8::1]:6443/api"), None);
        let (host, _) = unresolvable("https://no-such-host.invalid:6443").expect("unresolvable");
        assert_eq!(host, "no-such-host.invalid");
    }
}
