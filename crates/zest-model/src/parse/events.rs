//! Event definitions: messages, signals, error and escalation codes, compensation and boundary
//! attachment.

use super::*;

impl<'c, 't, 'a, 'input> ProcessBuilder<'c, 't, 'a, 'input> {
    /// The message that `owner` (a message event definition or a receive task) references
    /// with `messageRef`. Where an instance waits for it, the message needs a correlation key.
    pub(super) fn message_ref(
        &mut self,
        id: &str,
        owner: Node,
        needs_key: bool,
    ) -> Option<MessageRef> {
        let Some(reference) = non_empty_attr(owner, "messageRef") else {
            self.ctx.problem(
                Some(id),
                owner,
                "Must reference a message (attribute 'messageRef')",
            );
            return None;
        };
        let Some(def) = self.ctx.messages.get(reference.trim()) else {
            self.ctx.problem(
                Some(id),
                owner,
                format!("Attribute 'messageRef' must reference a 'bpmn:message' of the definitions, but no message has the id '{reference}'"),
            );
            return None;
        };
        let (name, key) = (def.name.clone(), def.correlation_key.clone());
        let Some(name) = name else {
            self.ctx.problem(
                Some(id),
                owner,
                format!(
                    "Must have a message name: the message '{reference}' has no 'name' attribute"
                ),
            );
            return None;
        };
        let mut name = self.ctx.expression(id, owner, "Message name", &name)?;
        if let (false, Expression::Feel(e)) = (needs_key, &name) {
            // a start event's subscription opens at deployment, before any variable exists
            match e.evaluate(&serde_json::Map::new()) {
                Ok(serde_json::Value::String(v)) => name = Expression::Static(v),
                Ok(other) => {
                    self.ctx.problem(
                        Some(id),
                        owner,
                        format!("Expected the message name expression '={}' to result in a string (it is evaluated at deployment, without variables), but it was {other}", e.source()),
                    );
                    return None;
                }
                Err(err) => {
                    self.ctx.problem(
                        Some(id),
                        owner,
                        format!("Expected the message name expression '={}' to be evaluated at deployment, without variables, but {}", e.source(), err.message),
                    );
                    return None;
                }
            }
        }
        let correlation_key = match key {
            Some(k) if needs_key => {
                Some(
                    self.ctx
                        .expression(id, owner, "Attribute 'correlationKey'", &k)?,
                )
            }
            Some(_) => None,
            None if needs_key => {
                self.ctx.problem(
                    Some(id),
                    owner,
                    format!("Must have a correlation key: the message '{reference}' needs a 'zeebe:subscription' extension element with a non-empty 'correlationKey'"),
                );
                return None;
            }
            None => None,
        };
        Some(MessageRef {
            name,
            correlation_key,
        })
    }

    /// The signal name a signal event definition references (`signalRef` -> `bpmn:signal name`),
    /// static or FEEL. A start event's subscription opens at deployment, so its name must be
    /// static (or FEEL without variables).
    pub(super) fn signal_name(
        &mut self,
        id: &str,
        def: Node,
        at_deployment: bool,
    ) -> Option<Expression> {
        let Some(reference) = non_empty_attr(def, "signalRef") else {
            self.ctx.problem(
                Some(id),
                def,
                "Must reference a signal (attribute 'signalRef')",
            );
            return None;
        };
        let Some(name) = self.ctx.signals.get(reference.trim()).cloned() else {
            self.ctx.problem(
                Some(id),
                def,
                format!("Attribute 'signalRef' must reference a 'bpmn:signal' of the definitions, but no signal has the id '{reference}'"),
            );
            return None;
        };
        let Some(name) = name else {
            self.ctx.problem(
                Some(id),
                def,
                format!(
                    "Must have a signal name: the signal '{reference}' has no 'name' attribute"
                ),
            );
            return None;
        };
        let expr = self.ctx.expression(id, def, "Signal name", &name)?;
        match (at_deployment, &expr) {
            (true, Expression::Feel(e)) => match e.evaluate(&serde_json::Map::new()) {
                Ok(serde_json::Value::String(v)) => Some(Expression::Static(v)),
                _ => {
                    self.ctx.problem(
                        Some(id),
                        def,
                        format!("Expected the signal name expression '={}' of a start event to result in a string without variables (it is evaluated at deployment)", e.source()),
                    );
                    None
                }
            },
            _ => Some(expr),
        }
    }

    /// The code an error or escalation throw event throws: its reference's static, non-empty
    /// code (Zeebe's rules).
    pub(super) fn thrown_code(&mut self, id: &str, def: Node, kind: CodeKind) -> Option<String> {
        let (attr, name) = (kind.ref_attr(), kind.name());
        let Some(reference) = non_empty_attr(def, attr) else {
            self.ctx.problem(
                Some(id),
                def,
                format!("Must reference an {name} (attribute '{attr}')"),
            );
            return None;
        };
        match self.referenced_code(id, def, kind, reference)? {
            None => {
                let upper = kind.code_attr_capitalized();
                self.ctx.problem(
                    Some(id),
                    def,
                    format!("{upper} must be present and not empty (the {name} '{reference}' has no '{name}Code')"),
                );
                None
            }
            Some(code) if code.starts_with('=') => {
                self.ctx.problem(
                    Some(id),
                    def,
                    format!("{name} codes given as FEEL expressions ('{code}') {UNSUPPORTED_PL}"),
                );
                None
            }
            Some(code) => Some(code),
        }
    }

    /// The code an error or escalation boundary event catches; `None` catches every one.
    pub(super) fn caught_code(&mut self, id: &str, def: Node, kind: CodeKind) -> Option<String> {
        let reference = non_empty_attr(def, kind.ref_attr())?;
        self.referenced_code(id, def, kind, reference)?
    }

    /// The code of the `bpmn:error` or `bpmn:escalation` with id `reference`: `None` (and a
    /// problem) when the definitions have none with that id, `Some(None)` when it has no code.
    pub(super) fn referenced_code(
        &mut self,
        id: &str,
        def: Node,
        kind: CodeKind,
        reference: &str,
    ) -> Option<Option<String>> {
        let defs = match kind {
            CodeKind::Error => &self.ctx.errors,
            CodeKind::Escalation => &self.ctx.escalations,
        };
        let found = defs.get(reference.trim()).cloned();
        if found.is_none() {
            let (attr, name) = (kind.ref_attr(), kind.name());
            self.ctx.problem(
                Some(id),
                def,
                format!("Attribute '{attr}' must reference a 'bpmn:{name}' of the definitions, but no {name} has the id '{reference}'"),
            );
        }
        found
    }

    /// Attaches boundary events to their activities (Zeebe's rules: an activity of the same
    /// scope; no incoming flows).
    /// Links each compensation boundary event to its handler (an activity with
    /// `isForCompensation`, associated with the boundary event).
    pub(super) fn resolve_compensation(&mut self) {
        let boundaries: Vec<ElementIdx> = (0..self.elements.len())
            .filter(|&i| matches!(self.elements[i].kind, ElementKind::CompensationBoundary))
            .collect();
        for b in boundaries {
            let id = self.elements[b].id.clone();
            let node = self.nodes[b];
            let handler = self
                .associations
                .iter()
                .filter_map(|&(source, target)| {
                    if source == id {
                        Some(target)
                    } else if target == id {
                        Some(source)
                    } else {
                        None
                    }
                })
                .filter_map(|other| self.flow_node_idx(other))
                .find(|&h| self.elements[h].is_for_compensation);
            match handler {
                Some(h) => self.elements[b].compensation_handler = Some(h),
                None => self.ctx.problem(
                    Some(&id),
                    node,
                    "A compensation boundary event must be associated with a compensation handler (an activity with isForCompensation=\"true\")",
                ),
            }
        }
    }

    /// Compensation boundary events and handlers have no sequence flows; a compensation throw
    /// event's `activityRef` names an activity of its scope.
    pub(super) fn validate_compensation(&mut self) {
        for i in 0..self.elements.len() {
            let e = &self.elements[i];
            let (id, node) = (e.id.clone(), self.nodes[i]);
            if matches!(e.kind, ElementKind::CompensationBoundary) && !e.outgoing.is_empty() {
                self.ctx.problem(
                    Some(&id),
                    node,
                    "A compensation boundary event must not have outgoing sequence flows",
                );
            }
            if e.is_for_compensation && (!e.incoming.is_empty() || !e.outgoing.is_empty()) {
                self.ctx.problem(
                    Some(&id),
                    node,
                    "A compensation handler (isForCompensation=\"true\") must not have incoming or outgoing sequence flows",
                );
            }
            if let Some(activity) = &e.compensation_activity {
                // the throw event's scope, or inside an event sub-process the scope it runs in
                let mut scopes = vec![e.flow_scope];
                if let Some(s) = e.flow_scope {
                    if self.elements[s].element_type == BpmnElementType::EventSubProcess {
                        scopes.push(self.elements[s].flow_scope);
                    }
                }
                let found = self.by_id.get(activity).map(|&a| &self.elements[a]);
                if !found.is_some_and(|a| scopes.contains(&a.flow_scope)) {
                    let msg = format!("Attribute 'activityRef' must reference an activity in the scope of the compensation throw event, but '{activity}' is not one");
                    self.ctx.problem(Some(&id), node, msg);
                }
            }
        }
    }

    pub(super) fn resolve_attachments(&mut self) {
        for (b, target) in std::mem::take(&mut self.attachments) {
            let (id, node) = (self.elements[b].id.clone(), self.nodes[b]);
            let Some(a) = self.flow_node_idx(target) else {
                if !self.unsupported.contains(target) {
                    self.ctx.problem(
                        Some(&id),
                        node,
                        format!("Attribute 'attachedToRef' must reference an activity, but no element has the id '{target}'"),
                    );
                }
                continue;
            };
            let activity = &self.elements[a];
            let is_activity = matches!(
                activity.kind,
                ElementKind::JobWorkerTask
                    | ElementKind::UserTask
                    | ElementKind::ScriptTask
                    | ElementKind::BusinessRuleTask
                    | ElementKind::PassThroughTask
                    | ElementKind::SubProcess
                    | ElementKind::AdHocSubProcess
                    | ElementKind::CallActivity
            ) && !matches!(
                activity.element_type,
                BpmnElementType::EndEvent | BpmnElementType::IntermediateThrowEvent
            ) || activity.element_type == BpmnElementType::ReceiveTask;
            if activity.element_type == BpmnElementType::EventSubProcess {
                self.ctx.problem(
                    Some(&id),
                    node,
                    format!("Attribute 'attachedToRef' must reference an activity, but '{target}' is an event sub-process, which cannot have boundary events"),
                );
                continue;
            }
            if !is_activity {
                let kind = self.nodes[a].tag_name().name();
                self.ctx.problem(
                    Some(&id),
                    node,
                    format!("Attribute 'attachedToRef' must reference an activity, but '{target}' is a '{kind}'"),
                );
                continue;
            }
            if matches!(self.elements[b].kind, ElementKind::CompensationBoundary) {
                if self.elements[a].multi_instance.is_some() {
                    self.ctx.problem(
                        Some(&id),
                        node,
                        format!("compensation boundary events on multi-instance activities {UNSUPPORTED_PL}"),
                    );
                    continue;
                }
                if self.elements[a].compensation_boundary.is_some() {
                    self.ctx.problem(
                        Some(&id),
                        node,
                        format!("The activity '{target}' must have at most one compensation boundary event"),
                    );
                    continue;
                }
                if self.elements[b].flow_scope != self.elements[a].flow_scope {
                    self.ctx.problem(
                        Some(&id),
                        node,
                        format!("A boundary event must be in the scope of the activity '{target}' it is attached to"),
                    );
                    continue;
                }
                self.elements[b].attached_to = Some(a);
                self.elements[a].compensation_boundary = Some(b);
                continue;
            }
            if self.elements[b].event_type == BpmnEventType::Escalation
                && !matches!(
                    activity.kind,
                    ElementKind::SubProcess
                        | ElementKind::AdHocSubProcess
                        | ElementKind::CallActivity
                )
            {
                self.ctx.problem(
                    Some(&id),
                    node,
                    "An escalation boundary event should only be attached to a subprocess, or a call activity",
                );
                continue;
            }
            if activity.flow_scope != self.elements[b].flow_scope {
                self.ctx.problem(
                    Some(&id),
                    node,
                    format!("A boundary event must be in the scope of the activity '{target}' it is attached to"),
                );
                continue;
            }
            self.elements[b].attached_to = Some(a);
            self.elements[a].boundary_events.push(b);
        }
    }

    pub(super) fn unsupported(&mut self, id: &'a str, node: Node, message: String) {
        self.ctx.problem(Some(id), node, message);
        self.unsupported.insert(id);
    }
}
