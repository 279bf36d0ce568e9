//! Deployments: processed on partition 1, which distributes them to the others.

use zest_protocol::{
    DeploymentRecord, DeploymentResource, DeploymentResponse, Intent, RecordValue,
};

use super::{CommandError, Commands};

impl Commands {
    /// Deploys `resources` (BPMN, DMN, forms) for `tenant`; answers the deployment's key and
    /// what it deployed.
    pub async fn deploy(
        &self,
        resources: Vec<DeploymentResource>,
        tenant: String,
    ) -> Result<DeploymentResponse, CommandError> {
        if resources.is_empty() {
            return Err(CommandError::Invalid(
                "Expected to deploy at least one resource, but none given".into(),
            ));
        }
        let value = RecordValue::Deployment(DeploymentRecord {
            resources,
            processes_metadata: Vec::new(),
            tenant_id: tenant,
        });
        let event = self.send(1, -1, Intent::Create, value).await?;
        match event.value {
            RecordValue::DeploymentResponse(mut d) => {
                d.deployment_key = event.key;
                Ok(d)
            }
            _ => Err(CommandError::Internal(
                "unexpected answer to a deployment".into(),
            )),
        }
    }
}
