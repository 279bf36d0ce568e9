//! Variables: set on an element instance's scope (local) or where they are found up the
//! scopes (propagated).

use zest_protocol::{
    Intent, RecordValue, VariableDocumentRecord, VariableDocumentUpdateSemantic, DEFAULT_TENANT,
};

use super::{variables_document, CommandError, Commands};

impl Commands {
    /// Sets `variables` (a non-empty JSON object text) on the scope of element instance `key`;
    /// answers the command's key.
    pub async fn set_variables(
        &self,
        key: i64,
        variables: String,
        local: bool,
    ) -> Result<i64, CommandError> {
        let variables = variables_document(variables, "variables")?;
        if variables.is_empty() {
            return Err(CommandError::Invalid("Property 'variables' is invalid: Expected a document with at least one variable, but it was empty".into()));
        }
        let value = RecordValue::VariableDocument(VariableDocumentRecord {
            scope_key: key,
            update_semantics: if local {
                VariableDocumentUpdateSemantic::Local
            } else {
                VariableDocumentUpdateSemantic::Propagate
            },
            variables,
            tenant_id: DEFAULT_TENANT.into(),
        });
        let partition = self.route(key, Intent::Update, || {
            format!("Expected to update variables for element with key '{key}', but no such element was found")
        })?;
        let event = self.send(partition, -1, Intent::Update, value).await?;
        Ok(event.key)
    }
}
