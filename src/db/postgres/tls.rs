//! TLS to PostgreSQL with rustls: `sslmode` and `sslrootcert` read out of
//! the URL as libpq reads them (tokio-postgres's own parser knows only
//! `disable|prefer|require`), and a [`MakeTlsConnect`] of our own over
//! tokio-rustls whose certificate check follows the mode:
//!
//! | sslmode       | TLS                          | certificate check                       |
//! |---------------|------------------------------|-----------------------------------------|
//! | `disable`     | never                        | –                                       |
//! | `prefer`      | if the server offers it      | chain, only when `sslrootcert` is given |
//! | `require`     | always                       | chain, only when `sslrootcert` is given |
//! | `verify-ca`   | always                       | chain against `sslrootcert`             |
//! | `verify-full` | always                       | chain, and the host name                |
//!
//! `prefer` is the default, as in libpq. `sslrootcert` is a PEM file of CA
//! certificates, or `system` for the system's trusted roots (then, as in
//! libpq, the mode defaults to `verify-full` and a weaker one is refused).
//! Unlike libpq: a `sslrootcert` that cannot be read is an error in every
//! mode, `verify-ca|verify-full` without one is an error (libpq would look
//! for `~/.postgresql/root.crt`), and `prefer` whose check fails is an
//! error rather than a silent retry in plain text.

use crate::db::error::DbError;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Result<SslMode, DbError> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            // libpq's `allow` tries plain text first: never TLS where the
            // server also takes plain text; not offered.
            other => {
                return Err(DbError::Invalid(format!(
                    "database.url: sslmode={other:?} is not one of \
                     disable, prefer, require, verify-ca, verify-full"
                )))
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// `sslrootcert`: where the CA certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RootCert {
    None,
    File(PathBuf),
    System,
}

impl RootCert {
    /// Where the certificates came from, for messages.
    fn describe(&self) -> String {
        match self {
            RootCert::None => "no CA (no sslrootcert)".into(),
            RootCert::File(p) => format!("the CA in {} (sslrootcert)", p.display()),
            RootCert::System => "a CA this system trusts (sslrootcert=system)".into(),
        }
    }
}

/// The TLS part of a database URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    pub(crate) mode: SslMode,
    pub(crate) root: RootCert,
}

/// The parameters of libpq we do not take: client certificates and CRLs.
const UNSUPPORTED: &[&str] = &["sslcert", "sslkey", "sslpassword", "sslcrl", "sslcrldir"];

/// Splits `url` into the URL tokio-postgres parses (without `sslmode` and
/// `sslrootcert`) and its TLS settings; a bad value is refused here, before
/// any connection (no file is read).
pub(crate) fn split_url(url: &str) -> Result<(String, TlsSettings), DbError> {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, q),
        None => (url, ""),
    };
    let (mut mode, mut root) = (None, RootCert::None);
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(std::borrow::Cow::into_owned)
                .map_err(|_| DbError::Invalid(format!("database.url: {key}: not UTF-8")))
        };
        match decode(key)?.as_str() {
            "sslmode" => mode = Some(SslMode::parse(&decode(value)?)?),
            "sslrootcert" => {
                root = match decode(value)?.as_str() {
                    "" => RootCert::None,
                    "system" => RootCert::System,
                    path => RootCert::File(PathBuf::from(path)),
                };
            }
            k if UNSUPPORTED.contains(&k) => {
                return Err(DbError::Invalid(format!(
                    "database.url: {k} is not supported (no client certificates or CRLs; \
                     sslmode and sslrootcert are)"
                )))
            }
            _ => kept.push(pair),
        }
    }
    let mode = match (mode, &root) {
        (None, RootCert::System) => SslMode::VerifyFull,
        (Some(m), RootCert::System) if m != SslMode::VerifyFull && m != SslMode::Disable => {
            return Err(DbError::Invalid(format!(
                "database.url: sslrootcert=system needs sslmode=verify-full (not {}): \
                 any public CA would do for any host",
                m.name()
            )))
        }
        (Some(m @ (SslMode::VerifyCa | SslMode::VerifyFull)), RootCert::None) => {
            return Err(DbError::Invalid(format!(
                "database.url: sslmode={} needs sslrootcert (a PEM file of the CA \
                 certificates, or `system` for the system's trusted roots)",
                m.name()
            )))
        }
        (m, _) => m.unwrap_or(SslMode::Prefer),
    };
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, TlsSettings { mode, root }))
}

/// The tokio-postgres mode of `mode`: the certificate checks are ours.
pub(crate) fn driver_mode(mode: SslMode) -> tokio_postgres::config::SslMode {
    match mode {
        SslMode::Disable => tokio_postgres::config::SslMode::Disable,
        SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
            tokio_postgres::config::SslMode::Require
        }
    }
}

/// The connector every connection uses (the pool's and the node's own
/// session): rustls on aws-lc-rs (the provider reqwest and the S3 client
/// already use), with the certificate check of the settings.
#[derive(Clone)]
pub(crate) struct MakeTls {
    config: Arc<rustls::ClientConfig>,
    settings: Arc<TlsSettings>,
}

impl fmt::Debug for MakeTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MakeTls")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl MakeTls {
    /// Reads the CA certificates of `settings` (a file that cannot be read,
    /// or holds none, is an error) and builds the TLS configuration.
    pub(crate) fn new(settings: TlsSettings) -> Result<MakeTls, DbError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let roots = match &settings.root {
            _ if settings.mode == SslMode::Disable => None,
            RootCert::None => None,
            RootCert::File(path) => Some(Arc::new(file_roots(path)?)),
            RootCert::System => Some(Arc::new(system_roots()?)),
        };
        let verifier = Verifier {
            roots,
            check_name: settings.mode == SslMode::VerifyFull,
            provider: provider.clone(),
        };
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| DbError::Invalid(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        // PostgreSQL 17's direct TLS (sslnegotiation=direct) needs it; older
        // servers ignore it.
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(MakeTls {
            config: Arc::new(config),
            settings: Arc::new(settings),
        })
    }

    /// The settings this connector follows.
    pub(crate) fn settings(&self) -> &TlsSettings {
        &self.settings
    }
}

fn file_roots(path: &std::path::Path) -> Result<RootCertStore, DbError> {
    let bad = |why: String| {
        DbError::Invalid(format!(
            "database.url: sslrootcert {}: {why}",
            path.display()
        ))
    };
    let pem = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| bad(format!("not a PEM certificate file ({e})")))?;
        roots
            .add(cert)
            .map_err(|e| bad(format!("a certificate in it is not usable ({e})")))?;
    }
    if roots.is_empty() {
        return Err(bad("no certificate in it (PEM expected)".into()));
    }
    Ok(roots)
}

fn system_roots() -> Result<RootCertStore, DbError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let why: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
        return Err(DbError::Invalid(format!(
            "database.url: sslrootcert=system: no trusted CA certificate found on this system \
             (install ca-certificates, or set SSL_CERT_FILE){}",
            if why.is_empty() {
                String::new()
            } else {
                format!(": {}", why.join("; "))
            }
        )));
    }
    Ok(roots)
}

/// The server's certificate check: none without roots (`prefer`/`require`
/// without `sslrootcert`; the handshake's signatures are still checked), the
/// chain with them, and the host name too for `verify-full`.
#[derive(Debug)]
struct Verifier {
    roots: Option<Arc<RootCertStore>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(roots) = &self.roots else {
            return Ok(ServerCertVerified::assertion());
        };
        let cert = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &cert,
            roots,
            intermediates,
            now,
            self.provider.signature_verification_algorithms.all,
        )?;
        if self.check_name {
            rustls::client::verify_server_name(&cert, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
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
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
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

impl<S> MakeTlsConnect<S> for MakeTls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = TlsStream<S>;
    type TlsConnect = Connect;
    type Error = HandshakeError;

    fn make_tls_connect(&mut self, host: &str) -> Result<Connect, HandshakeError> {
        let name = ServerName::try_from(host.to_string()).map_err(|_| {
            HandshakeError(format!("TLS: {host:?} is not a host name TLS can check"))
        })?;
        Ok(Connect {
            config: self.config.clone(),
            settings: self.settings.clone(),
            name,
        })
    }
}

/// One connection's handshake.
pub(crate) struct Connect {
    config: Arc<rustls::ClientConfig>,
    settings: Arc<TlsSettings>,
    name: ServerName<'static>,
}

impl<S> TlsConnect<S> for Connect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = TlsStream<S>;
    type Error = HandshakeError;
    type Future = Pin<Box<dyn Future<Output = Result<TlsStream<S>, HandshakeError>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let connector = tokio_rustls::TlsConnector::from(self.config);
            match connector.connect(self.name.clone(), stream).await {
                Ok(s) => Ok(TlsStream(s)),
                Err(e) => Err(HandshakeError::explain(&e, &self.settings, &self.name)),
            }
        })
    }
}

/// Why a TLS handshake failed, in words naming the cause.
#[derive(Debug)]
pub(crate) struct HandshakeError(String);

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HandshakeError {}

impl HandshakeError {
    fn explain(e: &std::io::Error, settings: &TlsSettings, host: &ServerName<'_>) -> Self {
        let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
            return HandshakeError(format!("TLS handshake with the server failed: {e}"));
        };
        let rustls::Error::InvalidCertificate(cert) = tls else {
            return HandshakeError(format!("TLS handshake with the server failed: {tls}"));
        };
        let host = host.to_str();
        HandshakeError(match cert {
            CertificateError::UnknownIssuer => format!(
                "TLS: the server's certificate is not signed by {}",
                settings.root.describe()
            ),
            CertificateError::NotValidForName => format!(
                "TLS: the server's certificate is not valid for the host name {host} \
                 (sslmode=verify-full)"
            ),
            CertificateError::NotValidForNameContext { presented, .. } => format!(
                "TLS: the server's certificate is not valid for the host name {host} \
                 (sslmode=verify-full); it names {}",
                presented
                    .iter()
                    .map(|n| plain_name(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "TLS: the server's certificate has expired".into()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "TLS: the server's certificate is not valid yet (is this host's clock right?)"
                    .into()
            }
            other => format!("TLS: the server's certificate is refused: {other}"),
        })
    }
}

/// A name rustls presents as `DnsName("host")` or `IpAddress(1.2.3.4)`, as
/// it is written.
fn plain_name(presented: &str) -> &str {
    for prefix in ["DnsName(\"", "IpAddress(", "UniformResourceIdentifier(\""] {
        if let Some(inner) = presented.strip_prefix(prefix) {
            return inner.trim_end_matches(')').trim_end_matches('"');
        }
    }
    presented
}

/// Explains a failure to connect with `tls`'s settings: the driver's own
/// "server does not support TLS" in the mode's words, and a server that
/// refuses plain text (`hostssl` only) under `sslmode=disable`. Other
/// failures are returned as they are.
pub(crate) fn explain(e: DbError, tls: &TlsSettings) -> DbError {
    let (DbError::Pool(inner) | DbError::Backend(inner)) = &e else {
        return e;
    };
    let Some(pg) = inner.downcast_ref::<tokio_postgres::Error>() else {
        return e;
    };
    let cause = std::error::Error::source(pg);
    if let Some(ours) = cause.and_then(|c| c.downcast_ref::<HandshakeError>()) {
        return DbError::Pool(ours.0.clone().into());
    }
    if cause.is_some_and(|c| c.to_string() == "server does not support TLS") {
        return DbError::Pool(
            format!(
                "the server does not accept TLS (sslmode={})",
                tls.mode.name()
            )
            .into(),
        );
    }
    if let Some(db) = pg.as_db_error() {
        if tls.mode == SslMode::Disable && db.message().ends_with("no encryption") {
            return DbError::Pool(
                format!(
                    "{}: the server takes this connection only over TLS \
                     (sslmode=disable; use sslmode=verify-full, or require)",
                    db.message()
                )
                .into(),
            );
        }
    }
    e
}

/// A TLS connection to the server, with its channel binding.
pub(crate) struct TlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for TlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for TlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for TlsStream<S> {
    /// `tls-server-end-point` (RFC 5929): the server certificate's hash,
    /// with its signature's hash (SHA-256 for MD5 and SHA-1), so that
    /// SCRAM-SHA-256-PLUS ties the password exchange to this TLS session.
    /// None for a signature whose hash is not one of those (the driver then
    /// uses SCRAM-SHA-256).
    fn channel_binding(&self) -> ChannelBinding {
        let (_, conn) = self.0.get_ref();
        let Some(cert) = conn.peer_certificates().and_then(<[_]>::first) else {
            return ChannelBinding::none();
        };
        end_point_hash(cert).map_or_else(ChannelBinding::none, ChannelBinding::tls_server_end_point)
    }
}

/// The hash of `cert` for `tls-server-end-point`, or None when its
/// signature algorithm is not one of the known RSA or ECDSA ones.
fn end_point_hash(cert: &[u8]) -> Option<Vec<u8>> {
    use sha2::Digest;
    // 1.2.840.113549.1.1.{4,5,11,12,13}: RSA with MD5, SHA-1, SHA-256/384/512;
    // 1.2.840.10045.4.1 and 1.2.840.10045.4.3.{2,3,4}: ECDSA with SHA-1, SHA-256/384/512.
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA_SHA1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01];
    const ECDSA_SHA2: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03];
    let oid = signature_oid(cert)?;
    let bits = match oid.split_last()? {
        (4 | 5 | 11, rest) if rest == RSA => 256,
        (12, rest) if rest == RSA => 384,
        (13, rest) if rest == RSA => 512,
        (2, rest) if rest == ECDSA_SHA2 => 256,
        (3, rest) if rest == ECDSA_SHA2 => 384,
        (4, rest) if rest == ECDSA_SHA2 => 512,
        _ if oid == ECDSA_SHA1 => 256,
        _ => return None,
    };
    Some(match bits {
        256 => sha2::Sha256::digest(cert).to_vec(),
        384 => sha2::Sha384::digest(cert).to_vec(),
        _ => sha2::Sha512::digest(cert).to_vec(),
    })
}

/// The OID of a DER certificate's `signatureAlgorithm`: `Certificate ::=
/// SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm SEQUENCE { OID, … },
/// … }`.
fn signature_oid(cert: &[u8]) -> Option<&[u8]> {
    let (tag, body, _) = der(cert)?;
    if tag != 0x30 {
        return None;
    }
    let (_, _, after_tbs) = der(body)?;
    let (tag, alg, _) = der(after_tbs)?;
    if tag != 0x30 {
        return None;
    }
    let (tag, oid, _) = der(alg)?;
    (tag == 0x06).then_some(oid)
}

/// One DER element: its tag, its contents and what follows it.
fn der(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = b.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &byte| (acc << 8) | usize::from(byte));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(url: &str) -> Result<(String, TlsSettings), String> {
        split_url(url).map_err(|e| e.to_string())
    }

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_the_url() {
        let (url, tls) = split("postgres://u@h/d").unwrap();
        assert_eq!(url, "postgres://u@h/d");
        assert_eq!((tls.mode, tls.root), (SslMode::Prefer, RootCert::None));
        let (url, tls) = split(
            "postgres://u@h/d?application_name=fs&sslmode=verify-full&sslrootcert=%2Fca%20s.pem&connect_timeout=3",
        )
        .unwrap();
        assert_eq!(
            url,
            "postgres://u@h/d?application_name=fs&connect_timeout=3"
        );
        assert_eq!(tls.mode, SslMode::VerifyFull);
        assert_eq!(tls.root, RootCert::File("/ca s.pem".into()));
        for (m, want) in [
            ("disable", SslMode::Disable),
            ("prefer", SslMode::Prefer),
            ("require", SslMode::Require),
        ] {
            let (url, tls) = split(&format!("postgresql://h/d?sslmode={m}")).unwrap();
            assert_eq!((url.as_str(), tls.mode), ("postgresql://h/d", want));
        }
        // `system` means verify-full, as in libpq.
        let (_, tls) = split("postgres://h/d?sslrootcert=system").unwrap();
        assert_eq!(
            (tls.mode, tls.root),
            (SslMode::VerifyFull, RootCert::System)
        );
    }

    #[test]
    fn bad_tls_settings_are_refused_naming_the_fix() {
        let e = split("postgres://h/d?sslmode=verify_full").unwrap_err();
        assert!(e.contains("sslmode=\"verify_full\" is not one of"), "{e}");
        let e = split("postgres://h/d?sslmode=verify-ca").unwrap_err();
        assert!(e.contains("needs sslrootcert"), "{e}");
        let e = split("postgres://h/d?sslmode=require&sslrootcert=system").unwrap_err();
        assert!(e.contains("needs sslmode=verify-full"), "{e}");
        let e = split("postgres://h/d?sslcert=/c.pem").unwrap_err();
        assert!(e.contains("sslcert is not supported"), "{e}");
    }

    #[test]
    fn an_unreadable_or_empty_sslrootcert_is_refused_before_connecting() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let settings = |p: &std::path::Path| TlsSettings {
            mode: SslMode::VerifyFull,
            root: RootCert::File(p.to_path_buf()),
        };
        let e = MakeTls::new(settings(&missing)).unwrap_err().to_string();
        assert!(
            e.contains("sslrootcert") && e.contains("missing.pem"),
            "{e}"
        );
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = MakeTls::new(settings(&empty)).unwrap_err().to_string();
        assert!(e.contains("no certificate in it"), "{e}");
    }

    #[test]
    fn der_elements_and_the_signature_oid_are_read() {
        // SEQUENCE { SEQUENCE {} , SEQUENCE { OID 1.2.840.10045.4.3.3 } , BIT STRING }
        let oid = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
        let mut alg = vec![0x06, 8];
        alg.extend_from_slice(&oid);
        let mut body = vec![0x30, 0x00, 0x30, u8::try_from(alg.len()).unwrap()];
        body.extend_from_slice(&alg);
        body.extend_from_slice(&[0x03, 0x01, 0x00]);
        let mut cert = vec![0x30, 0x81, u8::try_from(body.len()).unwrap()];
        cert.extend_from_slice(&body);
        assert_eq!(signature_oid(&cert), Some(&oid[..]));
        assert_eq!(end_point_hash(&cert).map(|h| h.len()), Some(48), "SHA-384");
        assert_eq!(signature_oid(&cert[..cert.len() - 1]), None, "truncated");
    }

    #[test]
    fn presented_names_are_written_plainly() {
        assert_eq!(plain_name("DnsName(\"localhost\")"), "localhost");
        assert_eq!(plain_name("IpAddress(127.0.0.1)"), "127.0.0.1");
        assert_eq!(plain_name("other"), "other");
    }
}
