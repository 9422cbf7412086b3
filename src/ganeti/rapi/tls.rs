//! Trust for Ganeti's self-signed RAPI certificate. Ganeti 3.0 generates an X.509 v1
//! certificate without subjectAltName, which WebPKI validation (rustls) rejects whatever
//! the name. So the certificate in the CA file is *pinned*: a server presenting exactly that
//! certificate is accepted (the handshake signature still proves it holds its key);
//! anything else must pass normal validation with the file's certificates as roots.

use super::{BackendError, api};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, Error, SignatureScheme};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug)]
struct Pinned {
    pinned: Vec<CertificateDer<'static>>,
    /// Normal validation against the file's certificates, when any can be a root.
    fallback: Option<Arc<dyn ServerCertVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        if self
            .pinned
            .iter()
            .any(|p| p.as_ref() == end_entity.as_ref())
        {
            return Ok(ServerCertVerified::assertion());
        }
        match &self.fallback {
            Some(f) => f.verify_server_cert(end_entity, intermediates, server_name, ocsp, now),
            None => Err(Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            )),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

pub(super) fn pinned_config(
    ca_file: &Path,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Result<rustls::ClientConfig, BackendError> {
    let shown = ca_file.display();
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(ca_file)
        .map_err(|e| {
            api(format!(
                "cannot read the RAPI certificate file {shown}: {e}"
            ))
        })?
        .collect::<Result<_, _>>()
        .map_err(|e| api(format!("{shown} is not a PEM certificate file: {e}")))?;
    if certs.is_empty() {
        return Err(api(format!(
            "{shown} holds no certificate: give Ganeti's rapi.pem (its certificate part) or a CA"
        )));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    // Ganeti's v1 certificate cannot be a WebPKI root; it is still pinned.
    let _ = roots.add_parsable_certificates(certs.iter().cloned());
    let fallback: Option<Arc<dyn ServerCertVerifier>> = if roots.is_empty() {
        None
    } else {
        Some(
            rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots),
                provider.clone(),
            )
            .build()
            .map_err(|e| api(format!("{shown}: cannot build a verifier: {e}")))?,
        )
    };
    let verifier = Pinned {
        pinned: certs,
        fallback,
        provider: provider.clone(),
    };
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .map_err(|e| api(format!("TLS setup: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

/// TLS 1.2 is preferred for Ganeti's RAPI, for speed. Its Python server sends TLS 1.3's
/// session tickets after the handshake and leaves Nagle's algorithm on, so its answer waits
/// until the client acknowledges them, which Linux delays by 40 ms: every TLS 1.3 request to
/// the RAPI took at least 50 ms, and the same over TLS 1.2 about 18 ms (docs/ganeti-bench.md).
/// rustls's TLS 1.2 has only forward-secret AEAD suites. A server that refuses 1.2 gets 1.3.
pub(super) fn tls_versions(tls13: bool) -> &'static [&'static rustls::SupportedProtocolVersion] {
    static TLS12_ONLY: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
    if tls13 {
        rustls::DEFAULT_VERSIONS
    } else {
        &TLS12_ONLY
    }
}
