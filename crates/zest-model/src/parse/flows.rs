//! Sequence flows and the validation of the whole process graph: defaults, links, event-based
//! gateways, reachability.

use super::*;

impl<'c, 't, 'a, 'input> ProcessBuilder<'c, 't, 'a, 'input> {
    pub(super) fn sequence_flow(&mut self, node: Node<'a, 'input>) {
        let Some(id) = non_empty_attr(node, "id") else {
            self.ctx.problem(
                None,
                node,
                "the element 'sequenceFlow' has no 'id' attribute",
            );
            return;
        };
        self.all_flow_ids.insert(id);
        let mut condition = None;
        let mut has_condition_node = false;
        for c in children_in(node, BPMN_NS).filter(|n| n.tag_name().name() == "conditionExpression")
        {
            has_condition_node = true;
            let text = text_of(c);
            let t = text.trim();
            if t.is_empty() {
                self.ctx
                    .problem(Some(id), c, "Condition expression must not be empty");
            } else if !t.starts_with('=') {
                self.ctx.problem(
                    Some(id),
                    c,
                    format!(
                        "Expected expression but found static value '{t}'. An expression must start with '=' (e.g. '={t}')."
                    ),
                );
            } else {
                condition = self.ctx.expression(id, c, "Condition", t);
            }
        }
        let attr = |name| {
            node.attribute(name)
                .map(str::trim)
                .filter(|v| !v.is_empty())
        };
        self.pending_flows.push(PendingFlow {
            node,
            id,
            source: attr("sourceRef"),
            target: attr("targetRef"),
            condition,
            has_condition_node,
        });
    }

    /// Looks up a flow node of this process (never the process itself).
    pub(super) fn flow_node_idx(&self, id: &str) -> Option<ElementIdx> {
        self.by_id.get(id).copied().filter(|&i| i != Process::ROOT)
    }

    pub(super) fn resolve_flows(&mut self) -> Vec<SequenceFlow> {
        let pending = std::mem::take(&mut self.pending_flows);
        let mut flows = Vec::new();
        for f in pending {
            let mut ends = [None, None];
            for (i, (attr, reference)) in [("sourceRef", f.source), ("targetRef", f.target)]
                .into_iter()
                .enumerate()
            {
                match reference {
                    None => {
                        self.ctx.problem(
                            Some(f.id),
                            f.node,
                            format!("Attribute '{attr}' must reference a valid flow node: sequence flow '{}' has no '{attr}'", f.id),
                        );
                    }
                    Some(r) => match self.flow_node_idx(r) {
                        Some(idx) => ends[i] = Some(idx),
                        None if self.unsupported.contains(r) => {}
                        None => {
                            self.ctx.problem(
                                Some(f.id),
                                f.node,
                                format!(
                                    "Attribute '{attr}' must reference a valid flow node: sequence flow '{}' references missing element '{r}'",
                                    f.id
                                ),
                            );
                        }
                    },
                }
            }
            let [Some(source), Some(target)] = ends else {
                if let [Some(source), None] = ends {
                    *self.dropped_outgoing.entry(source).or_default() += 1;
                }
                continue;
            };
            let idx = flows.len();
            flows.push(SequenceFlow {
                id: f.id.to_string(),
                source,
                target,
                condition: f.condition,
                line: self.ctx.line(f.node),
            });
            self.flow_nodes.push((f.node, f.has_condition_node));
            self.elements[source].outgoing.push(idx);
            self.elements[target].incoming.push(idx);
        }
        flows
    }

    pub(super) fn resolve_defaults(&mut self, flows: &[SequenceFlow]) {
        let by_id: HashMap<&str, FlowIdx> = flows
            .iter()
            .enumerate()
            .map(|(i, f)| (f.id.as_str(), i))
            .collect();
        for idx in 1..self.elements.len() {
            let node = self.nodes[idx];
            let Some(default) = node
                .attribute("default")
                .map(str::trim)
                .filter(|v| !v.is_empty())
            else {
                continue;
            };
            let id = self.elements[idx].id.clone();
            match by_id.get(default) {
                Some(&f) if flows[f].source == idx => self.elements[idx].default_flow = Some(f),
                Some(_) => {
                    let msg = if matches!(
                        self.elements[idx].kind,
                        ElementKind::ExclusiveGateway | ElementKind::ParallelGateway
                    ) {
                        "Default flow must start at gateway".to_string()
                    } else {
                        format!("Default flow must start at element '{id}'")
                    };
                    self.ctx.problem(
                        Some(&id),
                        node,
                        format!("{msg}: sequence flow '{default}' does not start here"),
                    );
                }
                // A flow dropped because it touches an unsupported element is already reported.
                None if self.all_flow_ids.contains(default) => {}
                None => {
                    self.ctx.problem(Some(&id), node, format!("Default flow '{default}' does not reference a sequence flow of this process"));
                }
            }
        }
    }

    /// Links each link throw event to the catch event of the same name in its scope (Zeebe's
    /// rules: the catch event exists, its name is unique in the scope, it has no incoming flow).
    pub(super) fn resolve_links(&mut self) {
        let mut catches: HashMap<(Option<ElementIdx>, String), ElementIdx> = HashMap::new();
        for i in 1..self.elements.len() {
            let e = &self.elements[i];
            if !matches!(e.kind, ElementKind::LinkCatchEvent) {
                continue;
            }
            let Some(name) = e.link_name.clone() else {
                continue;
            };
            let id = e.id.clone();
            if !e.incoming.is_empty() {
                self.ctx.problem(
                    Some(&id),
                    self.nodes[i],
                    "Link catch events must not have incoming sequence flows",
                );
            }
            if catches.insert((e.flow_scope, name.clone()), i).is_some() {
                self.ctx.problem(
                    Some(&id),
                    self.nodes[i],
                    format!("Multiple intermediate catch link event definitions with the same name '{name}' are not allowed."),
                );
            }
        }
        for i in 1..self.elements.len() {
            let e = &self.elements[i];
            if !matches!(e.kind, ElementKind::LinkThrowEvent) {
                continue;
            }
            let Some(name) = e.link_name.clone() else {
                continue;
            };
            match catches.get(&(e.flow_scope, name.clone())) {
                Some(&target) => self.elements[i].link_target = Some(target),
                None => {
                    let id = e.id.clone();
                    self.ctx.problem(
                        Some(&id),
                        self.nodes[i],
                        format!("Can't find a catch link event for the throw link event with the name '{name}' in the same scope."),
                    );
                }
            }
        }
    }

    /// An event-based gateway leads to at least two catch events of kind message or timer,
    /// by flows without conditions.
    pub(super) fn validate_event_gateways(&mut self) {
        for i in 1..self.elements.len() {
            let e = &self.elements[i];
            if !matches!(e.kind, ElementKind::EventBasedGateway) {
                continue;
            }
            let id = e.id.clone();
            let dropped = self.dropped_outgoing.get(&i).copied().unwrap_or(0);
            if e.outgoing.len() + dropped < 2 {
                self.ctx.problem(
                    Some(&id),
                    self.nodes[i],
                    "Event-based gateway must have at least 2 outgoing sequence flows.",
                );
            }
            let bad_target = e.outgoing.iter().any(|&f| {
                let (node, _) = self.flow_nodes[f];
                let target = node.attribute("targetRef").unwrap_or("");
                self.by_id.get(target.trim()).is_some_and(|&t| {
                    let t = &self.elements[t];
                    !(t.element_type == BpmnElementType::IntermediateCatchEvent
                        && matches!(
                            t.kind,
                            ElementKind::MessageCatch
                                | ElementKind::TimerIntermediateCatchEvent
                                | ElementKind::SignalCatch
                        ))
                })
            });
            if bad_target {
                self.ctx.problem(
                    Some(&id),
                    self.nodes[i],
                    "Event-based gateway must not have an outgoing sequence flow to other elements than message, timer or signal intermediate catch events.",
                );
            }
            if e.outgoing.iter().any(|&f| self.flow_nodes[f].1) {
                self.ctx.problem(
                    Some(&id),
                    self.nodes[i],
                    "Event-based gateway must not have an outgoing sequence flow with a condition.",
                );
            }
        }
    }

    /// Checks the process as a whole once all its elements and flows are read: start events,
    /// sub-process scopes, flows between scopes, message start events, links, event-based
    /// gateways, the flows of each element and conditions.
    pub(super) fn validate(&mut self, flows: &[SequenceFlow]) {
        self.validate_process_starts();
        self.validate_sub_process_starts();
        self.validate_flow_scopes(flows);
        self.validate_message_starts();
        self.resolve_links();
        self.validate_event_gateways();
        self.validate_element_flows(flows);
        self.validate_conditions(flows);
    }

    /// A process has a start event, at most one none start event.
    fn validate_process_starts(&mut self) {
        let process_node = self.nodes[0];
        let process_id = self.elements[0].id.clone();
        let in_root = |e: &Element| e.flow_scope == Some(Process::ROOT);
        let none_starts: Vec<ElementIdx> = (1..self.elements.len())
            .filter(|&i| {
                matches!(self.elements[i].kind, ElementKind::NoneStartEvent)
                    && in_root(&self.elements[i])
            })
            .collect();
        if self.start_event_count == 0 {
            self.ctx.problem(
                Some(&process_id),
                process_node,
                "Must have at least one start event",
            );
        } else if none_starts.len() > 1 {
            self.ctx.problem(
                Some(&process_id),
                process_node,
                "Multiple none start events are not allowed",
            );
        }
        self.elements[0].start_events = none_starts;
    }

    /// Sub-processes and event sub-processes have exactly one start event.
    fn validate_sub_process_starts(&mut self) {
        // an embedded sub-process starts at its one none start event
        for sub in 1..self.elements.len() {
            if !matches!(self.elements[sub].kind, ElementKind::SubProcess) {
                continue;
            }
            // an event sub-process starts at its one event start event
            let is_event = self.elements[sub].element_type == BpmnElementType::EventSubProcess;
            let starts: Vec<ElementIdx> = (1..self.elements.len())
                .filter(|&i| {
                    self.elements[i].flow_scope == Some(sub)
                        && matches!(
                            self.elements[i].kind,
                            ElementKind::NoneStartEvent | ElementKind::EventSubProcessStart
                        )
                })
                .collect();
            if starts.len() != 1 {
                let id = self.elements[sub].id.clone();
                let msg = if is_event {
                    format!(
                        "Must have exactly one start event, but the event sub-process has {}",
                        starts.len()
                    )
                } else {
                    format!(
                        "Must have exactly one none start event, but the sub-process has {}",
                        starts.len()
                    )
                };
                self.ctx.problem(Some(&id), self.nodes[sub], msg);
            }
            if is_event {
                let (inc, out) = (
                    self.elements[sub].incoming.len(),
                    self.elements[sub].outgoing.len(),
                );
                if inc + out > 0 {
                    let id = self.elements[sub].id.clone();
                    self.ctx.problem(
                        Some(&id),
                        self.nodes[sub],
                        "An event sub-process must not have incoming or outgoing sequence flows",
                    );
                }
            }
            self.elements[sub].start_events = starts;
        }
        // a scope subscribes to the start events of its event sub-processes
        for i in 1..self.elements.len() {
            if !matches!(self.elements[i].kind, ElementKind::EventSubProcessStart) {
                continue;
            }
            let outer = self.elements[i]
                .flow_scope
                .and_then(|esp| self.elements[esp].flow_scope);
            if let Some(outer) = outer {
                self.elements[outer].event_sub_process_starts.push(i);
            }
        }
    }

    fn validate_flow_scopes(&mut self, flows: &[SequenceFlow]) {
        // a sequence flow stays inside its scope
        for (f, flow) in flows.iter().enumerate() {
            let (a, b) = (&self.elements[flow.source], &self.elements[flow.target]);
            if a.flow_scope != b.flow_scope {
                let msg = format!(
                    "A sequence flow must connect elements of the same scope, but '{}' and '{}' are in different (sub-)processes",
                    a.id, b.id
                );
                self.flow_problem(f, flows, msg);
            }
        }
    }

    /// Message start events have different message names.
    fn validate_message_starts(&mut self) {
        let message_starts: Vec<ElementIdx> = (1..self.elements.len())
            .filter(|&i| matches!(self.elements[i].kind, ElementKind::MessageStartEvent))
            .collect();
        let mut names: HashMap<String, ElementIdx> = HashMap::new();
        for &i in &message_starts {
            let Some(m) = &self.elements[i].message else {
                continue;
            };
            let name = m.name.source();
            if let Some(&first) = names.get(&name) {
                let (id, first_id) = (self.elements[i].id.clone(), self.elements[first].id.clone());
                self.ctx.problem(
                    Some(&id),
                    self.nodes[i],
                    format!("Multiple message start events with the same message name '{name}' are not allowed (also used by '{first_id}')"),
                );
            } else {
                names.insert(name, i);
            }
        }
        self.elements[0].message_start_events = message_starts;
    }

    /// Start and boundary events have no incoming flows, end events no outgoing ones, and the
    /// flows out of an exclusive gateway have conditions (or are its default).
    fn validate_element_flows(&mut self, flows: &[SequenceFlow]) {
        for idx in 1..self.elements.len() {
            let e = &self.elements[idx];
            let (id, node) = (e.id.clone(), self.nodes[idx]);
            let dropped_outgoing = self.dropped_outgoing.get(&idx).copied().unwrap_or(0);
            let outgoing_count = e.outgoing.len() + dropped_outgoing;
            match e.kind {
                ElementKind::NoneStartEvent
                | ElementKind::MessageStartEvent
                | ElementKind::SignalStartEvent
                | ElementKind::TimerStartEvent
                | ElementKind::EventSubProcessStart
                    if !e.incoming.is_empty() =>
                {
                    self.ctx.problem(
                        Some(&id),
                        node,
                        "Start events must not have incoming sequence flows",
                    );
                }
                ElementKind::BoundaryEvent if !e.incoming.is_empty() => {
                    self.ctx.problem(
                        Some(&id),
                        node,
                        "Boundary events must not have incoming sequence flows",
                    );
                }
                ElementKind::NoneEndEvent
                | ElementKind::ErrorEndEvent
                | ElementKind::TerminateEndEvent
                | ElementKind::LinkThrowEvent
                    if !e.outgoing.is_empty() =>
                {
                    self.ctx.problem(
                        Some(&id),
                        node,
                        "End events must not have outgoing sequence flows to other elements.",
                    );
                }
                ElementKind::SignalThrowEvent
                    if e.element_type == BpmnElementType::EndEvent && !e.outgoing.is_empty() =>
                {
                    self.ctx.problem(
                        Some(&id),
                        node,
                        "End events must not have outgoing sequence flows to other elements.",
                    );
                }
                ElementKind::ExclusiveGateway if outgoing_count > 1 => {
                    let default = e.default_flow;
                    // A flow whose condition failed to parse is reported already.
                    let missing: Vec<FlowIdx> = e
                        .outgoing
                        .iter()
                        .copied()
                        .filter(|&f| Some(f) != default && !self.flow_nodes[f].1)
                        .collect();
                    for f in missing {
                        self.flow_problem(
                            f,
                            flows,
                            "Must have a condition or be default flow".to_string(),
                        );
                    }
                }
                _ => {}
            }
        }
    }

    fn validate_conditions(&mut self, flows: &[SequenceFlow]) {
        // Conditions are only evaluated by exclusive and inclusive gateways (and the event-based
        // gateway reports its own).
        for (f, flow) in flows.iter().enumerate() {
            if self.flow_nodes[f].1
                && !matches!(
                    self.elements[flow.source].kind,
                    ElementKind::ExclusiveGateway
                        | ElementKind::InclusiveGateway
                        | ElementKind::EventBasedGateway
                )
            {
                let source_kind = self.nodes[flow.source].tag_name().name();
                self.flow_problem(
                    f,
                    flows,
                    format!(
                        "conditions on sequence flows leaving '{source_kind}' elements {UNSUPPORTED_PL}; only flows leaving an exclusive or inclusive gateway may have a condition"
                    ),
                );
            }
        }
    }

    pub(super) fn flow_problem(&mut self, f: FlowIdx, flows: &[SequenceFlow], message: String) {
        let node = self.flow_nodes[f].0;
        self.ctx.problem(Some(&flows[f].id), node, message);
    }
}
