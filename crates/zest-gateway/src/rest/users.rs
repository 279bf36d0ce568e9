//! Users (Camunda 8.8's identity API): `POST /v2/users`, `GET`, `PUT` and `DELETE
//! /v2/users/{username}`, and `POST /v2/users/search` (from history, like every search). Passwords are hashed here (argon2id, `auth::password`) before the
//! command is written; no answer ever holds a password or its hash.

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::routing::{get, post};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use zest_protocol::UserRecord;

use super::call::Call;
use super::{OrProblem, Problem, Rest, Routes};

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/users", post(create))
        .route("/v2/users/search", post(search))
        .route("/v2/users/{username}", get(read).put(update).delete(delete))
}

/// `UserRequest` (create and setup) and `UserUpdateRequest` (the password optional there).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub(super) struct UserRequest {
    username: Option<String>,
    password: Option<String>,
    name: Option<String>,
    email: Option<String>,
}

/// `UserResult`: what a client sees of a user.
pub(super) fn user_json(u: &UserRecord) -> Value {
    json!({ "username": u.username, "name": u.name, "email": u.email })
}

/// A user to create from a request, its password hashed.
pub(super) async fn new_user(
    rest: &Rest,
    r: UserRequest,
    uri: &Uri,
) -> Result<UserRecord, Problem> {
    let username = super::required(r.username, "username", uri)?;
    let password = super::required(r.password, "password", uri)?;
    let email = r.email.unwrap_or_default();
    check_email(&email, uri)?;
    let hash = rest
        .auth
        .hash_password(&password)
        .await
        .map_err(|e| Problem::bad(e, uri))?;
    Ok(UserRecord {
        user_key: 0,
        username,
        name: r.name.unwrap_or_default(),
        email,
        password: hash,
    })
}

fn check_email(email: &str, uri: &Uri) -> Result<(), Problem> {
    let ok = email.is_empty()
        || email.split_once('@').is_some_and(|(a, d)| {
            !a.is_empty() && !d.is_empty() && !email.contains(char::is_whitespace)
        });
    if ok {
        Ok(())
    } else {
        Err(Problem::bad(
            format!("The provided email '{email}' is not valid."),
            uri,
        ))
    }
}

async fn create(
    State(rest): State<Rest>,
    Call { body, uri }: Call<UserRequest>,
) -> Result<(StatusCode, Json<Value>), Problem> {
    let user = new_user(&rest, body, &uri).await?;
    let created = rest
        .commands
        .create_user(user, false)
        .await
        .or_problem(&uri)?;
    Ok((StatusCode::CREATED, Json(user_json(&created))))
}

async fn search(
    State(rest): State<Rest>,
    uri: Uri,
    super::history::Text(text): super::history::Text,
) -> Result<Json<Value>, Problem> {
    super::history::run_search(&rest, zest_history::Named::Users, &text, None, &uri).await
}

async fn read(
    State(rest): State<Rest>,
    Path(username): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let user = rest
        .broker
        .user(&username)
        .await
        .map_err(|e| Problem::of(e.into(), &uri))?;
    match user {
        Some((u, _)) => Ok(Json(user_json(&u))),
        None => Err(Problem::new(
            StatusCode::NOT_FOUND,
            format!("User with username '{username}' not found"),
            &uri,
        )),
    }
}

async fn update(
    State(rest): State<Rest>,
    Path(username): Path<String>,
    Call { body, uri }: Call<UserRequest>,
) -> Result<Json<Value>, Problem> {
    if body.username.as_ref().is_some_and(|u| *u != username) {
        return Err(Problem::bad(
            "Expected the body's username to be the path's, but they differ (a username cannot change)",
            &uri,
        ));
    }
    let email = body.email.unwrap_or_default();
    check_email(&email, &uri)?;
    let password = match body.password.filter(|p| !p.is_empty()) {
        Some(p) => rest
            .auth
            .hash_password(&p)
            .await
            .map_err(|e| Problem::bad(e, &uri))?,
        None => String::new(),
    };
    let user = UserRecord {
        user_key: 0,
        username,
        name: body.name.unwrap_or_default(),
        email,
        password,
    };
    let updated = rest.commands.update_user(user).await.or_problem(&uri)?;
    Ok(Json(user_json(&updated)))
}

async fn delete(
    State(rest): State<Rest>,
    Path(username): Path<String>,
    uri: Uri,
) -> Result<StatusCode, Problem> {
    super::no_content(rest.commands.delete_user(username).await, &uri)
}
