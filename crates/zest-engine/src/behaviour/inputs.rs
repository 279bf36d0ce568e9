//! What activating an element evaluates: a called process, user task headers, lists and dates,
//! signal names, correlation keys and timer due dates.

use serde_json::Value;
use zest_model::time::TimeCycle;
use zest_model::{Expression, TimerDefinition};
use zest_protocol::json::type_name;

use crate::behaviour::expressions::evaluate;
use crate::behaviour::expressions::evaluate_string;
use crate::behaviour::expressions::wrong_type;
use crate::context::Ctx;
use crate::keys::tagged_key;
use crate::state::Ks;
use crate::types::LatestVersion;

/// The custom headers Zeebe gives a job-worker user task's job: assignee, candidate groups and
/// users (JSON arrays), due and follow-up dates, form key.
pub(crate) fn user_task_headers(
    ctx: &Ctx<'_, '_, '_>,
    props: &zest_model::UserTaskProps,
    key: i64,
) -> Result<Vec<(String, String)>, String> {
    const PREFIX: &str = "io.camunda.zeebe:";
    let mut out = Vec::new();
    if let Some(e) = &props.assignee {
        let v = evaluate(ctx, e, key)?;
        let s = match v {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Null => String::new(),
            other => {
                return Err(format!(
                    "Expected result of the expression '{}' to be 'STRING', but was '{}'.",
                    e.quoted(),
                    type_name(&other)
                ))
            }
        };
        if !s.is_empty() {
            out.push((format!("{PREFIX}assignee"), s));
        }
    }
    for (expr, name) in [
        (&props.candidate_groups, "candidateGroups"),
        (&props.candidate_users, "candidateUsers"),
    ] {
        let Some(e) = expr else { continue };
        let list = string_list(ctx, e, key)?;
        let json = Value::Array(list.into_iter().map(Value::String).collect()).to_string();
        out.push((format!("{PREFIX}{name}"), json));
    }
    for (expr, name) in [
        (&props.due_date, "dueDate"),
        (&props.follow_up_date, "followUpDate"),
    ] {
        let Some(e) = expr else { continue };
        if let Some(formatted) = date_time(ctx, e, key)? {
            out.push((format!("{PREFIX}{name}"), formatted));
        }
    }
    if let Some(form_key) = &props.form_key {
        out.push((format!("{PREFIX}formKey"), form_key.clone()));
    }
    Ok(out)
}

/// A list of strings for candidate groups or users: a static comma-separated list, or FEEL
/// giving a list of strings (or a comma-separated string).
pub(crate) fn string_list(
    ctx: &Ctx<'_, '_, '_>,
    e: &Expression,
    key: i64,
) -> Result<Vec<String>, String> {
    let split = |s: &str| -> Vec<String> {
        s.split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect()
    };
    match e {
        Expression::Static(s) => Ok(split(s)),
        Expression::Feel(_) => match evaluate(ctx, e, key)? {
            Value::Array(items) => items
                .into_iter()
                .map(|i| match i {
                    Value::String(s) => Ok(s),
                    other => Err(format!(
                        "Expected result of the expression '{}' to be 'ARRAY' containing 'STRING' items, but was 'ARRAY' containing at least one non-'STRING' item: {other}.",
                        e.quoted()
                    )),
                })
                .collect(),
            Value::String(s) => Ok(split(&s)),
            other => Err(wrong_type(ctx, key, e, "'ARRAY'", &other)),
        },
    }
}

/// A due or follow-up date, formatted as Zeebe writes it; `None` when the expression gives
/// null or an empty string.
pub(crate) fn date_time(
    ctx: &Ctx<'_, '_, '_>,
    e: &Expression,
    key: i64,
) -> Result<Option<String>, String> {
    let text = match evaluate(ctx, e, key)? {
        Value::String(s) if s.is_empty() => return Ok(None),
        Value::String(s) => s,
        Value::Null => return Ok(None),
        other => {
            return Err(format!(
                "Expected result of the expression '{}' to be 'STRING', but was '{}'.",
                e.quoted(),
                type_name(&other)
            ))
        }
    };
    let millis = zest_model::time::parse_date_time(&text).map_err(|err| {
        format!(
            "Expected result of the expression '{}' to be a valid date-time string, but was '{text}': {err}",
            e.quoted()
        )
    })?;
    Ok(zest_model::time::format_date_time_utc(millis))
}

/// The signal name of a signal event, evaluated in its scope.
pub(crate) fn signal_name(
    ctx: &Ctx<'_, '_, '_>,
    el: &zest_model::Element,
    key: i64,
) -> Result<String, String> {
    let Some(expr) = &el.signal else {
        return Err(format!("signal event '{}' has no signal", el.id));
    };
    evaluate_string(ctx, expr, key)
}

/// A correlation key as Zeebe extracts it: a string as is, a number as its integer digits.
pub(crate) fn correlation_key(
    ctx: &Ctx<'_, '_, '_>,
    expr: &Expression,
    scope: i64,
) -> Result<String, String> {
    let failed = |detail: String| {
        format!(
            "Failed to extract the correlation key for '{}': {detail}",
            expr.source()
        )
    };
    match evaluate(ctx, expr, scope).map_err(failed)? {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(match n.as_i64() {
            Some(i) => i.to_string(),
            None => (n.as_f64().unwrap_or(0.0).trunc() as i64).to_string(),
        }),
        other => Err(failed(format!(
            "The value must be either a string or a number, but was {}.",
            type_name(&other)
        ))),
    }
}

pub(crate) fn timer_due_date(
    ctx: &Ctx<'_, '_, '_>,
    timer: &TimerDefinition,
    scope: i64,
) -> Result<i64, String> {
    match timer {
        TimerDefinition::Duration(e) => {
            let v = evaluate_string(ctx, e, scope)?;
            let d = zest_model::time::parse_iso_duration(&v)
                .map_err(|err| format!("Invalid duration '{v}': {err}"))?;
            let due = d
                .add_to(ctx.now)
                .map_err(|err| format!("Invalid duration '{v}': {err}"))?;
            Ok(due.max(ctx.now))
        }
        TimerDefinition::Date(e) => {
            let v = evaluate_string(ctx, e, scope)?;
            zest_model::time::parse_date_time(&v)
                .map_err(|err| format!("Invalid date-time '{v}': {err}"))
        }
        TimerDefinition::Cycle(e) => {
            let v = evaluate_string(ctx, e, scope)?;
            let invalid = |err: String| format!("Invalid time cycle '{v}': {err}");
            match zest_model::time::parse_time_cycle(&v).map_err(invalid)? {
                TimeCycle::Repeating(cycle) => cycle
                    .interval
                    .add_to(cycle.start.unwrap_or(ctx.now))
                    .map_err(invalid),
                TimeCycle::Cron(cron) => cron.next_after(ctx.now).map_err(invalid),
            }
        }
    }
}

/// The key of the latest version of the form `form_id`, or the FORM_NOT_FOUND incident's
/// message (Zeebe's) when none is deployed.
pub(crate) fn latest_form(ctx: &Ctx<'_, '_, '_>, form_id: &str) -> Result<i64, String> {
    ctx.txn
        .get::<LatestVersion>(Ks::Forms, &tagged_key(b'l', form_id.as_bytes()))
        .map(|l| l.key)
        .ok_or_else(|| format!("Expected to find a form with id '{form_id}', but no form with this id is found, at least a form with this id should be available. To resolve the Incident please deploy a form with the same id"))
}
