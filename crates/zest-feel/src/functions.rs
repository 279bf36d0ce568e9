//! Functions that the caller implements in Rust and FEEL calls by name: a DMN model's business
//! knowledge models, which zest-model evaluates with its own boxed expressions. The arguments
//! reach the function as JSON, by parameter name; its JSON result comes back as a FEEL value.

use std::sync::Arc;

use dsntk_feel::closure::Closure;
use dsntk_feel::context::FeelContext;
use dsntk_feel::values::Value as FeelValue;
use dsntk_feel::{FeelScope, FeelType, FunctionBody, Name};
use serde_json::{Map, Value};

use crate::convert::{feel_to_json, json_to_feel};

/// The body of a [`NativeFunction`]: the arguments by parameter name, the result or why it
/// failed (the call is then null, as FEEL's failures are).
pub type NativeBody = Arc<dyn Fn(&Map<String, Value>) -> Result<Value, String> + Send + Sync>;

/// A function with named parameters and a Rust body.
#[derive(Clone)]
pub struct NativeFunction {
    pub params: Vec<String>,
    pub body: NativeBody,
}

impl std::fmt::Debug for NativeFunction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeFunction")
            .field("params", &self.params)
            .finish()
    }
}

impl NativeFunction {
    /// A FEEL function value as a native function: called with JSON arguments (positionally,
    /// in parameter order), its JSON result.
    pub(crate) fn from_feel(value: FeelValue) -> Option<NativeFunction> {
        let FeelValue::FunctionDefinition(params, ..) = &value else {
            return None;
        };
        let params: Vec<String> = params.iter().map(|(n, _)| n.to_string()).collect();
        let arg_names: Vec<Name> = (0..params.len())
            .map(|i| Name::from(format!("zest argument {i}").as_str()))
            .collect();
        let callee = Name::from("zest function");
        let call = dsntk_feel_parser::AstNode::FunctionInvocation(
            Box::new(dsntk_feel_parser::AstNode::Name(callee.clone())),
            Box::new(dsntk_feel_parser::AstNode::PositionalParameters(
                arg_names
                    .iter()
                    .map(|n| dsntk_feel_parser::AstNode::Name(n.clone()))
                    .collect(),
            )),
        );
        let evaluator = Arc::new(dsntk_feel_evaluator::prepare(&call));
        let names = params.clone();
        let body: NativeBody = Arc::new(move |args: &Map<String, Value>| {
            let mut ctx = FeelContext::default();
            ctx.set_entry(&callee, value.clone());
            for (param, name) in names.iter().zip(&arg_names) {
                let arg = args
                    .get(param)
                    .map(json_to_feel)
                    .unwrap_or(FeelValue::Null(None));
                ctx.set_entry(name, arg);
            }
            let result = evaluator(&FeelScope::from(ctx));
            feel_to_json(&result)
                .map_err(|what| format!("the function's result {what} has no JSON form"))
        });
        Some(NativeFunction { params, body })
    }

    /// The function as a FEEL function value (positional and named calls work alike).
    pub(crate) fn feel_value(&self) -> FeelValue {
        let params: Vec<(Name, FeelType)> = self
            .params
            .iter()
            .map(|p| (Name::from(p.as_str()), FeelType::Any))
            .collect();
        let names: Vec<(Name, String)> = self
            .params
            .iter()
            .map(|p| (Name::from(p.as_str()), p.clone()))
            .collect();
        let body = self.body.clone();
        let evaluator: dsntk_feel::Evaluator = Box::new(move |scope: &FeelScope| {
            let mut args = Map::new();
            for (name, text) in &names {
                let value = scope.get_value(name).unwrap_or(FeelValue::Null(None));
                match feel_to_json(&value) {
                    Ok(json) => {
                        args.insert(text.clone(), json);
                    }
                    Err(what) => {
                        return FeelValue::Null(Some(format!(
                            "the argument '{text}' {what} cannot be passed to a business knowledge model"
                        )))
                    }
                }
            }
            match body(&args) {
                Ok(value) => json_to_feel(&value),
                Err(why) => FeelValue::Null(Some(why)),
            }
        });
        FeelValue::FunctionDefinition(
            params,
            FunctionBody::LiteralExpression(Arc::new(evaluator)),
            false,
            Closure::default(),
            FeelContext::default(),
            FeelType::Any,
        )
    }
}
