//! `POST /v2/expression/evaluation` (Camunda 8.9): a FEEL expression evaluated with the
//! request's variables, as the engine evaluates the expressions of a process (the same
//! `zest_feel`, so the same results, null rules and warnings). A text without the leading `=`
//! is a static value, as in a model: its result is the text itself.
//!
//! Evaluation is CPU work on a blocking thread, at most [`EVALUATIONS`] at once on a node (a
//! parse is bounded by `zest_feel`'s limits, an evaluation by the expression); a request
//! that finds none free is refused with 429 at once.

use std::sync::{Arc, LazyLock};

use axum::http::StatusCode;
use axum::routing::post;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::sync::Semaphore;

use super::call::Call;
use super::{required, Problem, Routes};

/// Evaluations running at once on a node.
const EVALUATIONS: usize = 4;

static PLACES: LazyLock<Arc<Semaphore>> = LazyLock::new(|| Arc::new(Semaphore::new(EVALUATIONS)));

pub(super) fn routes(r: Routes) -> Routes {
    r.route("/v2/expression/evaluation", post(evaluate))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct EvaluationRequest {
    expression: Option<String>,
    /// Names tenant-scoped cluster variables in Camunda; Zest has none, so only the default
    /// tenant's (empty) scope is visible whatever it says.
    #[allow(dead_code)]
    tenant_id: Option<String>,
    variables: Option<Map<String, Value>>,
}

async fn evaluate(Call { body: r, uri }: Call<EvaluationRequest>) -> Result<Json<Value>, Problem> {
    let expression = required(r.expression, "expression", &uri)?;
    let variables = r.variables.unwrap_or_default();
    let Ok(place) = PLACES.clone().try_acquire_owned() else {
        return Err(Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("Expected to evaluate the expression, but {EVALUATIONS} evaluations are running on this node: try again"),
            &uri,
        ));
    };
    let outcome = tokio::task::spawn_blocking(move || {
        let _place = place;
        evaluate_now(&expression, &variables).map(|(result, warnings)| {
            json!({ "expression": expression, "result": result, "warnings": warnings })
        })
    })
    .await
    .map_err(|e| {
        Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("evaluation failed: {e}"),
            &uri,
        )
    })?;
    outcome
        .map(Json)
        .map_err(|detail| Problem::bad(detail, &uri))
}

/// The result and warnings of `text`, or why it cannot be evaluated (a 400's detail).
fn evaluate_now(text: &str, variables: &Map<String, Value>) -> Result<(Value, Value), String> {
    let Some(source) = text.trim_start().strip_prefix('=') else {
        return Ok((Value::String(text.to_string()), json!([])));
    };
    let expression = zest_feel::Expression::parse(source)
        .map_err(|e| format!("Expected a valid FEEL expression, but {e}"))?;
    let result = expression
        .evaluate(variables)
        .map_err(|e| format!("Expected to evaluate the expression, but {e}"))?;
    let warnings: Vec<Value> = expression
        .warnings(variables)
        .into_iter()
        .map(|message| json!({ "message": message }))
        .collect();
    Ok((result, Value::Array(warnings)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn evaluates_with_the_request_variables() {
        let (result, warnings) = evaluate_now("=x + y", &vars(json!({"x": 10, "y": 20}))).unwrap();
        assert_eq!(result, json!(30));
        assert_eq!(warnings, json!([]));
    }

    #[test]
    fn a_missing_variable_is_null_with_a_warning() {
        let (result, warnings) = evaluate_now("=missing + 1", &Map::new()).unwrap();
        assert_eq!(result, Value::Null);
        let text = warnings.to_string();
        assert!(text.contains("missing"), "{text}");
    }

    #[test]
    fn a_static_value_is_its_text() {
        let (result, _) = evaluate_now("hello", &Map::new()).unwrap();
        assert_eq!(result, json!("hello"));
    }

    #[test]
    fn a_bad_expression_says_why() {
        let e = evaluate_now("=1 +* 2", &Map::new()).unwrap_err();
        assert!(e.starts_with("Expected a valid FEEL expression"), "{e}");
    }
}
