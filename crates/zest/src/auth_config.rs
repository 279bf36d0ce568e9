//! Authentication settings of `zest start` (`--auth`, the users to create at start), with
//! Camunda 8.8's names for them where it has names:
//! `CAMUNDA_SECURITY_AUTHENTICATION_METHOD` (`basic`), `..._UNPROTECTEDAPI` (`true`: the API
//! takes anyone), `CAMUNDA_SECURITY_INITIALIZATION_USERS_<n>_USERNAME` / `_PASSWORD` / `_NAME`
//! / `_EMAIL`, and `CAMUNDA_SECURITY_INITIALIZATION_DEFAULTROLES_ADMIN_USERS_<n>`; with
//! `oidc`, `CAMUNDA_SECURITY_AUTHENTICATION_OIDC_ISSUERURI`, `..._AUDIENCES` (comma separated),
//! `..._CLIENTID`, `..._USERNAMECLAIM`, `..._CLIENTIDCLAIM` and `..._PREFERUSERNAMECLAIM`.

use zest_gateway::auth::oidc::OidcConfig;
use zest_gateway::auth::Method;

const OIDC: &str = "CAMUNDA_SECURITY_AUTHENTICATION_OIDC_";

#[derive(clap::Args, Debug, Default)]
pub struct AuthArgs {
    /// How clients authenticate: `none` (default: anyone who reaches a client port may do
    /// anything; only loopback addresses, or --insecure), `basic` (users stored in the
    /// engine: HTTP Basic on gRPC and REST, and the web UI's login) or `oidc` (bearer tokens of
    /// an OpenID Connect issuer, --oidc-issuer-uri). Also
    /// CAMUNDA_SECURITY_AUTHENTICATION_METHOD=basic|oidc
    #[arg(long, env = "ZEST_AUTH")]
    pub auth: Option<String>,
    /// A user to create at start as the first admin, `username:password` (when no admin exists
    /// yet; otherwise left alone). Prefer the environment to the command line
    #[arg(long, env = "ZEST_ADMIN_USER", hide_env_values = true)]
    pub admin_user: Option<String>,
    /// With --auth oidc: the issuer, whose discovery document names its keys; tokens' `iss`
    /// must be it (e.g. http://localhost:18080/realms/camunda). Also
    /// CAMUNDA_SECURITY_AUTHENTICATION_OIDC_ISSUERURI
    #[arg(long)]
    pub oidc_issuer_uri: Option<String>,
    /// With --auth oidc: the accepted token audiences (`aud`), comma separated; default: the
    /// client id (--oidc-client-id) when given, else `aud` is not checked. Also
    /// CAMUNDA_SECURITY_AUTHENTICATION_OIDC_AUDIENCES
    #[arg(long)]
    pub oidc_audiences: Option<String>,
    /// With --auth oidc: Zest's own client id at the issuer (an accepted audience when no
    /// audiences are given). Also CAMUNDA_SECURITY_AUTHENTICATION_OIDC_CLIENTID
    #[arg(long)]
    pub oidc_client_id: Option<String>,
    /// With --auth oidc: the claim naming a user (default `sub`). Also
    /// CAMUNDA_SECURITY_AUTHENTICATION_OIDC_USERNAMECLAIM
    #[arg(long)]
    pub oidc_username_claim: Option<String>,
    /// With --auth oidc: the claim naming a client (e.g. `azp` or `client_id`; default none:
    /// every token is a user's). A token with it is a client's. Also
    /// CAMUNDA_SECURITY_AUTHENTICATION_OIDC_CLIENTIDCLAIM
    #[arg(long)]
    pub oidc_client_id_claim: Option<String>,
    /// With --auth oidc: a token with both claims is a user's, not a client's. Also
    /// CAMUNDA_SECURITY_AUTHENTICATION_OIDC_PREFERUSERNAMECLAIM
    #[arg(long)]
    pub oidc_prefer_username_claim: bool,
}

/// A user `zest start` creates once the cluster is up (an existing one is left as it is).
#[derive(Clone)]
pub struct InitialUser {
    pub username: String,
    pub password: String,
    pub name: String,
    pub email: String,
    pub admin: bool,
}

impl std::fmt::Debug for InitialUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InitialUser({}, admin: {})", self.username, self.admin)
    }
}

/// The method and the users to create, from the flags, the configuration file's `auth` and
/// `admin-user`, and Camunda's environment variables (`env`, read once by the caller).
pub fn resolve(
    args: AuthArgs,
    file_auth: Option<String>,
    file_admin: Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<(Method, Vec<InitialUser>)> {
    let camunda = env("CAMUNDA_SECURITY_AUTHENTICATION_METHOD").filter(|m| {
        let open = env("CAMUNDA_SECURITY_AUTHENTICATION_UNPROTECTEDAPI")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        !open || m.is_empty()
    });
    let oidc = oidc_config(&args, env);
    let method = match args
        .auth
        .or(file_auth)
        .or(camunda)
        .unwrap_or_else(|| "none".into())
        .to_ascii_lowercase()
        .as_str()
    {
        "none" => Method::None,
        "basic" => Method::Basic,
        "oidc" => Method::Oidc(oidc?),
        other => anyhow::bail!("auth = {other}: expected none, basic or oidc"),
    };
    let mut users = camunda_users(env);
    if let Some(admin) = args.admin_user.or(file_admin) {
        let (username, password) = admin.split_once(':').ok_or_else(|| {
            anyhow::anyhow!("admin-user: expected username:password, but it has no ':'")
        })?;
        anyhow::ensure!(
            !username.is_empty() && !password.is_empty(),
            "admin-user: expected username:password, both non-empty"
        );
        users.retain(|u| u.username != username);
        users.insert(
            0,
            InitialUser {
                username: username.into(),
                password: password.into(),
                name: username.into(),
                email: String::new(),
                admin: true,
            },
        );
    }
    anyhow::ensure!(
        users.is_empty() || method == Method::Basic,
        "users to create at start ({}) need --auth basic",
        users
            .iter()
            .map(|u| u.username.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok((method, users))
}

/// The OIDC settings, from the flags or Camunda's environment variables.
fn oidc_config(
    args: &AuthArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<OidcConfig> {
    let var = |name: &str| env(&format!("{OIDC}{name}")).filter(|v| !v.trim().is_empty());
    let issuer_uri = args
        .oidc_issuer_uri
        .clone()
        .or_else(|| var("ISSUERURI"))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "auth = oidc needs the issuer: --oidc-issuer-uri (or {OIDC}ISSUERURI), e.g. http://localhost:18080/realms/camunda"
            )
        })?;
    anyhow::ensure!(
        issuer_uri.starts_with("https://") || issuer_uri.starts_with("http://"),
        "oidc-issuer-uri = {issuer_uri}: expected an http:// or https:// URL"
    );
    let list = |v: String| -> Vec<String> {
        v.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut audiences = args
        .oidc_audiences
        .clone()
        .or_else(|| var("AUDIENCES"))
        .map(list)
        .unwrap_or_default();
    if audiences.is_empty() {
        audiences.extend(args.oidc_client_id.clone().or_else(|| var("CLIENTID")));
    }
    let prefer = args.oidc_prefer_username_claim
        || var("PREFERUSERNAMECLAIM").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    Ok(OidcConfig {
        issuer_uri,
        audiences,
        username_claim: args
            .oidc_username_claim
            .clone()
            .or_else(|| var("USERNAMECLAIM"))
            .unwrap_or_else(|| "sub".into()),
        client_id_claim: args
            .oidc_client_id_claim
            .clone()
            .or_else(|| var("CLIENTIDCLAIM")),
        prefer_username_claim: prefer,
    })
}

/// Camunda's `initialization.users[n]` and `defaultRoles.admin.users[n]` (n from 0, up to the
/// first gap).
fn camunda_users(env: &dyn Fn(&str) -> Option<String>) -> Vec<InitialUser> {
    let admins: Vec<String> = (0..)
        .map_while(|n| {
            env(&format!(
                "CAMUNDA_SECURITY_INITIALIZATION_DEFAULTROLES_ADMIN_USERS_{n}"
            ))
        })
        .collect();
    (0..)
        .map_while(|n| {
            let var = |field: &str| {
                env(&format!(
                    "CAMUNDA_SECURITY_INITIALIZATION_USERS_{n}_{field}"
                ))
            };
            let username = var("USERNAME")?;
            Some(InitialUser {
                admin: admins.contains(&username),
                password: var("PASSWORD").unwrap_or_default(),
                name: var("NAME").unwrap_or_else(|| username.clone()),
                email: var("EMAIL").unwrap_or_default(),
                username,
            })
        })
        .collect()
}

/// Creates the users to create at start: once partition 1 has a leader, each that does not
/// exist yet (the first admin only while no admin exists). Every node of a cluster may be
/// given the same users; the first to create one wins, the others find it. Waits up to
/// `wait` for them (a node says READY once its users can log in), then goes on in the
/// background.
pub async fn create_users(
    commands: zest_gateway::Commands,
    auth: zest_gateway::auth::Auth,
    users: Vec<InitialUser>,
    wait: std::time::Duration,
) {
    if users.is_empty() {
        return;
    }
    let mut task = tokio::spawn(async move {
        for u in users {
            create_user(&commands, &auth, u).await;
        }
    });
    if tokio::time::timeout(wait, &mut task).await.is_err() {
        tracing::info!("the users to create at start wait for partition 1's leader");
    }
}

async fn create_user(
    commands: &zest_gateway::Commands,
    auth: &zest_gateway::auth::Auth,
    u: InitialUser,
) {
    let hash = match auth.hash_password(&u.password).await {
        Ok(h) => h,
        Err(e) => {
            tracing::error!("user {} not created at start: {e}", u.username);
            return;
        }
    };
    let record = zest_protocol::UserRecord {
        user_key: 0,
        username: u.username.clone(),
        name: u.name.clone(),
        email: u.email.clone(),
        password: hash,
    };
    loop {
        match commands.create_user(record.clone(), u.admin).await {
            Ok(_) => {
                tracing::info!(admin = u.admin, "created user {}", u.username);
                return;
            }
            Err(e) if e.is_transient() => {
                tokio::time::sleep(std::time::Duration::from_millis(500)).await
            }
            Err(e) => {
                // it exists, or an admin does: left as it is
                tracing::info!("user {} not created at start: {}", u.username, e.message());
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_method_and_users_come_from_flags_file_or_camundas_names() {
        let none = resolve(AuthArgs::default(), None, None, &env_of(&[])).unwrap();
        assert_eq!(none.0, Method::None);
        let vars = [
            ("CAMUNDA_SECURITY_AUTHENTICATION_METHOD", "BASIC"),
            ("CAMUNDA_SECURITY_INITIALIZATION_USERS_0_USERNAME", "demo"),
            ("CAMUNDA_SECURITY_INITIALIZATION_USERS_0_PASSWORD", "demo"),
            ("CAMUNDA_SECURITY_INITIALIZATION_USERS_1_USERNAME", "lisa"),
            ("CAMUNDA_SECURITY_INITIALIZATION_USERS_1_PASSWORD", "pw"),
            (
                "CAMUNDA_SECURITY_INITIALIZATION_DEFAULTROLES_ADMIN_USERS_0",
                "demo",
            ),
        ];
        let (method, users) = resolve(AuthArgs::default(), None, None, &env_of(&vars)).unwrap();
        assert_eq!(method, Method::Basic);
        let summary: Vec<_> = users
            .iter()
            .map(|u| (u.username.as_str(), u.admin))
            .collect();
        assert_eq!(summary, [("demo", true), ("lisa", false)]);
        // Camunda's unprotected API: the method alone does not protect it
        let open = [
            ("CAMUNDA_SECURITY_AUTHENTICATION_METHOD", "basic"),
            ("CAMUNDA_SECURITY_AUTHENTICATION_UNPROTECTEDAPI", "true"),
        ];
        assert_eq!(
            resolve(AuthArgs::default(), None, None, &env_of(&open))
                .unwrap()
                .0,
            Method::None
        );
        let flags = AuthArgs {
            auth: Some("basic".into()),
            admin_user: Some("root:s3cret".into()),
            ..AuthArgs::default()
        };
        let (_, users) = resolve(flags, None, None, &env_of(&[])).unwrap();
        assert_eq!((users[0].username.as_str(), users[0].admin), ("root", true));
        for bad in ["kerberos", "oidc"] {
            let args = AuthArgs {
                auth: Some(bad.into()),
                ..AuthArgs::default()
            };
            assert!(resolve(args, None, None, &env_of(&[])).is_err(), "{bad}");
        }
        let without = AuthArgs {
            admin_user: Some("a:b".into()),
            ..AuthArgs::default()
        };
        let refused = resolve(without, None, None, &env_of(&[]))
            .unwrap_err()
            .to_string();
        assert!(refused.contains("need --auth basic"), "{refused}");
    }

    #[test]
    fn oidc_takes_camundas_settings_and_needs_an_issuer() {
        let vars = [
            ("CAMUNDA_SECURITY_AUTHENTICATION_METHOD", "oidc"),
            (
                "CAMUNDA_SECURITY_AUTHENTICATION_OIDC_ISSUERURI",
                "http://127.0.0.1:18080/realms/zest",
            ),
            (
                "CAMUNDA_SECURITY_AUTHENTICATION_OIDC_AUDIENCES",
                "zeebe-api, operate",
            ),
            ("CAMUNDA_SECURITY_AUTHENTICATION_OIDC_CLIENTIDCLAIM", "azp"),
        ];
        let (method, _) = resolve(AuthArgs::default(), None, None, &env_of(&vars)).unwrap();
        let Method::Oidc(c) = method else {
            panic!("{method:?}")
        };
        assert_eq!(c.issuer_uri, "http://127.0.0.1:18080/realms/zest");
        assert_eq!(c.audiences, ["zeebe-api", "operate"]);
        assert_eq!(c.username_claim, "sub");
        assert_eq!(c.client_id_claim.as_deref(), Some("azp"));
        assert!(!c.prefer_username_claim);
        // the flags: the client id is the audience when none is given
        let flags = AuthArgs {
            auth: Some("oidc".into()),
            oidc_issuer_uri: Some("https://idp.example/realms/a".into()),
            oidc_client_id: Some("zest".into()),
            oidc_username_claim: Some("preferred_username".into()),
            ..AuthArgs::default()
        };
        let Method::Oidc(c) = resolve(flags, None, None, &env_of(&[])).unwrap().0 else {
            panic!("not oidc")
        };
        assert_eq!(c.audiences, ["zest"]);
        assert_eq!(c.username_claim, "preferred_username");
        let bad = AuthArgs {
            auth: Some("oidc".into()),
            oidc_issuer_uri: Some("idp.example".into()),
            ..AuthArgs::default()
        };
        let why = resolve(bad, None, None, &env_of(&[]))
            .unwrap_err()
            .to_string();
        assert!(why.contains("expected an http:// or https:// URL"), "{why}");
        let users = AuthArgs {
            admin_user: Some("a:b".into()),
            ..AuthArgs::default()
        };
        assert!(resolve(users, None, None, &env_of(&vars)).is_err());
    }
}
