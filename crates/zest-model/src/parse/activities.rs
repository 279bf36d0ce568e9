//! Activities that hold others or call out: ad-hoc and embedded sub-processes, call activities,
//! business rule tasks, multi-instance.

use super::*;

impl<'c, 't, 'a, 'input> ProcessBuilder<'c, 't, 'a, 'input> {
    /// `zeebe:adHoc`, `bpmn:completionCondition` and `cancelRemainingInstances` of an ad-hoc
    /// sub-process. Its activities and the `adHocSubProcessElements` variable are worked out
    /// once the sequence flows are known (`resolve_ad_hoc`).
    pub(super) fn ad_hoc(&mut self, id: &str, node: Node, ext: &[Node]) -> Option<AdHoc> {
        let mut active_elements_collection = None;
        let mut output_collection = None;
        let mut output_element = None;
        if let Some(&ad_hoc) = ext.first() {
            if let Some(text) = non_empty_attr(ad_hoc, "activeElementsCollection") {
                active_elements_collection = Some(self.ctx.expression(
                    id,
                    ad_hoc,
                    "Attribute 'activeElementsCollection'",
                    text,
                )?);
            }
            output_collection =
                non_empty_attr(ad_hoc, "outputCollection").map(|v| v.trim().to_string());
            if let Some(text) = non_empty_attr(ad_hoc, "outputElement") {
                output_element =
                    Some(
                        self.ctx
                            .expression(id, ad_hoc, "Attribute 'outputElement'", text)?,
                    );
            }
            self.output_pair(
                id,
                ad_hoc,
                output_collection.is_some(),
                output_element.is_some(),
            );
        }
        if ext.len() > 1 {
            self.ctx.problem(
                Some(id),
                ext[1],
                "Must have at most one 'zeebe:adHoc' extension element",
            );
        }
        let completion_condition = self.completion_condition(id, node)?;
        if has_zeebe_extension(node, "taskDefinition") {
            // with a job worker implementation, the job's result decides (Zeebe's rules)
            if completion_condition.is_some() {
                self.ctx.problem(
                    Some(id),
                    node,
                    "Must not define completionCondition in combination with zeebe:taskDefinition.",
                );
            }
            if active_elements_collection.is_some() {
                self.ctx.problem(
                    Some(id),
                    node,
                    "Must not define activeElementsCollection in combination with zeebe:taskDefinition.",
                );
            }
        }
        let cancel_remaining_instances = node
            .attribute("cancelRemainingInstances")
            .is_none_or(|v| v.trim() != "false");
        Some(AdHoc {
            active_elements_collection,
            completion_condition,
            cancel_remaining_instances,
            output_collection,
            output_element,
            inner: Process::ROOT,
            activities: Vec::new(),
            elements_variable: serde_json::Value::Array(Vec::new()),
        })
    }

    /// `outputCollection` and `outputElement` (of a multi-instance loop or `zeebe:adHoc`) come
    /// together or not at all.
    pub(super) fn output_pair(&mut self, id: &str, node: Node, collection: bool, element: bool) {
        let missing = match (collection, element) {
            (true, false) => "Attribute 'outputElement' must be present if the attribute 'outputCollection' is set",
            (false, true) => "Attribute 'outputCollection' must be present if the attribute 'outputElement' is set",
            _ => return,
        };
        self.ctx.problem(Some(id), node, missing);
    }

    /// The `bpmn:completionCondition` child of `node` (a multi-instance loop or an ad-hoc
    /// sub-process): a FEEL expression. `None` when it is invalid (a problem is reported).
    pub(super) fn completion_condition(
        &mut self,
        id: &str,
        node: Node,
    ) -> Option<Option<Expression>> {
        let Some(c) =
            children_in(node, BPMN_NS).find(|c| c.tag_name().name() == "completionCondition")
        else {
            return Some(None);
        };
        let text = text_of(c);
        let text = text.trim();
        if text.is_empty() {
            Some(None)
        } else if !text.starts_with('=') {
            self.ctx.problem(
                Some(id),
                c,
                format!("The completion condition must be a FEEL expression (starting with '='), but was '{text}'"),
            );
            None
        } else {
            Some(Some(self.ctx.expression(
                id,
                c,
                "The completion condition",
                text,
            )?))
        }
    }

    /// Per ad-hoc sub-process: checks what it contains, and lists the activities it can
    /// activate with the metadata of the `adHocSubProcessElements` variable.
    pub(super) fn resolve_ad_hoc(&mut self) {
        for ah in 1..self.elements.len() {
            let Some(inner) = self.elements[ah].ad_hoc.as_ref().map(|a| a.inner) else {
                continue;
            };
            let (ah_id, ah_node) = (self.elements[ah].id.clone(), self.nodes[ah]);
            let children: Vec<ElementIdx> = (1..self.elements.len())
                .filter(|&i| self.elements[i].flow_scope == Some(inner))
                .collect();
            if children.is_empty() {
                self.ctx
                    .problem(Some(&ah_id), ah_node, "Must have at least one activity.");
            }
            let has =
                |t: BpmnElementType| children.iter().any(|&i| self.elements[i].element_type == t);
            if has(BpmnElementType::StartEvent) {
                self.ctx
                    .problem(Some(&ah_id), ah_node, "Must not contain a start event.");
            }
            if has(BpmnElementType::EndEvent) {
                self.ctx
                    .problem(Some(&ah_id), ah_node, "Must not contain an end event.");
            }
            let activities: Vec<ElementIdx> = children
                .iter()
                .copied()
                .filter(|&i| {
                    let e = &self.elements[i];
                    e.incoming.is_empty()
                        && !matches!(
                            e.element_type,
                            BpmnElementType::StartEvent
                                | BpmnElementType::EndEvent
                                | BpmnElementType::BoundaryEvent
                                | BpmnElementType::EventSubProcess
                        )
                })
                .collect();
            let metadata = activities
                .iter()
                .map(|&i| activity_metadata(&self.elements[i], self.nodes[i]))
                .collect();
            if let Some(ad_hoc) = &mut self.elements[ah].ad_hoc {
                ad_hoc.activities = activities;
                ad_hoc.elements_variable = serde_json::Value::Array(metadata);
            }
        }
    }

    /// Checks that `node` (a `zeebe:<what>`) binds the latest version, the only binding Zest
    /// supports yet.
    pub(super) fn latest_binding(&mut self, id: &str, node: Node, what: &str) {
        let binding = node
            .attribute("bindingType")
            .map(str::trim)
            .unwrap_or("latest");
        if binding != "latest" {
            self.ctx.problem(
                Some(id),
                node,
                format!(
                    "the binding type '{binding}' of 'zeebe:{what}' {UNSUPPORTED}; use 'latest'"
                ),
            );
        }
    }

    /// `zeebe:calledDecision` of a business rule task (Zeebe's rules: exactly one, a decision
    /// id, a result variable, no job definition beside it).
    pub(super) fn called_decision(
        &mut self,
        id: &str,
        owner: Node,
        nodes: &[Node],
    ) -> Option<CalledDecision> {
        if has_zeebe_extension(owner, "taskDefinition") {
            self.ctx.problem(
                Some(id),
                owner,
                "Must have either one 'zeebe:calledDecision' or one 'zeebe:taskDefinition' extension element",
            );
            return None;
        }
        let [called] = nodes else {
            let at = nodes.get(1).copied().unwrap_or(owner);
            self.ctx.problem(
                Some(id),
                at,
                "Must have exactly one 'zeebe:calledDecision' extension element",
            );
            return None;
        };
        let called = *called;
        self.latest_binding(id, called, "calledDecision");
        let decision_id = match non_empty_attr(called, "decisionId") {
            Some(text) => self
                .ctx
                .expression(id, called, "Attribute 'decisionId'", text),
            None => {
                self.ctx.problem(
                    Some(id),
                    called,
                    "Attribute 'decisionId' must be present and not empty",
                );
                None
            }
        };
        let result_variable = match non_empty_attr(called, "resultVariable") {
            Some(v) => Some(v.trim().to_string()),
            None => {
                self.ctx.problem(
                    Some(id),
                    called,
                    "Attribute 'resultVariable' must be present and not empty",
                );
                None
            }
        };
        Some(CalledDecision {
            decision_id: decision_id?,
            result_variable: result_variable?,
        })
    }

    /// `zeebe:calledElement` of a call activity.
    pub(super) fn called_element(
        &mut self,
        id: &str,
        owner: Node,
        nodes: &[Node],
    ) -> Option<CalledElement> {
        let [called] = nodes else {
            let at = nodes.get(1).copied().unwrap_or(owner);
            self.ctx.problem(
                Some(id),
                at,
                "Must have exactly one 'zeebe:calledElement' extension element",
            );
            return None;
        };
        let called = *called;
        self.latest_binding(id, called, "calledElement");
        let flag = |name: &str| called.attribute(name).is_none_or(|v| v.trim() != "false");
        let process_id = match non_empty_attr(called, "processId") {
            Some(text) => self
                .ctx
                .expression(id, called, "Attribute 'processId'", text)?,
            None => {
                self.ctx.problem(
                    Some(id),
                    called,
                    "Attribute 'processId' must be present and not empty",
                );
                return None;
            }
        };
        Some(CalledElement {
            process_id,
            propagate_all_child_variables: flag("propagateAllChildVariables"),
            propagate_all_parent_variables: flag("propagateAllParentVariables"),
        })
    }

    /// `bpmn:multiInstanceLoopCharacteristics` with its `zeebe:loopCharacteristics`, checked
    /// as Zeebe checks them.
    pub(super) fn multi_instance(&mut self, id: &str, node: Node) -> Option<MultiInstance> {
        let sequential = node
            .attribute("isSequential")
            .is_some_and(|v| v.trim() == "true");
        // A `loopCardinality` element (Camunda 7 models, some modeler templates) is ignored, as
        // Zeebe ignores it: the input collection of `zeebe:loopCharacteristics` decides.
        let loops: Vec<Node> = children_in(node, BPMN_NS)
            .filter(|n| n.tag_name().name() == "extensionElements")
            .flat_map(|e| children_in(e, ZEEBE_NS))
            .filter(|c| c.tag_name().name() == "loopCharacteristics")
            .collect();
        let [lc] = loops.as_slice() else {
            let at = loops.get(1).copied().unwrap_or(node);
            self.ctx.problem(
                Some(id),
                at,
                "Must have exactly one 'zeebe:loopCharacteristics' extension element",
            );
            return None;
        };
        let lc = *lc;
        let input_collection = match non_empty_attr(lc, "inputCollection") {
            None => {
                self.ctx.problem(
                    Some(id),
                    lc,
                    "Attribute 'inputCollection' must be present and not empty",
                );
                None
            }
            Some(text) if !text.trim_start().starts_with('=') => {
                self.ctx.problem(
                    Some(id),
                    lc,
                    format!("Attribute 'inputCollection' must be a FEEL expression (starting with '='), but was '{text}'"),
                );
                None
            }
            Some(text) => self
                .ctx
                .expression(id, lc, "Attribute 'inputCollection'", text),
        };
        let input_element = non_empty_attr(lc, "inputElement").map(|v| v.trim().to_string());
        let output_collection =
            non_empty_attr(lc, "outputCollection").map(|v| v.trim().to_string());
        let output_element = match non_empty_attr(lc, "outputElement") {
            Some(text) => {
                let e = self
                    .ctx
                    .expression(id, lc, "Attribute 'outputElement'", text);
                e.as_ref()?;
                e
            }
            None => None,
        };
        self.output_pair(
            id,
            lc,
            output_collection.is_some(),
            output_element.is_some(),
        );
        let completion_condition = self.completion_condition(id, node)?;
        Some(MultiInstance {
            sequential,
            input_collection: input_collection?,
            input_element,
            output_collection,
            output_element,
            completion_condition,
        })
    }

    /// Reads the flow nodes and sequence flows directly inside a process or sub-process.
    pub(super) fn scope_children(&mut self, node: Node<'a, 'input>) {
        for child in node.children().filter(|n| n.is_element()) {
            if child.tag_name().namespace() != Some(BPMN_NS) {
                continue; // foreign extensions
            }
            let name = child.tag_name().name();
            if name == "sequenceFlow" {
                self.sequence_flow(child);
            } else if name == "association" {
                if let (Some(source), Some(target)) = (
                    non_empty_attr(child, "sourceRef"),
                    non_empty_attr(child, "targetRef"),
                ) {
                    self.associations.push((source.trim(), target.trim()));
                }
            } else if FLOW_NODES.contains(&name) {
                self.flow_node(child);
            }
            // Everything else (documentation, laneSet, textAnnotation, association, dataObject,
            // dataObjectReference, dataStoreReference, ioSpecification, property, group, ...)
            // carries no behaviour.
        }
    }
}
