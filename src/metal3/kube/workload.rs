//! A workload cluster's client, from the kubeconfig Cluster API keeps in the Secret
//! `<cluster>-kubeconfig` (data key `value`) in the Cluster's namespace.
//!
//! Whoever can write that Secret chooses what the watcher connects to and with what, so the
//! kubeconfig is held to a narrow form: inline certificates and keys only (no file paths, which
//! would make the watcher read its own files), no exec or auth-provider plugins (which would
//! run commands here), TLS verified against its CA, `https` only (its credentials never cross
//! the network in clear). Its contents never reach a log or an error message.

use ::kube::config::{KubeConfigOptions, Kubeconfig};

/// Why a workload cluster's kubeconfig is not used. Never carries the kubeconfig's contents.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KubeconfigError {
    #[error("the Secret has no data key \"value\"")]
    NoValue,
    #[error("its data key \"value\" is not UTF-8 text")]
    NotText,
    #[error("its data key \"value\" is not a kubeconfig (YAML with clusters, users, contexts)")]
    NotKubeconfig,
    #[error("the kubeconfig has no current context to use")]
    NoContext,
    #[error(
        "the kubeconfig skips TLS verification (insecure-skip-tls-verify): refused, the watcher only talks to servers it can verify"
    )]
    Insecure,
    #[error(
        "the kubeconfig's server {0} is not https: refused, its credentials would cross the network in clear"
    )]
    NotHttps(String),
    #[error(
        "the kubeconfig refers to a local file ({0}): refused, a workload kubeconfig must carry its certificates and keys inline"
    )]
    LocalFile(&'static str),
    #[error(
        "the kubeconfig runs a credential plugin ({0}): refused, a Secret must not make the watcher run commands"
    )]
    Plugin(&'static str),
    #[error("the kubeconfig cannot be used: {0}")]
    Unusable(String),
}

/// Reads and checks the Secret's kubeconfig (the text of `data.value`).
pub(super) fn parse(value: Option<&[u8]>) -> Result<Kubeconfig, KubeconfigError> {
    let bytes = value.ok_or(KubeconfigError::NoValue)?;
    let text = std::str::from_utf8(bytes).map_err(|_| KubeconfigError::NotText)?;
    // The parser's error may quote the text, which holds keys: it is not passed on.
    let kc = Kubeconfig::from_yaml(text).map_err(|_| KubeconfigError::NotKubeconfig)?;
    check(&kc)?;
    Ok(kc)
}

fn check(kc: &Kubeconfig) -> Result<(), KubeconfigError> {
    if kc.current_context.as_deref().is_none_or(str::is_empty) {
        return Err(KubeconfigError::NoContext);
    }
    for named in &kc.clusters {
        let Some(c) = &named.cluster else { continue };
        if c.insecure_skip_tls_verify == Some(true) {
            return Err(KubeconfigError::Insecure);
        }
        if c.certificate_authority.is_some() {
            return Err(KubeconfigError::LocalFile("certificate-authority"));
        }
        if let Some(server) = &c.server
            && !server.starts_with("https://")
        {
            return Err(KubeconfigError::NotHttps(server.clone()));
        }
    }
    for named in &kc.auth_infos {
        let Some(a) = &named.auth_info else { continue };
        if a.exec.is_some() {
            return Err(KubeconfigError::Plugin("exec"));
        }
        if a.auth_provider.is_some() {
            return Err(KubeconfigError::Plugin("auth-provider"));
        }
        for (set, field) in [
            (a.client_certificate.is_some(), "client-certificate"),
            (a.client_key.is_some(), "client-key"),
            (a.token_file.is_some(), "tokenFile"),
        ] {
            if set {
                return Err(KubeconfigError::LocalFile(field));
            }
        }
    }
    Ok(())
}

/// The client config of a checked kubeconfig (its current context).
pub(super) async fn config(kc: Kubeconfig) -> Result<::kube::Config, KubeconfigError> {
    let config = ::kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(|e| KubeconfigError::Unusable(redacted(&e)))?;
    if config.accept_invalid_certs {
        return Err(KubeconfigError::Insecure);
    }
    if config.cluster_url.scheme_str() != Some("https") {
        return Err(KubeconfigError::NotHttps(config.cluster_url.to_string()));
    }
    Ok(config)
}

/// The kind of a kubeconfig error, without the details that could quote a key or token.
fn redacted(e: &::kube::config::KubeconfigError) -> String {
    use ::kube::config::KubeconfigError as K;
    match e {
        K::CurrentContextNotSet => "no current context".into(),
        K::LoadContext(name) => format!("context {name:?} not found"),
        K::LoadClusterOfContext(name) => format!("cluster {name:?} of the context not found"),
        K::MissingClusterUrl => "the cluster has no server URL".into(),
        K::ParseClusterUrl(_) => "the server URL is not a URL".into(),
        K::ParseProxyUrl(_) => "the proxy URL is not a URL".into(),
        K::ParseCertificates(_) => "a certificate does not parse".into(),
        K::LoadCertificateAuthority(_) => "the certificate authority does not load".into(),
        K::LoadClientCertificate(_) => "the client certificate does not load".into(),
        K::LoadClientKey(_) => "the client key does not load".into(),
        _ => "it does not load".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "apiVersion: v1
kind: Config
current-context: c
contexts:
- name: c
  context: {cluster: w, user: u}
clusters:
- name: w
  cluster: {server: 'https://10.0.0.1:6443', certificate-authority-data: QUJD}
users:
- name: u
  user: {client-certificate-data: QUJD, client-key-data: QUJD}
";

    #[test]
    fn only_inline_verified_https_kubeconfigs_without_plugins_pass() {
        assert_eq!(parse(Some(GOOD.as_bytes())).err(), None);
        let cases: [(&str, &str, KubeconfigError); 7] = [
            (
                "certificate-authority-data: QUJD",
                "insecure-skip-tls-verify: true",
                KubeconfigError::Insecure,
            ),
            (
                "certificate-authority-data: QUJD",
                "certificate-authority: /etc/shadow",
                KubeconfigError::LocalFile("certificate-authority"),
            ),
            (
                "https://10.0.0.1:6443",
                "http://10.0.0.1:6443",
                KubeconfigError::NotHttps("http://10.0.0.1:6443".into()),
            ),
            (
                "client-key-data: QUJD",
                "client-key: /root/key",
                KubeconfigError::LocalFile("client-key"),
            ),
            (
                "client-key-data: QUJD",
                "exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}",
                KubeconfigError::Plugin("exec"),
            ),
            (
                "client-key-data: QUJD",
                "tokenFile: /var/run/token",
                KubeconfigError::LocalFile("tokenFile"),
            ),
            (
                "current-context: c",
                "current-context: ''",
                KubeconfigError::NoContext,
            ),
        ];
        for (from, to, want) in cases {
            let text = GOOD.replace(from, to);
            assert_ne!(text, GOOD, "{from}");
            assert_eq!(parse(Some(text.as_bytes())).err(), Some(want), "{to}");
        }
        assert_eq!(parse(None).err(), Some(KubeconfigError::NoValue));
        assert_eq!(
            parse(Some(b"token: s3cr3t\n- [")).err(),
            Some(KubeconfigError::NotKubeconfig)
        );
    }

    #[test]
    fn errors_never_quote_the_kubeconfig() {
        let secret = "client-key-data: c2VjcmV0LWtleS1tYXRlcmlhbA==";
        let broken = GOOD.replace("client-key-data: QUJD", secret) + "\n  - ]: [";
        let e = parse(Some(broken.as_bytes())).unwrap_err().to_string();
        assert!(!e.contains("c2VjcmV0"), "{e}");
    }
}
