//! Flow elements: which element a BPMN flow node becomes (its kind, type and event), which
//! `zeebe:` extensions each kind reads, and the scopes that sub-processes open.

use super::*;

impl<'c, 't, 'a, 'input> ProcessBuilder<'c, 't, 'a, 'input> {
    /// Adds a flow node of the current scope (and, for a sub-process, its children).
    pub(super) fn flow_node(&mut self, node: Node<'a, 'input>) {
        let kind_name = node.tag_name().name();
        if kind_name == "startEvent" && self.scope == Process::ROOT {
            self.start_event_count += 1;
        }
        let Some(id) = non_empty_attr(node, "id") else {
            self.ctx.problem(
                None,
                node,
                format!("the element '{kind_name}' has no 'id' attribute"),
            );
            return;
        };
        let line = self.ctx.line(node);
        let event_defs: Vec<Node> = children_in(node, BPMN_NS)
            .filter(|n| EVENT_DEFINITIONS.contains(&n.tag_name().name()))
            .collect();
        let Some(mut element) = self.element_of(node, id, kind_name, &event_defs, line) else {
            return;
        };

        element.flow_scope = Some(self.scope);
        let mut ext = self.extensions(id, node, &allowed_extensions(&element));
        if let Some(form) = self.start_form_of(id, &ext.start_forms) {
            if self.scope == Process::ROOT {
                self.start_form = Some(form);
            }
        }
        self.loop_and_compensation(&mut element, node, id);
        self.apply_extensions(&mut element, node, id, &mut ext);
        // Zeebe 8.8 evaluates no input mappings of a none end event (its output mappings see
        // the variables of the flow scope); they are accepted and left out
        if element.kind != ElementKind::NoneEndEvent {
            element.inputs = ext.inputs;
        }
        element.outputs = ext.outputs;
        self.keep_listeners(&mut element, node, ext.listeners);
        let is_sub_process = matches!(element.kind, ElementKind::SubProcess);
        let is_ad_hoc = matches!(element.kind, ElementKind::AdHocSubProcess);
        let idx = self.push(element, node);
        if is_sub_process {
            // its children live in its scope
            let outer = std::mem::replace(&mut self.scope, idx);
            self.scope_children(node);
            self.scope = outer;
        } else if is_ad_hoc {
            // its children live in the scope of its inner instance, an element of its own
            let mut inner = new_element(
                &format!("{id}#innerInstance"),
                node,
                ElementKind::AdHocInnerInstance,
                BpmnElementType::AdHocSubProcessInnerInstance,
                BpmnEventType::Unspecified,
                line,
            );
            inner.name = None;
            inner.flow_scope = Some(idx);
            let inner_idx = self.push(inner, node);
            if let Some(ad_hoc) = &mut self.elements[idx].ad_hoc {
                ad_hoc.inner = inner_idx;
            }
            let outer = std::mem::replace(&mut self.scope, inner_idx);
            self.scope_children(node);
            self.scope = outer;
            // its event sub-processes belong to the sub-process itself, as in Zeebe: their
            // start events listen while it is active, and they run beside its inner instances
            // (only non-interrupting ones: Zeebe refuses the others)
            for esp in inner_idx + 1..self.elements.len() {
                if self.elements[esp].flow_scope != Some(inner_idx)
                    || self.elements[esp].element_type != BpmnElementType::EventSubProcess
                {
                    continue;
                }
                self.elements[esp].flow_scope = Some(idx);
                let interrupting = self.elements[esp + 1..].iter().any(|e| {
                    e.flow_scope == Some(esp)
                        && matches!(e.kind, ElementKind::EventSubProcessStart)
                        && e.interrupting
                });
                if interrupting {
                    let (esp_id, esp_node) = (self.elements[esp].id.clone(), self.nodes[esp]);
                    self.ctx.problem(
                        Some(&esp_id),
                        esp_node,
                        "An interrupting event subprocess is not allowed inside an ad-hoc subprocess",
                    );
                }
            }
        }
    }

    /// The element a flow node becomes, by its tag and event definitions; None (a problem
    /// reported) for what Zest does not run.
    fn element_of(
        &mut self,
        node: Node<'a, 'input>,
        id: &'a str,
        kind_name: &str,
        event_defs: &[Node<'a, 'input>],
        line: u32,
    ) -> Option<Element> {
        match kind_name {
            "startEvent" => self.start_event(node, id, kind_name, event_defs, line),
            "endEvent" | "intermediateThrowEvent" => {
                self.throw_event(node, id, kind_name, event_defs, line)
            }
            "boundaryEvent" => self.boundary_event(node, id, kind_name, event_defs, line),
            "receiveTask" | "intermediateCatchEvent" => {
                self.catch_event(node, id, kind_name, event_defs, line)
            }
            _ => self.activity_or_gateway(node, id, kind_name, line),
        }
    }

    /// Start events: none, message, signal and timer start events of a process, and the start events of event sub-processes.
    fn start_event(
        &mut self,
        node: Node<'a, 'input>,
        id: &'a str,
        kind_name: &str,
        event_defs: &[Node<'a, 'input>],
        line: u32,
    ) -> Option<Element> {
        Some(match kind_name {
            "startEvent"
                if self.elements[self.scope].element_type == BpmnElementType::EventSubProcess =>
            {
                let [def] = event_defs else {
                    let msg = "Start events in event sub-processes must have exactly one event definition: message, timer, signal, error or escalation".to_string();
                    return self.refuse(id, node, msg);
                };
                let event_type = match def.tag_name().name() {
                    "messageEventDefinition" => BpmnEventType::Message,
                    "timerEventDefinition" => BpmnEventType::Timer,
                    "signalEventDefinition" => BpmnEventType::Signal,
                    "errorEventDefinition" => BpmnEventType::Error,
                    "escalationEventDefinition" => BpmnEventType::Escalation,
                    _ => {
                        let msg = unsupported_event(kind_name, std::slice::from_ref(def));
                        return self.refuse(id, node, msg);
                    }
                };
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::EventSubProcessStart,
                    BpmnElementType::StartEvent,
                    event_type,
                    line,
                );
                e.interrupting = node
                    .attribute("isInterrupting")
                    .is_none_or(|v| v.trim() != "false");
                match event_type {
                    BpmnEventType::Message => e.message = self.message_ref(id, *def, true),
                    BpmnEventType::Timer => e.timer = self.timer(id, *def, false),
                    BpmnEventType::Signal => e.signal = self.signal_name(id, *def, false),
                    BpmnEventType::Escalation => {
                        e.escalation_code = self.caught_code(id, *def, CodeKind::Escalation)
                    }
                    _ => {
                        if !e.interrupting {
                            self.ctx.problem(
                                Some(id),
                                node,
                                "An error start event of an event sub-process must be interrupting (isInterrupting=\"true\")",
                            );
                        }
                        e.error_code = self.caught_code(id, *def, CodeKind::Error);
                    }
                }
                e
            }
            "startEvent" if event_defs.is_empty() => new_element(
                id,
                node,
                ElementKind::NoneStartEvent,
                BpmnElementType::StartEvent,
                BpmnEventType::None,
                line,
            ),
            "startEvent" if self.scope != Process::ROOT && !event_defs.is_empty() => {
                let msg = "Start events in sub-processes must be of type none".to_string();
                return self.refuse(id, node, msg);
            }
            "startEvent" if matches!(event_defs, [d] if is_bpmn(*d, "signalEventDefinition")) => {
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::SignalStartEvent,
                    BpmnElementType::StartEvent,
                    BpmnEventType::Signal,
                    line,
                );
                e.signal = self.signal_name(id, event_defs[0], true);
                e
            }
            "startEvent" if matches!(event_defs, [d] if is_bpmn(*d, "timerEventDefinition")) => {
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::TimerStartEvent,
                    BpmnElementType::StartEvent,
                    BpmnEventType::Timer,
                    line,
                );
                e.timer = self
                    .timer(id, event_defs[0], false)
                    .and_then(|t| self.static_start_timer(id, event_defs[0], t));
                e
            }
            "startEvent" if matches!(event_defs, [d] if is_bpmn(*d, "messageEventDefinition")) => {
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::MessageStartEvent,
                    BpmnElementType::StartEvent,
                    BpmnEventType::Message,
                    line,
                );
                e.message = self.message_ref(id, event_defs[0], false);
                e
            }
            "startEvent" | "endEvent" | "intermediateThrowEvent" => {
                let msg = unsupported_event(kind_name, event_defs);
                return self.refuse(id, node, msg);
            }
            _ => unreachable!("start_event is called for its own element kinds"),
        })
    }

    /// End events and intermediate throw events.
    fn throw_event(
        &mut self,
        node: Node<'a, 'input>,
        id: &'a str,
        kind_name: &str,
        event_defs: &[Node<'a, 'input>],
        line: u32,
    ) -> Option<Element> {
        // the element type of a throw event: an end event or an intermediate throw event
        let throw_type = if kind_name == "endEvent" {
            BpmnElementType::EndEvent
        } else {
            BpmnElementType::IntermediateThrowEvent
        };
        Some(match kind_name {
            "endEvent" if event_defs.is_empty() => new_element(
                id,
                node,
                ElementKind::NoneEndEvent,
                BpmnElementType::EndEvent,
                BpmnEventType::None,
                line,
            ),
            "intermediateThrowEvent" if event_defs.is_empty() => new_element(
                id,
                node,
                ElementKind::NoneIntermediateThrowEvent,
                BpmnElementType::IntermediateThrowEvent,
                BpmnEventType::None,
                line,
            ),
            // message throw events publish through a job worker, as in Zeebe
            "endEvent" | "intermediateThrowEvent" if matches!(event_defs, [d] if is_bpmn(*d, "messageEventDefinition")) => {
                new_element(
                    id,
                    node,
                    ElementKind::JobWorkerTask,
                    throw_type,
                    BpmnEventType::Message,
                    line,
                )
            }
            "endEvent" if matches!(event_defs, [d] if is_bpmn(*d, "errorEventDefinition")) => {
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::ErrorEndEvent,
                    BpmnElementType::EndEvent,
                    BpmnEventType::Error,
                    line,
                );
                e.error_code = self.thrown_code(id, event_defs[0], CodeKind::Error);
                e
            }
            "endEvent" | "intermediateThrowEvent" if matches!(event_defs, [d] if is_bpmn(*d, "signalEventDefinition")) =>
            {
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::SignalThrowEvent,
                    throw_type,
                    BpmnEventType::Signal,
                    line,
                );
                e.signal = self.signal_name(id, event_defs[0], false);
                e
            }
            "endEvent" | "intermediateThrowEvent" if matches!(event_defs, [d] if is_bpmn(*d, "escalationEventDefinition")) =>
            {
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::EscalationThrowEvent,
                    throw_type,
                    BpmnEventType::Escalation,
                    line,
                );
                e.escalation_code = self.thrown_code(id, event_defs[0], CodeKind::Escalation);
                e
            }
            "endEvent" | "intermediateThrowEvent" if matches!(event_defs, [d] if is_bpmn(*d, "compensateEventDefinition")) =>
            {
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::CompensationThrowEvent,
                    throw_type,
                    BpmnEventType::Compensation,
                    line,
                );
                e.compensation_activity =
                    non_empty_attr(event_defs[0], "activityRef").map(|r| r.trim().to_string());
                e
            }
            "endEvent" if matches!(event_defs, [d] if is_bpmn(*d, "terminateEventDefinition")) => {
                new_element(
                    id,
                    node,
                    ElementKind::TerminateEndEvent,
                    BpmnElementType::EndEvent,
                    BpmnEventType::Terminate,
                    line,
                )
            }
            "intermediateThrowEvent" if matches!(event_defs, [d] if is_bpmn(*d, "linkEventDefinition")) =>
            {
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::LinkThrowEvent,
                    BpmnElementType::IntermediateThrowEvent,
                    BpmnEventType::Link,
                    line,
                );
                e.link_name = self.link_name(id, event_defs[0]);
                e
            }
            "startEvent" | "endEvent" | "intermediateThrowEvent" => {
                let msg = unsupported_event(kind_name, event_defs);
                return self.refuse(id, node, msg);
            }
            _ => unreachable!("throw_event is called for its own element kinds"),
        })
    }

    /// Boundary events, compensation boundary events included.
    fn boundary_event(
        &mut self,
        node: Node<'a, 'input>,
        id: &'a str,
        kind_name: &str,
        event_defs: &[Node<'a, 'input>],
        line: u32,
    ) -> Option<Element> {
        Some(match kind_name {
            "boundaryEvent" if matches!(event_defs, [d] if is_bpmn(*d, "compensateEventDefinition")) =>
            {
                match non_empty_attr(node, "attachedToRef") {
                    Some(target) => self.attachments.push((self.elements.len(), target.trim())),
                    None => self.ctx.problem(
                        Some(id),
                        node,
                        "Must be attached to an activity (attribute 'attachedToRef')",
                    ),
                }
                new_element(
                    id,
                    node,
                    ElementKind::CompensationBoundary,
                    BpmnElementType::BoundaryEvent,
                    BpmnEventType::Compensation,
                    line,
                )
            }
            "boundaryEvent" => {
                let [def] = event_defs else {
                    let msg = "Must have exactly one event definition".to_string();
                    return self.refuse(id, node, msg);
                };
                let interrupting = node
                    .attribute("cancelActivity")
                    .is_none_or(|v| v.trim() != "false");
                let (event_type, name) = (def.tag_name().name(), kind_name);
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::BoundaryEvent,
                    BpmnElementType::BoundaryEvent,
                    match event_type {
                        "timerEventDefinition" => BpmnEventType::Timer,
                        "messageEventDefinition" => BpmnEventType::Message,
                        "errorEventDefinition" => BpmnEventType::Error,
                        "signalEventDefinition" => BpmnEventType::Signal,
                        "escalationEventDefinition" => BpmnEventType::Escalation,
                        _ => {
                            let msg = unsupported_event(kind_name, std::slice::from_ref(def));
                            return self.refuse(id, node, msg);
                        }
                    },
                    line,
                );
                e.interrupting = interrupting;
                match event_type {
                    "timerEventDefinition" if interrupting && has_time_cycle(*def) => {
                        self.ctx.problem(
                            Some(id),
                            *def,
                            "Interrupting timer event with time cycle is not allowed.",
                        );
                    }
                    "timerEventDefinition" => e.timer = self.timer(id, *def, false),
                    "messageEventDefinition" => e.message = self.message_ref(id, *def, true),
                    "signalEventDefinition" => e.signal = self.signal_name(id, *def, false),
                    "escalationEventDefinition" => {
                        e.escalation_code = self.caught_code(id, *def, CodeKind::Escalation)
                    }
                    _ => {
                        if !interrupting {
                            self.ctx.problem(
                                Some(id),
                                node,
                                format!("An error '{name}' must be interrupting (cancelActivity=\"true\")"),
                            );
                        }
                        e.error_code = self.caught_code(id, *def, CodeKind::Error);
                    }
                }
                match non_empty_attr(node, "attachedToRef") {
                    Some(target) => self.attachments.push((self.elements.len(), target.trim())),
                    None => self.ctx.problem(
                        Some(id),
                        node,
                        "Must be attached to an activity (attribute 'attachedToRef')",
                    ),
                }
                e
            }
            _ => unreachable!("boundary_event is called for its own element kinds"),
        })
    }

    /// Intermediate catch events and receive tasks.
    fn catch_event(
        &mut self,
        node: Node<'a, 'input>,
        id: &'a str,
        kind_name: &str,
        event_defs: &[Node<'a, 'input>],
        line: u32,
    ) -> Option<Element> {
        Some(match kind_name {
            "receiveTask" => {
                let mut e = new_element(
                    id,
                    node,
                    ElementKind::MessageCatch,
                    BpmnElementType::ReceiveTask,
                    BpmnEventType::Message,
                    line,
                );
                e.message = self.message_ref(id, node, true);
                e
            }
            "intermediateCatchEvent" => match event_defs {
                [def] if is_bpmn(*def, "timerEventDefinition") => {
                    let mut e = new_element(
                        id,
                        node,
                        ElementKind::TimerIntermediateCatchEvent,
                        BpmnElementType::IntermediateCatchEvent,
                        BpmnEventType::Timer,
                        line,
                    );
                    e.timer = self.timer(id, *def, true);
                    e
                }
                [def] if is_bpmn(*def, "signalEventDefinition") => {
                    let mut e = new_element(
                        id,
                        node,
                        ElementKind::SignalCatch,
                        BpmnElementType::IntermediateCatchEvent,
                        BpmnEventType::Signal,
                        line,
                    );
                    e.signal = self.signal_name(id, *def, false);
                    e
                }
                [def] if is_bpmn(*def, "linkEventDefinition") => {
                    let mut e = new_element(
                        id,
                        node,
                        ElementKind::LinkCatchEvent,
                        BpmnElementType::IntermediateCatchEvent,
                        BpmnEventType::Link,
                        line,
                    );
                    e.link_name = self.link_name(id, *def);
                    e
                }
                [def] if is_bpmn(*def, "messageEventDefinition") => {
                    let mut e = new_element(
                        id,
                        node,
                        ElementKind::MessageCatch,
                        BpmnElementType::IntermediateCatchEvent,
                        BpmnEventType::Message,
                        line,
                    );
                    e.message = self.message_ref(id, *def, true);
                    e
                }
                [def] => {
                    let msg = unsupported_event(kind_name, std::slice::from_ref(def));
                    return self.refuse(id, node, msg);
                }
                _ => {
                    let msg = "Must have exactly one event definition".to_string();
                    return self.refuse(id, node, msg);
                }
            },
            _ => unreachable!("catch_event is called for its own element kinds"),
        })
    }

    /// Tasks, sub-processes, call activities and gateways.
    fn activity_or_gateway(
        &mut self,
        node: Node<'a, 'input>,
        id: &'a str,
        kind_name: &str,
        line: u32,
    ) -> Option<Element> {
        Some(match kind_name {
            "subProcess"
                if node
                    .attribute("triggeredByEvent")
                    .is_none_or(|v| v.trim() != "true") =>
            {
                new_element(
                    id,
                    node,
                    ElementKind::SubProcess,
                    BpmnElementType::SubProcess,
                    BpmnEventType::Unspecified,
                    line,
                )
            }
            "subProcess" => new_element(
                id,
                node,
                ElementKind::SubProcess,
                BpmnElementType::EventSubProcess,
                BpmnEventType::Unspecified,
                line,
            ),
            "businessRuleTask" if has_zeebe_extension(node, "calledDecision") => new_element(
                id,
                node,
                ElementKind::BusinessRuleTask,
                BpmnElementType::BusinessRuleTask,
                BpmnEventType::Unspecified,
                line,
            ),
            "scriptTask" if has_zeebe_extension(node, "script") => new_element(
                id,
                node,
                ElementKind::ScriptTask,
                BpmnElementType::ScriptTask,
                BpmnEventType::Unspecified,
                line,
            ),
            "serviceTask" | "sendTask" | "scriptTask" | "businessRuleTask" => new_element(
                id,
                node,
                ElementKind::JobWorkerTask,
                match kind_name {
                    "sendTask" => BpmnElementType::SendTask,
                    "scriptTask" => BpmnElementType::ScriptTask,
                    "businessRuleTask" => BpmnElementType::BusinessRuleTask,
                    _ => BpmnElementType::ServiceTask,
                },
                BpmnEventType::Unspecified,
                line,
            ),
            "callActivity" => new_element(
                id,
                node,
                ElementKind::CallActivity,
                BpmnElementType::CallActivity,
                BpmnEventType::Unspecified,
                line,
            ),
            "task" | "manualTask" => new_element(
                id,
                node,
                ElementKind::PassThroughTask,
                if kind_name == "task" {
                    BpmnElementType::Task
                } else {
                    BpmnElementType::ManualTask
                },
                BpmnEventType::Unspecified,
                line,
            ),
            "userTask" if has_zeebe_extension(node, "userTask") => new_element(
                id,
                node,
                ElementKind::UserTask,
                BpmnElementType::UserTask,
                BpmnEventType::Unspecified,
                line,
            ),
            "userTask" => new_element(
                id,
                node,
                ElementKind::JobWorkerTask,
                BpmnElementType::UserTask,
                BpmnEventType::Unspecified,
                line,
            ),
            "eventBasedGateway" => new_element(
                id,
                node,
                ElementKind::EventBasedGateway,
                BpmnElementType::EventBasedGateway,
                BpmnEventType::Unspecified,
                line,
            ),
            "inclusiveGateway" => new_element(
                id,
                node,
                ElementKind::InclusiveGateway,
                BpmnElementType::InclusiveGateway,
                BpmnEventType::Unspecified,
                line,
            ),
            "exclusiveGateway" => new_element(
                id,
                node,
                ElementKind::ExclusiveGateway,
                BpmnElementType::ExclusiveGateway,
                BpmnEventType::Unspecified,
                line,
            ),
            "parallelGateway" => new_element(
                id,
                node,
                ElementKind::ParallelGateway,
                BpmnElementType::ParallelGateway,
                BpmnEventType::Unspecified,
                line,
            ),
            "adHocSubProcess" => new_element(
                id,
                node,
                ElementKind::AdHocSubProcess,
                BpmnElementType::AdHocSubProcess,
                BpmnEventType::Unspecified,
                line,
            ),
            other => {
                let msg = format!("the element kind '{other}' {UNSUPPORTED}");
                return self.refuse(id, node, msg);
            }
        })
    }

    /// A refused flow node: the problem is reported and no element is made.
    fn refuse(&mut self, id: &'a str, node: Node, message: String) -> Option<Element> {
        self.unsupported(id, node, message);
        None
    }

    /// Multi-instance loops of activities, and compensation handlers.
    fn loop_and_compensation(
        &mut self,
        element: &mut Element,
        node: Node<'a, 'input>,
        id: &'a str,
    ) {
        if matches!(
            element.kind,
            ElementKind::JobWorkerTask
                | ElementKind::UserTask
                | ElementKind::PassThroughTask
                | ElementKind::ScriptTask
                | ElementKind::BusinessRuleTask
                | ElementKind::MessageCatch
                | ElementKind::SubProcess
                | ElementKind::AdHocSubProcess
                | ElementKind::CallActivity
        ) {
            for child in children_in(node, BPMN_NS) {
                match child.tag_name().name() {
                    "multiInstanceLoopCharacteristics" => {
                        element.multi_instance = self.multi_instance(id, child);
                    }
                    "standardLoopCharacteristics" => {
                        let msg = format!("loops ('standardLoopCharacteristics') {UNSUPPORTED_PL}; use multi-instance ('multiInstanceLoopCharacteristics')");
                        self.ctx.problem(Some(id), child, msg);
                    }
                    _ => {}
                }
            }
            if node
                .attribute("isForCompensation")
                .is_some_and(|v| v.trim() == "true")
            {
                // a compensation handler: its instances carry the event type COMPENSATION
                element.is_for_compensation = true;
                element.event_type = BpmnEventType::Compensation;
                if element.multi_instance.is_some() {
                    self.ctx.problem(
                        Some(id),
                        node,
                        format!("multi-instance compensation handlers {UNSUPPORTED_PL}"),
                    );
                }
            }
        }
    }

    /// The kind's own extensions: task definitions and headers, user task properties,
    /// scripts, called elements and decisions, ad-hoc sub-processes, task listeners.
    fn apply_extensions(
        &mut self,
        element: &mut Element,
        node: Node<'a, 'input>,
        id: &'a str,
        ext: &mut Extensions<'a, 'input>,
    ) {
        if matches!(element.kind, ElementKind::UserTask) {
            element.task_headers = std::mem::take(&mut ext.headers);
            element.user_task = Some(self.user_task_props(id, &ext.user_task, true));
        } else if element.element_type == BpmnElementType::UserTask {
            // Zeebe's job-worker user task: a job of a fixed type, one retry
            element.task_definition = Some(TaskDefinition {
                job_type: Expression::Static(USER_TASK_JOB_TYPE.to_string()),
                retries: Expression::Static("1".to_string()),
            });
            element.task_headers = std::mem::take(&mut ext.headers);
            element.user_task = Some(self.user_task_props(id, &ext.user_task, false));
        } else if matches!(element.kind, ElementKind::JobWorkerTask) {
            element.task_definition = self.task_definition(id, node, &ext.task_definitions);
            element.task_headers = std::mem::take(&mut ext.headers);
        }
        if matches!(element.kind, ElementKind::ScriptTask) {
            element.script = self.script(id, node, &ext.scripts);
        }
        if matches!(element.kind, ElementKind::CallActivity) {
            element.called_element = self.called_element(id, node, &ext.called_elements);
        }
        if matches!(element.kind, ElementKind::BusinessRuleTask) {
            element.called_decision = self.called_decision(id, node, &ext.called_decisions);
        }
        if matches!(element.kind, ElementKind::AdHocSubProcess) {
            element.ad_hoc = self.ad_hoc(id, node, &ext.ad_hoc);
            if !ext.task_definitions.is_empty() {
                // the job worker implementation (Camunda's AI agent): a job decides what runs
                element.task_definition = self.task_definition(id, node, &ext.task_definitions);
                element.task_headers = std::mem::take(&mut ext.headers);
            }
        }
        if !ext.task_listeners.is_empty() {
            if element.kind == ElementKind::UserTask {
                element.task_listeners = std::mem::take(&mut ext.task_listeners);
            } else {
                self.ctx.problem(
                    Some(id),
                    node,
                    "Task listeners are only allowed on Camunda user tasks.",
                );
            }
        }
    }
}

/// The `zeebe:` extensions an element kind reads.
fn allowed_extensions(element: &Element) -> Allowed {
    match element.kind {
        ElementKind::JobWorkerTask if element.element_type == BpmnElementType::UserTask => {
            Allowed::USER_TASK
        }
        ElementKind::UserTask => Allowed::USER_TASK,
        ElementKind::JobWorkerTask => Allowed::SERVICE_TASK,
        ElementKind::LinkThrowEvent => Allowed::INPUTS,
        ElementKind::SignalThrowEvent => Allowed::IO,
        ElementKind::SignalCatch => Allowed::IO,
        ElementKind::SignalStartEvent | ElementKind::TimerStartEvent => Allowed::OUTPUTS,
        ElementKind::LinkCatchEvent => Allowed::OUTPUTS,
        ElementKind::SubProcess => Allowed::IO,
        // its job worker implementation: a task definition and headers
        ElementKind::AdHocSubProcess => Allowed::SERVICE_TASK,
        ElementKind::CallActivity => Allowed::CALL_ACTIVITY,
        ElementKind::PassThroughTask | ElementKind::NoneIntermediateThrowEvent => Allowed::IO,
        ElementKind::ScriptTask => Allowed::SCRIPT_TASK,
        ElementKind::BusinessRuleTask => Allowed::BUSINESS_RULE_TASK,
        ElementKind::NoneStartEvent => Allowed::NONE_START_EVENT,
        ElementKind::NoneEndEvent => Allowed::IO,
        ElementKind::TimerIntermediateCatchEvent | ElementKind::MessageCatch => Allowed::IO,
        ElementKind::MessageStartEvent => Allowed::OUTPUTS,
        ElementKind::BoundaryEvent | ElementKind::EventSubProcessStart => Allowed::OUTPUTS,
        ElementKind::ErrorEndEvent | ElementKind::TerminateEndEvent => Allowed::INPUTS,
        ElementKind::EscalationThrowEvent if element.element_type == BpmnElementType::EndEvent => {
            Allowed::INPUTS
        }
        ElementKind::EscalationThrowEvent => Allowed::IO,
        _ => Allowed::NONE,
    }
}

/// Zeebe's message for event definitions Zest does not run on an element kind.
fn unsupported_event(kind_name: &str, defs: &[Node]) -> String {
    let names: Vec<String> = defs
        .iter()
        .map(|d| format!("'{}'", d.tag_name().name()))
        .collect();
    format!(
        "the element kind '{kind_name}' with {} {UNSUPPORTED}",
        names.join(", ")
    )
}
