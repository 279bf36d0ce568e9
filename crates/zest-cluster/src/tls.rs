//! TLS for every port, through rustls (issue 62): the server side of the gRPC, REST,
//! management and internal ports, and the trust a client is given (a CA file).
//!
//! One certificate resolver serves all of them: [`ReloadingCert`] re-reads its PEM pair when
//! either file changes (checked at most every [`RECHECK`]), and keeps the pair it has when the
//! new one does not load (a warning says why), so that a certificate renewed on disk reaches
//! new connections without a restart and a half-written file never takes the port down.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_stream::{Stream, StreamExt};
use tonic::transport::server::Connected;

/// How often, at most, the files of a pair are looked at for a change.
pub const RECHECK: Duration = Duration::from_secs(2);

/// ALPN of a gRPC port: HTTP/2 only (grpc-go refuses a server that names no protocol).
pub const ALPN_H2: &[&[u8]] = &[b"h2"];
/// ALPN of an HTTP port that serves both versions.
pub const ALPN_HTTP: &[&[u8]] = &[b"h2", b"http/1.1"];

/// A PEM certificate chain (the server's certificate first) and its PEM private key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertFiles {
    pub chain: PathBuf,
    pub key: PathBuf,
}

/// The crypto of every TLS connection Zest makes or takes: aws-lc-rs, which the binary already
/// links for its HTTP client (named here, as two providers may be compiled in).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// Reads `files` into a key rustls serves, refusing a key that does not match the chain.
fn load(files: &CertFiles) -> anyhow::Result<CertifiedKey> {
    let chain = CertificateDer::pem_file_iter(&files.chain)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("reading the certificate chain {}", files.chain.display()))?;
    anyhow::ensure!(
        !chain.is_empty(),
        "{} holds no PEM certificate",
        files.chain.display()
    );
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .with_context(|| format!("reading the private key {}", files.key.display()))?;
    CertifiedKey::from_der(chain, key, &provider()).with_context(|| {
        format!(
            "the private key {} does not fit the certificate {}",
            files.key.display(),
            files.chain.display()
        )
    })
}

/// What tells a pair's files apart from their last version: modification time and length.
type Stamp = [(Option<SystemTime>, u64); 2];

fn stamp(files: &CertFiles) -> Stamp {
    let of = |p: &Path| match std::fs::metadata(p) {
        Ok(m) => (m.modified().ok(), m.len()),
        Err(_) => (None, 0),
    };
    [of(&files.chain), of(&files.key)]
}

struct Loaded {
    key: Arc<CertifiedKey>,
    stamp: Stamp,
    checked: Instant,
    /// The files' stamp when they last failed to load: not tried again until they change.
    failed: Option<Stamp>,
}

/// A server certificate read from PEM files and read again when they change.
pub struct ReloadingCert {
    files: CertFiles,
    loaded: Mutex<Loaded>,
}

impl fmt::Debug for ReloadingCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReloadingCert")
            .field("files", &self.files)
            .finish()
    }
}

impl ReloadingCert {
    /// The pair as it is now; an error when it does not load (a node does not start so).
    pub fn new(files: CertFiles) -> anyhow::Result<ReloadingCert> {
        let stamp = stamp(&files);
        let key = Arc::new(load(&files)?);
        Ok(ReloadingCert {
            files,
            loaded: Mutex::new(Loaded {
                key,
                stamp,
                checked: Instant::now(),
                failed: None,
            }),
        })
    }

    /// The key to serve: the files are looked at when the last look is [`RECHECK`] old.
    pub fn current(&self) -> Arc<CertifiedKey> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if loaded.checked.elapsed() >= RECHECK {
            loaded.checked = Instant::now();
            let now = stamp(&self.files);
            if now != loaded.stamp && loaded.failed != Some(now) {
                match load(&self.files) {
                    Ok(key) => {
                        tracing::info!("TLS certificate {} reloaded", self.files.chain.display());
                        loaded.key = Arc::new(key);
                        loaded.stamp = now;
                        loaded.failed = None;
                    }
                    Err(e) => {
                        tracing::warn!("keeping the TLS certificate served until now: {e:#}");
                        loaded.failed = Some(now);
                    }
                }
            }
        }
        loaded.key.clone()
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

/// The server side of a port's TLS: its certificate, its protocols, and how long a client may
/// take over the handshake.
#[derive(Clone)]
pub struct Acceptor {
    acceptor: tokio_rustls::TlsAcceptor,
    handshake_timeout: Duration,
}

impl Acceptor {
    /// TLS 1.2 and 1.3 with `files` (reloaded as they change), offering `alpn`.
    pub fn new(
        files: CertFiles,
        alpn: &[&[u8]],
        handshake_timeout: Duration,
    ) -> anyhow::Result<Acceptor> {
        let resolver = Arc::new(ReloadingCert::new(files)?);
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_cert_resolver(resolver);
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(Acceptor {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            handshake_timeout,
        })
    }

    /// The handshake on `io`, bounded by the handshake timeout. A client that does not speak
    /// TLS (plaintext HTTP or gRPC) fails it here, and its connection is dropped.
    pub async fn accept<IO>(&self, io: IO) -> io::Result<MaybeTls<IO>>
    where
        IO: AsyncRead + AsyncWrite + Unpin,
    {
        match tokio::time::timeout(self.handshake_timeout, self.acceptor.accept(io)).await {
            Ok(Ok(tls)) => Ok(MaybeTls::Tls(Box::new(tls))),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client did not finish the TLS handshake in time",
            )),
        }
    }
}

/// Connections handshaken at once, waiting for the server to take them.
const HANDSHAKEN_QUEUE: usize = 64;

/// The connections of `conns` for tonic, each through `tls`'s handshake when there is one.
/// Handshakes run side by side (a slow client holds up no other); a failed one is logged and
/// its connection dropped. The stream stops taking connections when the server drops it.
pub fn incoming<S, IO>(
    conns: S,
    tls: Option<Acceptor>,
) -> Pin<Box<dyn Stream<Item = io::Result<MaybeTls<IO>>> + Send>>
where
    S: Stream<Item = io::Result<IO>> + Send + 'static,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Some(tls) = tls else {
        return Box::pin(conns.map(|c| c.map(MaybeTls::Plain)));
    };
    let (tx, rx) = tokio::sync::mpsc::channel(HANDSHAKEN_QUEUE);
    tokio::spawn(async move {
        let mut conns = Box::pin(conns);
        loop {
            let conn = tokio::select! {
                conn = conns.next() => conn,
                _ = tx.closed() => return,
            };
            let io = match conn {
                Some(Ok(io)) => io,
                Some(Err(e)) => {
                    tracing::debug!("accepting a connection failed: {e}");
                    continue;
                }
                None => return,
            };
            let (tls, tx) = (tls.clone(), tx.clone());
            tokio::spawn(async move {
                match tls.accept(io).await {
                    Ok(conn) => {
                        let _ = tx.send(Ok(conn)).await;
                    }
                    Err(e) => tracing::debug!("TLS handshake failed: {e}"),
                }
            });
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// What a client trusts of a TLS server: the certificates of a PEM file (a CA, or the
/// server's own chain), and nothing else.
pub fn roots(ca: &Path) -> anyhow::Result<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(ca)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("reading the CA certificates {}", ca.display()))?;
    let (added, _) = roots.add_parsable_certificates(certs);
    anyhow::ensure!(added > 0, "{} holds no usable CA certificate", ca.display());
    Ok(roots)
}

/// The PEM text of a CA file, for clients (tonic's) that take it as text.
pub fn read_ca(ca: &Path) -> anyhow::Result<Vec<u8>> {
    roots(ca)?;
    std::fs::read(ca).with_context(|| format!("reading the CA certificates {}", ca.display()))
}

/// How long a peer may take over the internal port's TLS handshake.
const INTERNAL_HANDSHAKE: Duration = Duration::from_secs(10);

/// TLS of the internal port (Zeebe's `ZEEBE_BROKER_NETWORK_SECURITY_*`): every node serves
/// its pair, and verifies the nodes it calls against a CA (the chain itself when no CA is
/// given, as Zeebe does). The cluster token still travels in every frame, now unreadable on
/// the wire: the certificate proves the machine, the token the cluster.
#[derive(Clone, Debug)]
pub struct InternalTls {
    files: CertFiles,
    client: tonic::transport::ClientTlsConfig,
}

impl InternalTls {
    /// The pair and the CA, both read now: an error names the file that does not load.
    pub fn new(files: CertFiles, ca: &Path) -> anyhow::Result<InternalTls> {
        ReloadingCert::new(files.clone()).context("TLS of the internal port")?;
        let pem = read_ca(ca).context("TLS of the internal port")?;
        let client = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(pem));
        Ok(InternalTls { files, client })
    }

    /// The server side, reloading the pair as it changes.
    pub fn acceptor(&self) -> anyhow::Result<Acceptor> {
        Acceptor::new(self.files.clone(), ALPN_H2, INTERNAL_HANDSHAKE)
            .context("TLS of the internal port")
    }

    /// The client side: the peers' certificates verified against the CA.
    pub fn client(&self) -> tonic::transport::ClientTlsConfig {
        self.client.clone()
    }
}

/// A connection in plaintext or through TLS: one type for both, so a port's server code is
/// the same either way.
pub enum MaybeTls<IO> {
    Plain(IO),
    Tls(Box<tokio_rustls::server::TlsStream<IO>>),
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for MaybeTls<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(io) => Pin::new(io).poll_read(cx, buf),
            MaybeTls::Tls(io) => Pin::new(io).poll_read(cx, buf),
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncWrite for MaybeTls<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            MaybeTls::Plain(io) => Pin::new(io).poll_write(cx, buf),
            MaybeTls::Tls(io) => Pin::new(io).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            MaybeTls::Plain(io) => Pin::new(io).poll_write_vectored(cx, bufs),
            MaybeTls::Tls(io) => Pin::new(io).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            MaybeTls::Plain(io) => io.is_write_vectored(),
            MaybeTls::Tls(io) => io.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(io) => Pin::new(io).poll_flush(cx),
            MaybeTls::Tls(io) => Pin::new(io).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            MaybeTls::Plain(io) => Pin::new(io).poll_shutdown(cx),
            MaybeTls::Tls(io) => Pin::new(io).poll_shutdown(cx),
        }
    }
}

/// The client's address as the plaintext connection has it, so what reads it (the intake's
/// per-client bounds) works the same over TLS.
impl<IO: Connected> Connected for MaybeTls<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> IO::ConnectInfo {
        match self {
            MaybeTls::Plain(io) => io.connect_info(),
            MaybeTls::Tls(io) => io.get_ref().0.connect_info(),
        }
    }
}
