//! What every fake shares: an HTTP/1 server on 127.0.0.1 on a thread and tokio runtime of its
//! own (so both `#[tokio::test]` and plain `#[test]` functions can use it, and the handles'
//! methods stay synchronous), stopped when its handle is dropped; and fault injection's
//! bookkeeping: which requests a fault applies to, and for how many of them.

use bytes::Bytes;
use http::{Request, Response};
use hyper::body::Incoming;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A running server. Dropping it stops accepting, ends the connections in progress, and joins
/// the thread.
pub(crate) struct Server {
    url: String,
    connections: Arc<AtomicUsize>,
    shutdown: tokio::sync::watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How the server speaks.
pub(crate) struct Options {
    /// The thread's name, for panics and debuggers.
    pub name: &'static str,
    /// HTTPS with this configuration instead of plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Close each connection after one answer, as Ganeti's RAPI daemon does.
    pub one_request_per_connection: bool,
}

impl Server {
    /// Binds 127.0.0.1:0 and answers each request with the handler `make` returns for the
    /// address bound.
    pub(crate) fn start<H, F, B, E>(
        options: Options,
        make: impl FnOnce(std::net::SocketAddr) -> H,
    ) -> Server
    where
        H: Fn(Request<Incoming>) -> F + Clone + Send + 'static,
        F: Future<Output = Result<Response<B>, E>> + Send + 'static,
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
        E: Into<BoxError>,
    {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("local address");
        let handle = make(addr);
        let scheme = if options.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let (shutdown, mut stop) = tokio::sync::watch::channel(false);
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        let Options {
            name,
            tls,
            one_request_per_connection,
        } = options;
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
                    loop {
                        tokio::select! {
                            _ = stop.changed() => break,
                            accepted = listener.accept() => {
                                let Ok((tcp, _)) = accepted else { continue };
                                // Counted before TLS: a handshake the client refuses is an
                                // attempt too.
                                counted.fetch_add(1, Ordering::SeqCst);
                                let handle = handle.clone();
                                let acceptor = acceptor.clone();
                                tokio::spawn(async move {
                                    let svc = hyper::service::service_fn(handle);
                                    let mut http = hyper::server::conn::http1::Builder::new();
                                    http.keep_alive(!one_request_per_connection);
                                    use hyper_util::rt::TokioIo;
                                    match acceptor {
                                        Some(acceptor) => {
                                            if let Ok(stream) = acceptor.accept(tcp).await {
                                                let _ = http.serve_connection(TokioIo::new(stream), svc).await;
                                            }
                                        }
                                        None => {
                                            let _ = http.serve_connection(TokioIo::new(tcp), svc).await;
                                        }
                                    }
                                });
                            }
                        }
                    }
                });
            })
            .expect("spawn the server thread");
        Server {
            url: format!("{scheme}://{addr}"),
            connections,
            shutdown,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT` (or https).
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// TCP connections accepted so far, TLS handshakes that failed included.
    pub(crate) fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The certificate every fake serves over TLS (127.0.0.1 and localhost, valid until 2126),
/// as a file a client can be pointed at.
pub const CA_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/server.crt");

/// The same certificate, PEM.
pub const CA_PEM: &str = include_str!("../testdata/server.crt");

/// A TLS configuration (ring provider) serving [`CA_FILE`]'s certificate with `versions`.
pub(crate) fn tls_config(
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let cert = CertificateDer::from_pem_slice(CA_PEM.as_bytes()).expect("testdata/server.crt");
    let key = PrivateKeyDer::from_pem_slice(include_bytes!("../testdata/server.key"))
        .expect("testdata/server.key");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(versions)
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(vec![cert], key)
    .expect("certificate and key");
    Arc::new(config)
}

/// Which requests a fault applies to by method and URL path: unset matches any; a path ending
/// in `*` matches a prefix.
#[derive(Clone, Debug, Default)]
pub(crate) struct Filter {
    method: Option<String>,
    path: Option<String>,
}

impl Filter {
    pub(crate) fn set_method(&mut self, m: &str) {
        self.method = Some(m.to_ascii_uppercase());
    }

    pub(crate) fn set_path(&mut self, p: &str) {
        self.path = Some(p.to_owned());
    }

    pub(crate) fn matches(&self, method: &str, path: &str) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
            && self
                .path
                .as_deref()
                .is_none_or(|p| match p.strip_suffix('*') {
                    Some(prefix) => path.starts_with(prefix),
                    None => path == p,
                })
    }
}

/// Injected faults in the order given, each for its next `n` matching requests.
pub(crate) struct Faults<F> {
    waiting: Vec<(F, usize)>,
}

impl<F> Default for Faults<F> {
    fn default() -> Self {
        Faults {
            waiting: Vec::new(),
        }
    }
}

impl<F: Clone> Faults<F> {
    pub(crate) fn push(&mut self, fault: F, times: usize) {
        self.waiting.push((fault, times));
    }

    /// Uses up one request of the first fault that matches, and returns it.
    pub(crate) fn take(&mut self, matches: impl Fn(&F) -> bool) -> Option<F> {
        let i = self
            .waiting
            .iter()
            .position(|(f, n)| *n > 0 && matches(f))?;
        self.waiting[i].1 -= 1;
        let fault = self.waiting[i].0.clone();
        self.waiting.retain(|(_, n)| *n > 0);
        Some(fault)
    }

    /// How many requests the waiting faults still apply to.
    pub(crate) fn pending(&self) -> usize {
        self.waiting.iter().map(|(_, n)| n).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_matches_method_and_exact_or_prefix_path() {
        let mut f = Filter::default();
        assert!(f.matches("GET", "/anything"));
        f.set_method("put");
        f.set_path("/api/v1/labels/*");
        let cases = [
            ("PUT", "/api/v1/labels/s1/x", true),
            ("PUT", "/api/v1/labels", false),
            ("GET", "/api/v1/labels/s1/x", false),
        ];
        for (method, path, want) in cases {
            assert_eq!(f.matches(method, path), want, "{method} {path}");
        }
        f.set_path("/health");
        assert!(f.matches("PUT", "/health"));
        assert!(!f.matches("PUT", "/health/x"));
    }

    #[test]
    fn faults_are_used_up_in_order_and_a_fault_without_requests_left_is_gone() {
        let mut faults = Faults::default();
        faults.push("a", 2);
        faults.push("b", 1);
        assert_eq!(faults.pending(), 3);
        assert_eq!(faults.take(|f| *f == "b"), Some("b"));
        assert_eq!(faults.take(|_| true), Some("a"));
        assert_eq!(faults.take(|_| true), Some("a"));
        assert_eq!(faults.take(|_| true), None);
        assert_eq!(faults.pending(), 0);
    }
}
