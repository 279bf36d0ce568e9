//! Authentication settings of `zest start` (`--auth`, the users to create at start), with
//! Camunda 8.8's names for them where it has names:
//! `CAMUNDA_SECURITY_AUTHENTICATION_METHOD` (`basic`), `..._UNPROTECTEDAPI` (`true`: the API
//! takes anyone), `CAMUNDA_SECURITY_INITIALIZATION_USERS_<n>_USERNAME` / `_PASSWORD` / `_NAME`
//! / `_EMAIL`, and `CAMUNDA_SECURITY_INITIALIZATION_DEFAULTROLES_ADMIN_USERS_<n>`.

use zest_gateway::auth::Method;

#[derive(clap::Args, Debug, Default)]
pub struct AuthArgs {
    /// How clients authenticate: `none` (default: anyone who reaches a client port may do
    /// anything; only loopback addresses, or --insecure) or `basic` (users stored in the
    /// engine: HTTP Basic on gRPC and REST, and the web UI's login). Also
    /// CAMUNDA_SECURITY_AUTHENTICATION_METHOD=basic
    #[arg(long, env = "ZEST_AUTH")]
    pub auth: Option<String>,
    /// A user to create at start as the first admin, `username:password` (when no admin exists
    /// yet; otherwise left alone). Prefer the environment to the command line
    #[arg(long, env = "ZEST_ADMIN_USER", hide_env_values = true)]
    pub admin_user: Option<String>,
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
        "oidc" => anyhow::bail!(
            "auth = oidc: OpenID Connect is not built yet; use --auth basic (users stored in the engine)"
        ),
        other => anyhow::bail!("auth = {other}: expected none or basic"),
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
        };
        let (_, users) = resolve(flags, None, None, &env_of(&[])).unwrap();
        assert_eq!((users[0].username.as_str(), users[0].admin), ("root", true));
        for bad in ["kerberos", "oidc"] {
            let args = AuthArgs {
                auth: Some(bad.into()),
                admin_user: None,
            };
            assert!(resolve(args, None, None, &env_of(&[])).is_err(), "{bad}");
        }
        let without = AuthArgs {
            auth: None,
            admin_user: Some("a:b".into()),
        };
        let refused = resolve(without, None, None, &env_of(&[]))
            .unwrap_err()
            .to_string();
        assert!(refused.contains("need --auth basic"), "{refused}");
    }
}
