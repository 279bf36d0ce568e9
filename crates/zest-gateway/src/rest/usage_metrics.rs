//! `GET /v2/system/usage-metrics` (Camunda 8.8's getUsageMetrics): root process instances
//! started, decision instances evaluated and distinct assignees of user tasks in
//! `[startTime, endTime)`, of one tenant or all, with each tenant's figures when
//! `withTenants=true`; read from history (`zest_history::usage`) over every partition. A
//! missing or malformed parameter is a 400 naming it; `--history off` gives the 403.

use axum::extract::{Query, State};
use axum::http::Uri;
use axum::routing::get;
use axum::Json;
use serde_json::Value;
use zest_history::usage::Window;

use super::history::history_problem;
use super::{Problem, Rest, Routes};

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/system/usage-metrics", get(usage_metrics))
}

async fn usage_metrics(State(rest): State<Rest>, uri: Uri) -> Result<Json<Value>, Problem> {
    let (window, with_tenants) = request(&uri)?;
    let tally = rest
        .broker
        .history_usage(window)
        .await
        .map_err(|e| history_problem(e, &uri))?;
    Ok(Json(tally.response(with_tenants)))
}

/// The window and `withTenants` of the request's query string.
fn request(uri: &Uri) -> Result<(Window, bool), Problem> {
    let Query(pairs) = Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map_err(|e| Problem::bad(format!("The query string is malformed: {e}"), uri))?;
    let param = |name: &str| {
        pairs
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let time = |name: &str| -> Result<i64, Problem> {
        let text = param(name).ok_or_else(|| Problem::bad(format!("No {name} provided."), uri))?;
        parse_time(text).ok_or_else(|| {
            Problem::bad(
                format!("The provided {name} '{text}' cannot be parsed as an ISO 8601 date-time."),
                uri,
            )
        })
    };
    let (start, end) = (time("startTime")?, time("endTime")?);
    if start > end {
        return Err(Problem::bad(
            "The startTime must not be after the endTime.",
            uri,
        ));
    }
    let tenant = match param("tenantId") {
        None => None,
        Some(t) if valid_tenant(t) => Some(t.to_string()),
        Some(t) => {
            return Err(Problem::bad(
                format!(
                    "The provided tenantId '{t}' is not valid: 1 to 256 characters of \
                     A-Z a-z 0-9 _ @ . + -, or <default>."
                ),
                uri,
            ))
        }
    };
    let with_tenants = match param("withTenants") {
        None | Some("false") => false,
        Some("true") => true,
        Some(v) => {
            return Err(Problem::bad(
                format!("The provided withTenants '{v}' is not a boolean (true or false)."),
                uri,
            ))
        }
    };
    Ok((Window { start, end, tenant }, with_tenants))
}

/// Epoch ms of an ISO 8601 date-time: RFC 3339, or with an offset without its colon
/// (`2025-09-16T12:30:45.123+0000`, as Camunda's documentation writes them).
fn parse_time(text: &str) -> Option<i64> {
    zest_history::filter::parse_date(text).or_else(|| {
        // the last five characters: a sign and four digits (ASCII, so every split below is
        // on a character boundary)
        let (head, offset) = text.split_at_checked(text.len().checked_sub(5)?)?;
        let digits = offset.strip_prefix(['+', '-'])?;
        if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (hours, minutes) = digits.split_at(2);
        let sign = &offset[..1];
        zest_history::filter::parse_date(&format!("{head}{sign}{hours}:{minutes}"))
    })
}

/// The spec's TenantId: `^(<default>|[A-Za-z0-9_@.+-]+)$`, 1 to 256 characters.
fn valid_tenant(t: &str) -> bool {
    t == "<default>"
        || (!t.is_empty()
            && t.len() <= 256
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_@.+-".contains(c)))
}
