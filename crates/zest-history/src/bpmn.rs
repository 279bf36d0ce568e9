//! What history shows of a deployed process that its records do not carry: the process's
//! name and version tag, whether it has a start form, and the names of its elements. Read
//! from the BPMN XML once, when the definition is exported (the engine already validated it).

const ZEEBE: &str = "http://camunda.org/schema/zeebe/1.0";

#[derive(Default, Debug, PartialEq)]
pub struct Described {
    pub name: Option<String>,
    pub version_tag: Option<String>,
    pub has_start_form: bool,
    pub element_names: Vec<(String, String)>,
}

/// The process `process_id` of `xml` (nothing when the XML does not parse or lacks it).
pub fn describe(xml: &str, process_id: &str) -> Described {
    let Ok(doc) = roxmltree::Document::parse(xml) else {
        return Described::default();
    };
    let Some(process) = doc
        .descendants()
        .find(|n| n.tag_name().name() == "process" && n.attribute("id") == Some(process_id))
    else {
        return Described::default();
    };
    let mut out = Described {
        name: process.attribute("name").map(str::to_string),
        ..Default::default()
    };
    for node in process.descendants().filter(|n| n.is_element()) {
        let tag = node.tag_name();
        if tag.namespace() == Some(ZEEBE) && tag.name() == "versionTag" {
            if node.ancestors().nth(2) == Some(process) {
                out.version_tag = node.attribute("value").map(str::to_string);
            }
            continue;
        }
        if tag.namespace() == Some(ZEEBE) && tag.name() == "formDefinition" {
            let start = node
                .ancestors()
                .find(|a| a.tag_name().name() == "startEvent");
            if start.is_some_and(|s| s.parent() == Some(process)) {
                out.has_start_form = true;
            }
            continue;
        }
        if let (Some(id), Some(name)) = (node.attribute("id"), node.attribute("name")) {
            if node != process {
                out.element_names.push((id.to_string(), name.to_string()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_tag_and_start_form() {
        let xml = r#"<?xml version="1.0"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:zeebe="http://camunda.org/schema/zeebe/1.0">
  <bpmn:process id="order" name="Order process" isExecutable="true">
    <bpmn:extensionElements><zeebe:versionTag value="v1.2" /></bpmn:extensionElements>
    <bpmn:startEvent id="start" name="Order received">
      <bpmn:extensionElements><zeebe:formDefinition formId="f" /></bpmn:extensionElements>
    </bpmn:startEvent>
    <bpmn:serviceTask id="pay" name="Pay" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>"#;
        let d = describe(xml, "order");
        assert_eq!(d.name.as_deref(), Some("Order process"));
        assert_eq!(d.version_tag.as_deref(), Some("v1.2"));
        assert!(d.has_start_form);
        assert_eq!(
            d.element_names,
            vec![
                ("start".to_string(), "Order received".to_string()),
                ("pay".to_string(), "Pay".to_string())
            ]
        );
        assert_eq!(describe(xml, "other"), Described::default());
        assert_eq!(describe("<not xml", "order"), Described::default());
    }
}
