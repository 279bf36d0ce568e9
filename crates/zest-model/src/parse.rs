use crate::model::*;
pub fn parse_bpmn(_resource_name: &str, _xml: &[u8]) -> Result<Vec<Process>, ModelError> { todo!() }
