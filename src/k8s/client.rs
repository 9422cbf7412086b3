//! A `kube::Client` from a kubeconfig (or the Pod's service account), with the settings every
//! cluster autorepair talks to gets.

use crate::engine::BackendError;
use ::kube::{Client, Config};
use std::path::PathBuf;
use std::time::Duration;

/// Where a cluster's kubeconfig comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A kubeconfig file (`None`: `$KUBECONFIG`, else `~/.kube/config`) and a context in it
    /// (`None`: its current context).
    Kubeconfig {
        path: Option<PathBuf>,
        context: Option<String>,
    },
    /// The service account of the Pod the watcher runs in.
    InCluster,
}

/// The client settings every cluster gets: a request timeout (kube sets none for responses),
/// no TLS verification bypass, and no retries by the client itself (a retried write would be
/// a second write the executor does not know about, and a refused eviction, 429, must come
/// back to the drain rather than be sent again by the client).
pub fn harden(config: &mut Config, timeout: Duration) -> Result<(), BackendError> {
    if config.accept_invalid_certs {
        return Err(BackendError::Api(format!(
            "the kubeconfig for {} skips TLS verification (insecure-skip-tls-verify): refused, autorepair only talks to API servers it can verify",
            config.cluster_url
        )));
    }
    config.default_retry = false;
    config.read_timeout.get_or_insert(timeout);
    config.write_timeout.get_or_insert(timeout);
    Ok(())
}

pub fn client_error(server: &str, e: ::kube::Error) -> BackendError {
    BackendError::Api(format!("cannot build a client for {server}: {e}"))
}

/// The files kube reads for a kubeconfig: the one named, else each of `$KUBECONFIG`'s, else
/// `~/.kube/config`.
fn kubeconfig_files(named: Option<&std::path::Path>) -> Vec<std::path::PathBuf> {
    if let Some(path) = named {
        return vec![path.to_owned()];
    }
    match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        Some(list) => std::env::split_paths(&list)
            .filter(|p| !p.as_os_str().is_empty())
            .collect(),
        None => std::env::var_os("HOME")
            .map(|home| std::path::Path::new(&home).join(".kube/config"))
            .into_iter()
            .collect(),
    }
}

/// A cluster's client configuration. A kubeconfig's parse error is not passed on: it may
/// quote the file, and the file holds credentials.
pub async fn load(source: &Source) -> Result<Config, BackendError> {
    use ::kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError as K};
    let fail = |what: String| BackendError::Api(format!("kubeconfig: {what}"));
    match source {
        Source::InCluster => Config::incluster().map_err(|e| {
            fail(format!(
                "cannot use the in-cluster service account ({e}): is autorepair running in a Pod?"
            ))
        }),
        Source::Kubeconfig { path, context } => {
            let shown = path.as_ref().map_or_else(
                || "$KUBECONFIG or ~/.kube/config".to_owned(),
                |p| p.display().to_string(),
            );
            // kube reads the files itself (and resolves the paths inside them): first refuse
            // what is not a regular file, which would block it or feed it without end.
            for file in kubeconfig_files(path.as_deref()) {
                match crate::files::require_regular(&file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(fail(format!("cannot read {}: {e}", file.display())));
                    }
                    _ => {}
                }
            }
            let read = match path {
                Some(p) => Kubeconfig::read_from(p),
                None => Kubeconfig::read(),
            };
            // kube's own words quote the path with `'{:?}'`, which doubles the quotes: the
            // path and the reason are said here instead.
            let kc = read.map_err(|e| match e {
                K::Parse(_) => fail(format!("{shown} is not a kubeconfig (YAML)")),
                K::ReadConfig(io, read) if path.is_some() => {
                    fail(format!("cannot read {}: {io}", read.display()))
                }
                K::ReadConfig(io, read) => fail(format!(
                    "cannot read {} (from {shown}): {io}",
                    read.display()
                )),
                other => fail(format!("cannot read {shown}: {other}")),
            })?;
            let options = KubeConfigOptions {
                context: context.clone(),
                ..KubeConfigOptions::default()
            };
            Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| match e {
                    K::LoadContext(c) => fail(format!("{shown} has no context {c:?}")),
                    K::CurrentContextNotSet => fail(format!(
                        "{shown} has no current context: name one with the context option"
                    )),
                    K::LoadCertificateAuthority(e) => fail(format!(
                        "cannot use {shown}: {}",
                        unquoted("certificate authority", e)
                    )),
                    K::LoadClientCertificate(e) => fail(format!(
                        "cannot use {shown}: {}",
                        unquoted("client certificate", e)
                    )),
                    K::LoadClientKey(e) => {
                        fail(format!("cannot use {shown}: {}", unquoted("client key", e)))
                    }
                    other => fail(format!("cannot use {shown}: {other}")),
                })
        }
    }
}

/// A file a kubeconfig names that kube could not load, without kube's doubled quotes around
/// its path.
fn unquoted(what: &str, e: ::kube::config::LoadDataError) -> String {
    match e {
        ::kube::config::LoadDataError::ReadFile(io, file) => {
            format!("cannot read its {what} {}: {io}", file.display())
        }
        other => format!("its {what}: {other}"),
    }
}

/// A hardened client for `config`, with the server's URL for messages, whose write requests
/// are bounded by the deadline `lead` holds ([`Fenced`]): the backend that owns the client
/// keeps there what its write guard gave ([`crate::fence::leading`]). kube spawns the
/// client's worker on the current tokio runtime: call it inside the runtime that will drive
/// the client.
pub fn build(
    mut config: Config,
    timeout: Duration,
    lead: &crate::fence::Lead,
) -> Result<(Client, String), BackendError> {
    harden(&mut config, timeout)?;
    let server = config.cluster_url.to_string();
    let client = ::kube::client::ClientBuilder::try_from(config)
        .map_err(|e| client_error(&server, e))?
        .with_layer(&FenceLayer(lead.clone()))
        .build();
    Ok((client, server))
}

/// Puts [`Fenced`] in a kube client's stack, bounded by the deadline the [`Lead`] holds.
///
/// [`Lead`]: crate::fence::Lead
#[derive(Clone, Debug)]
pub struct FenceLayer(pub crate::fence::Lead);

impl<S> tower::Layer<S> for FenceLayer {
    type Service = Fenced<S>;
    fn layer(&self, inner: S) -> Fenced<S> {
        Fenced {
            inner,
            lead: self.0.clone(),
        }
    }
}

/// Bounds each write request (any method but GET: reads and watches are harmless late, and a
/// watch is long by design) by the time its replica still leads (crate::fence): not sent when
/// too little is left, abandoned when the time runs out. The configured timeout stays the
/// connection's; this one is only ever shorter.
#[derive(Clone, Debug)]
pub struct Fenced<S> {
    inner: S,
    lead: crate::fence::Lead,
}

/// Why kube's stack gave up on a write (the message reaches the pass's report).
#[derive(Debug, thiserror::Error)]
pub enum FenceError {
    #[error(transparent)]
    NotSent(#[from] crate::fence::TooLate),
    #[error(
        "abandoned after {0:?} without an answer: this replica's lease was about to end; the API server may still apply it (docs/metal3.md, \"Running more than one\")"
    )]
    Abandoned(Duration),
}

impl<S, B> tower::Service<http::Request<B>> for Fenced<S>
where
    S: tower::Service<http::Request<B>>,
    S::Response: Send + 'static,
    S::Error: Into<tower::BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = tower::BoxError;
    type Future = futures_util::future::BoxFuture<'static, Result<S::Response, tower::BoxError>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        // Read as the request starts, not when its future is first polled.
        let bound = (req.method() != http::Method::GET)
            .then(|| {
                self.lead
                    .until()
                    .map(|_| self.lead.request_budget(Duration::MAX))
            })
            .flatten();
        match bound {
            None => {
                let sent = self.inner.call(req);
                Box::pin(async move { sent.await.map_err(Into::into) })
            }
            Some(Err(late)) => Box::pin(std::future::ready(Err(FenceError::from(late).into()))),
            Some(Ok(left)) => {
                let sent = self.inner.call(req);
                Box::pin(async move {
                    match tokio::time::timeout(left, sent).await {
                        Ok(answer) => answer.map_err(Into::into),
                        Err(_) => Err(FenceError::Abandoned(left).into()),
                    }
                })
            }
        }
    }
}

/// A current-thread runtime for a synchronous caller to drive a client on.
pub fn runtime() -> Result<tokio::runtime::Runtime, BackendError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| BackendError::Api(format!("cannot start the kube client's runtime: {e}")))
}
