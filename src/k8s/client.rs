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
            let read = match path {
                Some(p) => Kubeconfig::read_from(p),
                None => Kubeconfig::read(),
            };
            let kc = read.map_err(|e| match e {
                K::Parse(_) => fail(format!("{shown} is not a kubeconfig (YAML)")),
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
                    other => fail(format!("cannot use {shown}: {other}")),
                })
        }
    }
}

/// A hardened client for `config`, with the server's URL for messages. kube spawns the
/// client's worker on the current tokio runtime: call it inside the runtime that will drive
/// the client.
pub fn build(mut config: Config, timeout: Duration) -> Result<(Client, String), BackendError> {
    harden(&mut config, timeout)?;
    let server = config.cluster_url.to_string();
    let client = Client::try_from(config).map_err(|e| client_error(&server, e))?;
    Ok((client, server))
}

/// A current-thread runtime for a synchronous caller to drive a client on.
pub fn runtime() -> Result<tokio::runtime::Runtime, BackendError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| BackendError::Api(format!("cannot start the kube client's runtime: {e}")))
}
