//! The Camunda 8 REST API (v2), as far as Zest serves it: topology, Camunda user tasks
//! (complete, assign, unassign, update, form here; their search and get read history in
//! `user_tasks_history.rs`, and the open tasks of the state here with `--history off`),
//! element instances, and deployed
//! definitions (`definitions`: a process's XML and start form). Commands go to the broker like the gRPC
//! gateway's; queries read the committed state of the partitions. Errors are RFC 9457 problem
//! details with Camunda's wording ("Command 'COMPLETE' rejected with code 'NOT_FOUND': ...").

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Deserializer};
use serde_json::{json, Map, Value};
use zest_broker::reads::{user_task_json, SearchKind};
use zest_broker::{Broker, BrokerError};
use zest_protocol::{Intent, UserTaskRecord};

use crate::commands::{CommandError, Commands};
use call::Keyed;

mod authentication;
mod batch_operations;
mod call;
mod cluster;
mod decisions;
mod decisions_history;
mod definitions;
mod deployments;
mod expression;
mod history;
mod history_deletion;
mod intake;
mod jobs;
mod messages;
mod messages_history;
mod process_instances;
mod resources_history;
mod statistics;
mod usage_metrics;
mod user_tasks_history;
mod users;

/// The REST API's routes, to be served on Camunda's REST port (8080 by default), over the
/// command layer the gRPC gateway shares. Authentication is the middleware
/// [`crate::auth::rest::require`] around the node's whole router (UI included); with
/// authentication off an `Authorization` header is accepted and ignored.
pub fn router(commands: Commands, auth: crate::auth::Auth) -> Router {
    let limit = commands.config().max_message_size;
    let router = Router::new()
        .route(
            "/v2/user-tasks/{userTaskKey}",
            axum::routing::patch(update_user_task),
        )
        .route(
            "/v2/user-tasks/{userTaskKey}/form",
            get(definitions::user_task_form),
        )
        .route(
            "/v2/process-definitions/{key}/xml",
            get(definitions::process_xml),
        )
        .route(
            "/v2/process-definitions/{key}/form",
            get(definitions::start_form),
        )
        .route(
            "/v2/user-tasks/{userTaskKey}/completion",
            post(complete_user_task),
        )
        .route(
            "/v2/user-tasks/{userTaskKey}/assignment",
            post(assign_user_task),
        )
        .route(
            "/v2/user-tasks/{userTaskKey}/assignee",
            axum::routing::delete(unassign_user_task),
        )
        .route(
            "/v2/element-instances/ad-hoc-activities/{adHocSubProcessInstanceKey}/activation",
            post(activate_ad_hoc_activities),
        );
    let router = [
        cluster::routes,
        deployments::routes,
        process_instances::routes,
        jobs::routes,
        messages::routes,
        decisions::routes,
        expression::routes,
        history::routes,
        statistics::routes,
        usage_metrics::routes,
        user_tasks_history::routes,
        decisions_history::routes,
        messages_history::routes,
        resources_history::routes,
        batch_operations::routes,
        history_deletion::routes,
        users::routes,
        authentication::routes,
    ]
    .into_iter()
    .fold(router, |r, routes| routes(r));
    router
        .fallback(not_found)
        // requests up to the gateway's message size (Zeebe's 4 MiB), as over gRPC
        .layer(DefaultBodyLimit::max(limit))
        .with_state(Rest {
            broker: commands.broker().clone(),
            commands,
            auth,
        })
}

pub use intake::guarded;

type Routes = Router<Rest>;

#[derive(Clone)]
struct Rest {
    broker: Arc<Broker>,
    commands: Commands,
    auth: crate::auth::Auth,
}

/// An RFC 9457 problem detail, as Camunda's REST API answers errors.
pub(crate) struct Problem {
    status: StatusCode,
    title: &'static str,
    detail: String,
    instance: String,
}

impl Problem {
    fn new(status: StatusCode, detail: impl Into<String>, uri: &Uri) -> Problem {
        let title = match status {
            StatusCode::BAD_REQUEST => "INVALID_ARGUMENT",
            StatusCode::NOT_FOUND => "NOT_FOUND",
            StatusCode::CONFLICT => "INVALID_STATE",
            StatusCode::TOO_MANY_REQUESTS => "RESOURCE_EXHAUSTED",
            StatusCode::SERVICE_UNAVAILABLE => "UNAVAILABLE",
            StatusCode::PAYLOAD_TOO_LARGE => "PAYLOAD_TOO_LARGE",
            StatusCode::REQUEST_TIMEOUT => "REQUEST_TIMEOUT",
            StatusCode::UNAUTHORIZED => "UNAUTHORIZED",
            StatusCode::FORBIDDEN => "FORBIDDEN",
            _ => "INTERNAL",
        };
        Problem {
            status,
            title,
            detail: detail.into(),
            instance: uri.path().to_string(),
        }
    }

    /// A command's error, with the status and title it maps to.
    fn of(e: CommandError, uri: &Uri) -> Problem {
        let (status, title) = e.http();
        Problem {
            status,
            title,
            detail: e.message(),
            instance: uri.path().to_string(),
        }
    }

    /// A problem with its own title (authentication's UNAUTHORIZED, FORBIDDEN).
    pub(crate) fn titled(
        status: StatusCode,
        title: &'static str,
        detail: impl Into<String>,
        uri: &Uri,
    ) -> Problem {
        Problem {
            status,
            title,
            detail: detail.into(),
            instance: uri.path().to_string(),
        }
    }

    /// A 400 for bad input.
    fn bad(detail: impl Into<String>, uri: &Uri) -> Problem {
        Problem::new(StatusCode::BAD_REQUEST, detail, uri)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let body = json!({
            "type": "about:blank",
            "title": self.title,
            "status": self.status.as_u16(),
            "detail": self.detail,
            "instance": self.instance,
        });
        (
            self.status,
            [("content-type", "application/problem+json")],
            body.to_string(),
        )
            .into_response()
    }
}

/// Turns a command's error into the problem for this request.
trait OrProblem<T> {
    fn or_problem(self, uri: &Uri) -> Result<T, Problem>;
}

impl<T> OrProblem<T> for Result<T, CommandError> {
    fn or_problem(self, uri: &Uri) -> Result<T, Problem> {
        self.map_err(|e| Problem::of(e, uri))
    }
}

/// 204 once a command is done.
fn no_content(r: Result<(), CommandError>, uri: &Uri) -> Result<StatusCode, Problem> {
    r.or_problem(uri).map(|()| StatusCode::NO_CONTENT)
}

async fn not_found(uri: Uri) -> Problem {
    Problem::new(
        StatusCode::NOT_FOUND,
        format!(
            "Expected a REST API v2 endpoint, but '{}' is none that Zest serves",
            uri.path()
        ),
        &uri,
    )
}

/// A key from the path: a positive number.
fn parse_key(text: &str, uri: &Uri) -> Result<i64, Problem> {
    parse_named_key(text, "userTaskKey", uri)
}

/// A key from the path; `name` is the path parameter's name, as error messages say it.
fn parse_named_key(text: &str, name: &str, uri: &Uri) -> Result<i64, Problem> {
    text.parse::<i64>().ok().filter(|k| *k > 0).ok_or_else(|| {
        Problem::new(
            StatusCode::BAD_REQUEST,
            format!("The provided {name} '{text}' is not a valid key"),
            uri,
        )
    })
}

/// Sends a USER_TASK command: 204 once done.
async fn user_task_command(
    rest: &Rest,
    key: i64,
    intent: Intent,
    value: UserTaskRecord,
    uri: &Uri,
) -> Result<StatusCode, Problem> {
    no_content(rest.commands.user_task(key, intent, value).await, uri)
}

fn broker_problem(e: BrokerError, uri: &Uri) -> Problem {
    Problem::of(CommandError::Broker(e), uri)
}

/// A JSON body, or a 400 problem naming the property that is wrong (an empty body is `{}`).
/// A property sent as null counts as not given, as Camunda's clients send what they leave
/// unset (a variables document keeps its nulls: there they are values).
fn body<T: for<'de> Deserialize<'de> + Default>(text: &str, uri: &Uri) -> Result<T, Problem> {
    if text.trim().is_empty() {
        return Ok(T::default());
    }
    let mut value: Value = serde_json::from_str(text).map_err(|e| {
        Problem::bad(
            format!("Expected a valid JSON request body, but it was not: {e}"),
            uri,
        )
    })?;
    drop_nulls(&mut value);
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let detail = if path == "." || path.is_empty() {
            format!("Expected a valid JSON request body, but it was not: {inner}")
        } else {
            format!("Property '{path}' is invalid: {inner}")
        };
        Problem::bad(detail, uri)
    })
}

/// Removes the properties whose value is null, except inside variables documents.
fn drop_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            for (name, x) in m.iter_mut() {
                if name != "variables" {
                    drop_nulls(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

/// A property that must be given, or a 400 naming it.
pub(super) fn required<T>(value: Option<T>, name: &str, uri: &Uri) -> Result<T, Problem> {
    value.ok_or_else(|| Problem::bad(format!("No {name} provided: '{name}' is required"), uri))
}

/// A JSON object property (variables) as its text: empty when missing or null; anything but an
/// object is refused.
pub(crate) fn json_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(String::new()),
        Some(v @ Value::Object(_)) => Ok(v.to_string()),
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected a JSON object, but got {other}"
        ))),
    }
}

/// An int64 property (a duration, a timestamp) as Camunda takes it: a JSON number, or a string
/// of digits as Camunda's Jackson also reads one. The JavaScript SDK (8.8) with strict request
/// validation coerces its int64 fields to BigInt and sends them as strings: `"requestTimeout":
/// "20000"`.
pub(crate) fn int64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
        Some(Value::String(t)) => {
            t.trim().parse().map(Some).map_err(|_| {
                serde::de::Error::custom(format!("expected an integer, but got '{t}'"))
            })
        }
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected an integer, but got {other}"
        ))),
    }
}

/// A key given as Camunda's REST API gives keys, a string of digits (a JSON number too).
fn key_of<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
        Some(Value::String(t)) => t.trim().parse().map(Some).map_err(|_| {
            serde::de::Error::custom(format!(
                "expected a key (a string of digits), but got '{t}'"
            ))
        }),
        Some(other) => Err(serde::de::Error::custom(format!(
            "expected a key (a string of digits), but got {other}"
        ))),
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AdHocActivationRequest {
    elements: Vec<AdHocActivationElement>,
    cancel_remaining_instances: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AdHocActivationElement {
    element_id: String,
    variables: Option<Map<String, Value>>,
}

/// `POST /v2/element-instances/ad-hoc-activities/{adHocSubProcessInstanceKey}/activation`:
/// activates elements of an active ad-hoc sub-process (AD_HOC_SUB_PROCESS_INSTRUCTION).
async fn activate_ad_hoc_activities(
    State(rest): State<Rest>,
    Keyed {
        key,
        body: req,
        uri,
    }: Keyed<AdHocActivationRequest>,
) -> Result<StatusCode, Problem> {
    let bad = |detail: &str| Problem::new(StatusCode::BAD_REQUEST, detail, &uri);
    if req.elements.is_empty() {
        return Err(bad(
            "No elements provided: 'elements' must name at least one element to activate",
        ));
    }
    if req.elements.iter().any(|e| e.element_id.trim().is_empty()) {
        return Err(bad("No elementId provided for an element to activate"));
    }
    let value = zest_protocol::AdHocSubProcessInstructionRecord {
        ad_hoc_sub_process_instance_key: key,
        activate_elements: req
            .elements
            .into_iter()
            .map(|e| zest_protocol::AdHocActivateElement {
                element_id: e.element_id,
                variables: e
                    .variables
                    .filter(|v| !v.is_empty())
                    .map(|v| Value::Object(v).to_string())
                    .unwrap_or_default(),
            })
            .collect(),
        tenant_id: String::new(),
        cancel_remaining_instances: req.cancel_remaining_instances.unwrap_or(false),
        ..Default::default()
    };
    no_content(rest.commands.activate_ad_hoc(key, value).await, &uri)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CompletionRequest {
    variables: Option<Map<String, Value>>,
    action: Option<String>,
}

async fn complete_user_task(
    State(rest): State<Rest>,
    Keyed {
        key,
        body: req,
        uri,
    }: Keyed<CompletionRequest>,
) -> Result<StatusCode, Problem> {
    let value = UserTaskRecord {
        variables: req
            .variables
            .filter(|v| !v.is_empty())
            .map(|v| Value::Object(v).to_string())
            .unwrap_or_default(),
        action: req.action.unwrap_or_default(),
        ..UserTaskRecord::command()
    };
    user_task_command(&rest, key, Intent::Complete, value, &uri).await
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AssignmentRequest {
    assignee: Option<String>,
    allow_override: Option<bool>,
    action: Option<String>,
}

async fn assign_user_task(
    State(rest): State<Rest>,
    Keyed {
        key,
        body: req,
        uri,
    }: Keyed<AssignmentRequest>,
) -> Result<StatusCode, Problem> {
    let Some(assignee) = req.assignee.filter(|a| !a.trim().is_empty()) else {
        return Err(Problem::new(
            StatusCode::BAD_REQUEST,
            "No assignee provided",
            &uri,
        ));
    };
    // allowOverride=false claims: it fails when someone else has the task
    let (intent, default_action) = if req.allow_override == Some(false) {
        (Intent::Claim, "claim")
    } else {
        (Intent::Assign, "assign")
    };
    let value = UserTaskRecord {
        assignee,
        action: req.action.unwrap_or_else(|| default_action.to_string()),
        ..UserTaskRecord::command()
    };
    user_task_command(&rest, key, intent, value, &uri).await
}

async fn unassign_user_task(
    State(rest): State<Rest>,
    Keyed { key, uri, .. }: Keyed<Value>,
) -> Result<StatusCode, Problem> {
    let value = UserTaskRecord {
        action: "unassign".to_string(),
        ..UserTaskRecord::command()
    };
    user_task_command(&rest, key, Intent::Assign, value, &uri).await
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct UpdateRequest {
    changeset: Option<Changeset>,
    action: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Changeset {
    due_date: Option<String>,
    follow_up_date: Option<String>,
    candidate_users: Option<Vec<String>>,
    candidate_groups: Option<Vec<String>>,
    priority: Option<i64>,
}

async fn update_user_task(
    State(rest): State<Rest>,
    Keyed {
        key,
        body: req,
        uri,
    }: Keyed<UpdateRequest>,
) -> Result<StatusCode, Problem> {
    let mut value = UserTaskRecord {
        action: req.action.clone().unwrap_or_default(),
        ..UserTaskRecord::command()
    };
    let changes = req.changeset.unwrap_or_default();
    if let Some(groups) = changes.candidate_groups {
        value.candidate_groups = groups;
        value.changed_attributes.push("candidateGroupsList".into());
    }
    if let Some(users) = changes.candidate_users {
        value.candidate_users = users;
        value.changed_attributes.push("candidateUsersList".into());
    }
    if let Some(d) = changes.due_date {
        value.due_date = d;
        value.changed_attributes.push("dueDate".into());
    }
    if let Some(d) = changes.follow_up_date {
        value.follow_up_date = d;
        value.changed_attributes.push("followUpDate".into());
    }
    if let Some(p) = changes.priority {
        if !(0..=100).contains(&p) {
            return Err(Problem::new(
                StatusCode::BAD_REQUEST,
                format!("The value for priority is '{p}' but must be within the [0,100] range."),
                &uri,
            ));
        }
        value.priority = p as i32;
        value.changed_attributes.push("priority".into());
    }
    if value.changed_attributes.is_empty() && req.action.is_none() {
        return Err(Problem::new(
            StatusCode::BAD_REQUEST,
            "No update data provided. Provide at least an \"action\" or a non-null value for at least one of the changeset attributes \"candidateGroups\", \"candidateUsers\", \"dueDate\", \"followUpDate\", \"priority\".",
            &uri,
        ));
    }
    user_task_command(&rest, key, Intent::Update, value, &uri).await
}

/// `GET /v2/user-tasks/{key}` with `--history off`: an open task of the state.
async fn get_user_task(
    State(rest): State<Rest>,
    Path(key): Path<String>,
    uri: Uri,
) -> Result<Json<Value>, Problem> {
    let key = parse_key(&key, &uri)?;
    rest.broker
        .open_user_task(key)
        .await
        .map_err(|e| broker_problem(e, &uri))?
        .map(|t| Json(user_task_json(&t)))
        .ok_or_else(|| {
            Problem::new(
                StatusCode::NOT_FOUND,
                format!("User task with key '{key}' not found (Zest keeps open user tasks only)"),
                &uri,
            )
        })
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SearchRequest {
    filter: Option<Map<String, Value>>,
    page: Option<PageRequest>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PageRequest {
    limit: Option<usize>,
    from: Option<usize>,
}

/// The filters the search understands: each compares one field of the task's JSON.
const FILTERS: [&str; 10] = [
    "userTaskKey",
    "state",
    "assignee",
    "elementId",
    "elementInstanceKey",
    "processInstanceKey",
    "processDefinitionKey",
    "processDefinitionId",
    "tenantId",
    "priority",
];

/// The filters the element instance search understands.
const ELEMENT_INSTANCE_FILTERS: [&str; 9] = [
    "elementInstanceKey",
    "processInstanceKey",
    "processDefinitionKey",
    "processDefinitionId",
    "elementId",
    "type",
    "state",
    "hasIncident",
    "tenantId",
];

/// `POST /v2/element-instances/search` without history (`--history off`): the active element
/// instances in the partitions' state, filtered by equality on the fields above, by key.
async fn search_active_element_instances(
    rest: &Rest,
    uri: &Uri,
    text: &str,
) -> Result<Json<Value>, Problem> {
    let (filter, page) = search_request(text, uri, "element instance", &ELEMENT_INSTANCE_FILTERS)?;
    search(rest, SearchKind::ElementInstances, &filter, page, uri).await
}

/// A search request's filter and page; a filter field outside `allowed` is a 400 naming the
/// supported ones.
fn search_request(
    text: &str,
    uri: &Uri,
    what: &str,
    allowed: &[&str],
) -> Result<(Map<String, Value>, Option<PageRequest>), Problem> {
    let req: SearchRequest = body(text, uri)?;
    let filter = req.filter.unwrap_or_default();
    if let Some(name) = filter.keys().find(|n| !allowed.contains(&n.as_str())) {
        return Err(Problem::new(
            StatusCode::BAD_REQUEST,
            format!(
                "Expected a supported {what} filter ({}), but got '{name}'",
                allowed.join(", ")
            ),
            uri,
        ));
    }
    Ok((filter, req.page))
}

/// Most results one search page holds (Camunda's page limit).
const MAX_PAGE: u64 = 10_000;

/// One page of search results (`from`, `limit` 100 by default) with the total count, over
/// every partition of the cluster (`Broker::search`).
async fn search(
    rest: &Rest,
    kind: SearchKind,
    filter: &Map<String, Value>,
    page: Option<PageRequest>,
    uri: &Uri,
) -> Result<Json<Value>, Problem> {
    let page = page.unwrap_or_default();
    let limit = page.limit.unwrap_or(100) as u64;
    if limit > MAX_PAGE {
        return Err(Problem::new(
            StatusCode::BAD_REQUEST,
            format!("Expected a page limit of at most {MAX_PAGE}, but got {limit}"),
            uri,
        ));
    }
    let found = rest
        .broker
        .search(kind, filter, page.from.unwrap_or(0) as u64, limit)
        .await
        .map_err(|e| broker_problem(e, uri))?;
    Ok(Json(json!({
        "items": found.items,
        "page": { "totalItems": found.total },
    })))
}

/// `POST /v2/user-tasks/search` with `--history off`: the open tasks of the state.
async fn search_user_tasks(
    State(rest): State<Rest>,
    uri: Uri,
    text: String,
) -> Result<Json<Value>, Problem> {
    let mut allowed = FILTERS.to_vec();
    allowed.extend(["candidateGroup", "candidateUser"]);
    let (filter, page) = search_request(&text, &uri, "user task", &allowed)?;
    search(&rest, SearchKind::UserTasks, &filter, page, &uri).await
}
