//! TLS settings of `zest start` and `zest gateway` (flags, environment, the `[tls]` table of the
//! configuration file, and Zeebe's and Camunda's variables, all mapping onto the same options),
//! the acceptors of the client ports, and the TLS of Zest's own gRPC clients (a CA file).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use serde::Deserialize;
use zest_cluster::tls::{Acceptor, CertFiles, InternalTls, ALPN_H2, ALPN_HTTP};

/// TLS of the ports: a PEM certificate chain and its PEM private key per port.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct TlsArgs {
    /// PEM certificate chain of the gRPC port: TLS on it (with --grpc-tls-key), and on the REST
    /// port too unless it has its own. Also Zeebe's ZEEBE_BROKER_GATEWAY_SECURITY_* and
    /// ZEEBE_GATEWAY_SECURITY_*, Camunda's CAMUNDA_API_GRPC_SSL_*. Reloaded when it changes
    #[arg(long, env = "ZEST_GRPC_TLS_CERT")]
    pub grpc_tls_cert: Option<PathBuf>,
    /// PEM private key of --grpc-tls-cert (unencrypted)
    #[arg(long, env = "ZEST_GRPC_TLS_KEY")]
    pub grpc_tls_key: Option<PathBuf>,
    /// PEM certificate chain of the REST port (default: the gRPC port's; also Spring's
    /// SERVER_SSL_CERTIFICATE)
    #[arg(long, env = "ZEST_REST_TLS_CERT")]
    pub rest_tls_cert: Option<PathBuf>,
    /// PEM private key of --rest-tls-cert
    #[arg(long, env = "ZEST_REST_TLS_KEY")]
    pub rest_tls_key: Option<PathBuf>,
    /// PEM certificate chain of the management port (default: plaintext, as Zeebe's, for
    /// health probes and metrics scrapers)
    #[arg(long, env = "ZEST_MANAGEMENT_TLS_CERT")]
    pub management_tls_cert: Option<PathBuf>,
    /// PEM private key of --management-tls-cert
    #[arg(long, env = "ZEST_MANAGEMENT_TLS_KEY")]
    pub management_tls_key: Option<PathBuf>,
    /// PEM certificate chain of the internal port: TLS between the nodes and gateways of a
    /// cluster, all of them or none (also Zeebe's ZEEBE_BROKER_NETWORK_SECURITY_* and
    /// ZEEBE_GATEWAY_CLUSTER_SECURITY_*)
    #[arg(long, env = "ZEST_INTERNAL_TLS_CERT")]
    pub internal_tls_cert: Option<PathBuf>,
    /// PEM private key of --internal-tls-cert
    #[arg(long, env = "ZEST_INTERNAL_TLS_KEY")]
    pub internal_tls_key: Option<PathBuf>,
    /// PEM file of the CA the other nodes' certificates are verified against (default: the
    /// chain of --internal-tls-cert, as Zeebe's)
    #[arg(long, env = "ZEST_INTERNAL_TLS_CA")]
    pub internal_tls_ca: Option<PathBuf>,
}

/// The `[tls]` table of the configuration file: the flags' names less `-tls`.
#[derive(Deserialize, Default, Debug, Clone)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TlsFile {
    grpc_cert: Option<PathBuf>,
    grpc_key: Option<PathBuf>,
    rest_cert: Option<PathBuf>,
    rest_key: Option<PathBuf>,
    management_cert: Option<PathBuf>,
    management_key: Option<PathBuf>,
    internal_cert: Option<PathBuf>,
    internal_key: Option<PathBuf>,
    internal_ca: Option<PathBuf>,
}

/// The certificate pair of each client port that has TLS.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TlsPorts {
    pub grpc: Option<CertFiles>,
    pub rest: Option<CertFiles>,
    pub management: Option<CertFiles>,
    /// The internal port's pair and the CA its peers are verified against.
    pub internal: Option<(CertFiles, PathBuf)>,
}

impl TlsPorts {
    /// The internal port's TLS, its files read now.
    pub fn internal(&self) -> anyhow::Result<Option<InternalTls>> {
        self.internal
            .as_ref()
            .map(|(files, ca)| InternalTls::new(files.clone(), ca))
            .transpose()
    }
}

/// A port's pair from its flag (or ZEST_ variable), else from the file; both halves or none.
fn pair(
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    flag: &str,
) -> anyhow::Result<Option<CertFiles>> {
    match (cert, key) {
        (Some(chain), Some(key)) => Ok(Some(CertFiles { chain, key })),
        (None, None) => Ok(None),
        (Some(_), None) => anyhow::bail!("--{flag}-tls-cert is given without --{flag}-tls-key"),
        (None, Some(_)) => anyhow::bail!("--{flag}-tls-key is given without --{flag}-tls-cert"),
    }
}

/// The pair named by Zeebe's or Camunda's variables `<prefix>ENABLED`, `<prefix><cert>` and
/// `<prefix><key>`: taken only when ENABLED is true, as they do.
pub(crate) fn from_env(
    env: &dyn Fn(&str) -> Option<String>,
    prefix: &str,
    cert: &str,
    key: &str,
) -> anyhow::Result<Option<CertFiles>> {
    let enabled = format!("{prefix}ENABLED");
    match env(&enabled)
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("false") | Some("") => return Ok(None),
        Some("true") => {}
        Some(other) => anyhow::bail!("{enabled}={other}: expected true or false"),
    }
    let path = |name: &str| -> anyhow::Result<PathBuf> {
        let var = format!("{prefix}{name}");
        env(&var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .with_context(|| format!("{enabled} is true but {var} is not set"))
    };
    Ok(Some(CertFiles {
        chain: path(cert)?,
        key: path(key)?,
    }))
}

/// The first pair named by `vars` (prefix, chain's name, key's name).
fn first_from_env(
    env: &dyn Fn(&str) -> Option<String>,
    vars: &[(&str, &str, &str)],
) -> anyhow::Result<Option<CertFiles>> {
    for (prefix, cert, key) in vars {
        if let Some(files) = from_env(env, prefix, cert, key)? {
            return Ok(Some(files));
        }
    }
    Ok(None)
}

/// Zeebe's and Camunda's variables for the gRPC port's pair.
const GRPC_VARS: &[(&str, &str, &str)] = &[
    (
        "ZEEBE_BROKER_GATEWAY_SECURITY_",
        "CERTIFICATECHAINPATH",
        "PRIVATEKEYPATH",
    ),
    (
        "ZEEBE_GATEWAY_SECURITY_",
        "CERTIFICATECHAINPATH",
        "PRIVATEKEYPATH",
    ),
    (
        "CAMUNDA_API_GRPC_SSL_",
        "CERTIFICATE",
        "CERTIFICATEPRIVATEKEY",
    ),
];

/// Zeebe's variables for the internal port's pair (a broker's, a standalone gateway's).
const INTERNAL_VARS: &[(&str, &str, &str)] = &[
    (
        "ZEEBE_BROKER_NETWORK_SECURITY_",
        "CERTIFICATECHAINPATH",
        "PRIVATEKEYPATH",
    ),
    (
        "ZEEBE_GATEWAY_CLUSTER_SECURITY_",
        "CERTIFICATECHAINPATH",
        "PRIVATEKEYPATH",
    ),
];

/// Spring Boot's variables for the REST port's pair.
const REST_VARS: &[(&str, &str, &str)] = &[("SERVER_SSL_", "CERTIFICATE", "CERTIFICATEPRIVATEKEY")];

/// A port's pair: its flag (or ZEST_ variable), else the first of `vars`, else the file.
fn port_pair(
    flag: (Option<PathBuf>, Option<PathBuf>),
    env: &dyn Fn(&str) -> Option<String>,
    vars: &[(&str, &str, &str)],
    file: (Option<PathBuf>, Option<PathBuf>),
    name: &str,
) -> anyhow::Result<Option<CertFiles>> {
    if let Some(files) = pair(flag.0, flag.1, name)? {
        return Ok(Some(files));
    }
    if let Some(files) = first_from_env(env, vars)? {
        return Ok(Some(files));
    }
    pair(file.0, file.1, name)
}

/// Each port's pair: flag or ZEST_ variable, then Zeebe's and Camunda's variables, then the
/// configuration file. The REST port takes the gRPC port's pair when it has none of its own
/// (the official clients are given one CA for both); the management port only its own.
pub fn resolve(
    args: TlsArgs,
    file: Option<TlsFile>,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<TlsPorts> {
    let file = file.unwrap_or_default();
    let grpc = port_pair(
        (args.grpc_tls_cert, args.grpc_tls_key),
        env,
        GRPC_VARS,
        (file.grpc_cert, file.grpc_key),
        "grpc",
    )?;
    let rest = port_pair(
        (args.rest_tls_cert, args.rest_tls_key),
        env,
        REST_VARS,
        (file.rest_cert, file.rest_key),
        "rest",
    )?;
    let management = port_pair(
        (args.management_tls_cert, args.management_tls_key),
        env,
        &[],
        (file.management_cert, file.management_key),
        "management",
    )?;
    let internal = port_pair(
        (args.internal_tls_cert, args.internal_tls_key),
        env,
        INTERNAL_VARS,
        (file.internal_cert, file.internal_key),
        "internal",
    )?
    .map(|files| {
        let ca = args
            .internal_tls_ca
            .or(file.internal_ca)
            .unwrap_or_else(|| files.chain.clone());
        (files, ca)
    });
    Ok(TlsPorts {
        rest: rest.or_else(|| grpc.clone()),
        grpc,
        management,
        internal,
    })
}

/// The process's environment, as [`resolve`] reads it.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The acceptors of the client ports; an error, naming the file, when a pair does not load.
pub struct Acceptors {
    pub grpc: Option<Acceptor>,
    pub rest: Option<Acceptor>,
    pub management: Option<Acceptor>,
}

impl Acceptors {
    /// A client has `handshake_timeout` (the intake's client timeout) to finish a handshake.
    pub fn new(ports: &TlsPorts, handshake_timeout: Duration) -> anyhow::Result<Acceptors> {
        let make = |files: &Option<CertFiles>, alpn: &[&[u8]], port: &str| {
            files
                .clone()
                .map(|f| Acceptor::new(f, alpn, handshake_timeout))
                .transpose()
                .with_context(|| format!("TLS of the {port} port"))
        };
        Ok(Acceptors {
            grpc: make(&ports.grpc, ALPN_H2, "gRPC")?,
            rest: make(&ports.rest, ALPN_HTTP, "REST")?,
            management: make(&ports.management, ALPN_HTTP, "management")?,
        })
    }
}

/// A gRPC endpoint of Zest's own clients (the CLI, `zest bench`) at `address` (host:port, or
/// a URL): plaintext, or TLS trusting only the certificates of `ca`. An `https://` address
/// without a CA is refused: it would otherwise go out in plaintext, credentials included.
pub fn endpoint(address: &str, ca: Option<&Path>) -> anyhow::Result<tonic::transport::Endpoint> {
    anyhow::ensure!(
        ca.is_some() || !address.starts_with("https://"),
        "{address}: TLS needs the CA that signed the gateway's certificate (--certPath for the \
         CLI, ZEEBE_CA_CERTIFICATE_PATH, or --cert-path for zest bench); the system's roots are \
         not used"
    );
    let host = address
        .trim_start_matches("http://")
        .trim_start_matches("https://");
    let scheme = if ca.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{host}");
    let endpoint = tonic::transport::Endpoint::from_shared(url.clone())
        .with_context(|| format!("'{address}' is not a gateway address"))?;
    let Some(ca) = ca else {
        return Ok(endpoint);
    };
    let pem = zest_cluster::tls::read_ca(ca)?;
    let config = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(pem));
    endpoint
        .tls_config(config)
        .with_context(|| format!("TLS to {url}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_https_address_without_a_ca_is_refused_not_sent_in_plaintext() {
        let refused = endpoint("https://127.0.0.1:26500", None)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("TLS needs the CA"), "{refused}");
        assert!(endpoint("127.0.0.1:26500", None).is_ok());
        assert!(endpoint("http://127.0.0.1:26500", None).is_ok());
    }

    fn files(chain: &str, key: &str) -> Option<CertFiles> {
        Some(CertFiles {
            chain: chain.into(),
            key: key.into(),
        })
    }

    #[test]
    fn zeebes_and_camundas_variables_name_the_grpc_pair() {
        let resolved = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let env =
                move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
            resolve(TlsArgs::default(), None, &env)
        };
        let zeebe = resolved(&[
            ("ZEEBE_BROKER_GATEWAY_SECURITY_ENABLED", "true"),
            (
                "ZEEBE_BROKER_GATEWAY_SECURITY_CERTIFICATECHAINPATH",
                "c.pem",
            ),
            ("ZEEBE_BROKER_GATEWAY_SECURITY_PRIVATEKEYPATH", "k.pem"),
        ])
        .unwrap();
        assert_eq!(zeebe.grpc, files("c.pem", "k.pem"));
        assert_eq!(zeebe.rest, zeebe.grpc, "REST shares the gRPC pair");
        assert_eq!(zeebe.management, None);
        let camunda = resolved(&[
            ("CAMUNDA_API_GRPC_SSL_ENABLED", "TRUE"),
            ("CAMUNDA_API_GRPC_SSL_CERTIFICATE", "c.pem"),
            ("CAMUNDA_API_GRPC_SSL_CERTIFICATEPRIVATEKEY", "k.pem"),
            ("SERVER_SSL_ENABLED", "true"),
            ("SERVER_SSL_CERTIFICATE", "r.pem"),
            ("SERVER_SSL_CERTIFICATEPRIVATEKEY", "rk.pem"),
        ])
        .unwrap();
        assert_eq!(camunda.grpc, files("c.pem", "k.pem"));
        assert_eq!(camunda.rest, files("r.pem", "rk.pem"));
        let network = resolved(&[
            ("ZEEBE_BROKER_NETWORK_SECURITY_ENABLED", "true"),
            (
                "ZEEBE_BROKER_NETWORK_SECURITY_CERTIFICATECHAINPATH",
                "n.pem",
            ),
            ("ZEEBE_BROKER_NETWORK_SECURITY_PRIVATEKEYPATH", "n.key"),
        ])
        .unwrap();
        // the chain doubles as the CA, as Zeebe's
        let chain = PathBuf::from("n.pem");
        assert_eq!(
            network.internal,
            files("n.pem", "n.key").map(|f| (f, chain))
        );
        assert_eq!(network.grpc, None);
        // paths without ENABLED are ignored, as Zeebe ignores them
        let off = resolved(&[
            ("ZEEBE_GATEWAY_SECURITY_CERTIFICATECHAINPATH", "c.pem"),
            ("ZEEBE_GATEWAY_SECURITY_PRIVATEKEYPATH", "k.pem"),
        ])
        .unwrap();
        assert_eq!(off, TlsPorts::default());
        let missing = resolved(&[("ZEEBE_GATEWAY_SECURITY_ENABLED", "true")])
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("ZEEBE_GATEWAY_SECURITY_CERTIFICATECHAINPATH"),
            "{missing}"
        );
    }

    #[test]
    fn the_configuration_file_names_pairs_in_its_tls_table() {
        let dir = std::env::temp_dir().join(format!("zest-tls-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("zest.toml");
        std::fs::write(
            &file,
            "[tls]\ngrpc-cert = \"g.pem\"\ngrpc-key = \"g.key\"\nmanagement-cert = \"m.pem\"\n\
             management-key = \"m.key\"\n",
        )
        .unwrap();
        let resolved = crate::config::resolve(crate::config::StartArgs {
            config: Some(file.clone()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(resolved.tls.grpc, files("g.pem", "g.key"));
        assert_eq!(resolved.tls.rest, files("g.pem", "g.key"));
        assert_eq!(resolved.tls.management, files("m.pem", "m.key"));
        std::fs::write(&file, "[tls]\ngrpc-certificate = \"g.pem\"\n").unwrap();
        let unknown = crate::config::resolve(crate::config::StartArgs {
            config: Some(file),
            ..Default::default()
        });
        let unknown = format!("{:#}", unknown.err().expect("an unknown key is refused"));
        assert!(unknown.contains("grpc-certificate"), "{unknown}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_flag_wins_and_half_a_pair_is_refused() {
        let none = |_: &str| None;
        let args = TlsArgs {
            grpc_tls_cert: Some("flag.pem".into()),
            grpc_tls_key: Some("flag.key".into()),
            ..TlsArgs::default()
        };
        let file = TlsFile {
            grpc_cert: Some("file.pem".into()),
            grpc_key: Some("file.key".into()),
            management_cert: Some("m.pem".into()),
            management_key: Some("m.key".into()),
            ..TlsFile::default()
        };
        let ports = resolve(args, Some(file), &none).unwrap();
        assert_eq!(ports.grpc, files("flag.pem", "flag.key"));
        assert_eq!(ports.management, files("m.pem", "m.key"));
        let half = TlsArgs {
            rest_tls_cert: Some("r.pem".into()),
            ..TlsArgs::default()
        };
        let refused = resolve(half, None, &none).unwrap_err().to_string();
        assert!(refused.contains("--rest-tls-key"), "{refused}");
    }
}
