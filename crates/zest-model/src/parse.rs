//! BPMN XML -> [`Process`]: parsing, Zeebe extensions and deploy-time validation.
//!
//! Every problem is collected (never only the first); the result is either all executable
//! processes of the resource or a [`ModelError`] listing every problem, sorted by position.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use crate::xml::LineIndex;
use roxmltree::Node;

use crate::model::*;
use crate::time;

/// Namespace of BPMN 2.0 model elements.
const BPMN_NS: &str = "http://www.omg.org/spec/BPMN/20100524/MODEL";
/// Namespace of Zeebe's extension elements.
const ZEEBE_NS: &str = "http://camunda.org/schema/zeebe/1.0";

/// The job type of a job-worker user task (Zeebe's `Protocol.USER_TASK_JOB_TYPE`).
pub const USER_TASK_JOB_TYPE: &str = "io.camunda.zeebe:userTask";

const UNSUPPORTED: &str = "is not supported by this version of Zest";
const UNSUPPORTED_PL: &str = "are not supported by this version of Zest";

/// Flow nodes of BPMN 2.0 that may appear in a process; the ones without a builder below are
/// reported as unsupported.
const FLOW_NODES: &[&str] = &[
    "startEvent",
    "endEvent",
    "intermediateCatchEvent",
    "intermediateThrowEvent",
    "boundaryEvent",
    "implicitThrowEvent",
    "task",
    "serviceTask",
    "userTask",
    "manualTask",
    "scriptTask",
    "businessRuleTask",
    "sendTask",
    "receiveTask",
    "callActivity",
    "subProcess",
    "adHocSubProcess",
    "transaction",
    "exclusiveGateway",
    "parallelGateway",
    "inclusiveGateway",
    "eventBasedGateway",
    "complexGateway",
    "callChoreography",
    "choreographyTask",
    "subChoreography",
];

const EVENT_DEFINITIONS: &[&str] = &[
    "timerEventDefinition",
    "messageEventDefinition",
    "errorEventDefinition",
    "signalEventDefinition",
    "escalationEventDefinition",
    "terminateEventDefinition",
    "linkEventDefinition",
    "compensateEventDefinition",
    "conditionalEventDefinition",
    "cancelEventDefinition",
    "eventDefinitionRef",
];

/// Parses a BPMN resource and returns its executable processes, or every problem found.
pub fn parse_bpmn(resource_name: &str, xml: &[u8]) -> Result<Vec<Process>, ModelError> {
    let fail = |problems: Vec<Problem>| ModelError {
        resource_name: resource_name.to_string(),
        problems,
    };
    let (text, doc) = crate::xml::load(resource_name, xml)?;

    let mut ctx = Ctx {
        lines: LineIndex::new(text),
        problems: Vec::new(),
        messages: HashMap::new(),
        errors: HashMap::new(),
        escalations: HashMap::new(),
        signals: HashMap::new(),
    };
    let root = doc.root_element();
    if !is_bpmn(root, "definitions") {
        let found = match root.tag_name().namespace() {
            Some(ns) => format!("'{}' in namespace '{ns}'", root.tag_name().name()),
            None => format!("'{}' without namespace", root.tag_name().name()),
        };
        ctx.problem(
            None,
            root,
            format!(
                "the root element must be 'definitions' in namespace '{BPMN_NS}', but is {found}"
            ),
        );
        return Err(fail(ctx.problems));
    }

    check_duplicate_ids(&mut ctx, root);
    for node in root.children().filter(|n| is_bpmn(*n, "message")) {
        let Some(id) = non_empty_attr(node, "id") else {
            continue;
        };
        let subscription = children_in(node, BPMN_NS)
            .filter(|n| n.tag_name().name() == "extensionElements")
            .flat_map(|e| children_in(e, ZEEBE_NS))
            .find(|c| c.tag_name().name() == "subscription");
        let correlation_key = subscription
            .and_then(|c| non_empty_attr(c, "correlationKey"))
            .map(str::to_string);
        // a correlation key is always an expression, as Zeebe requires (whatever uses the
        // message): a static text would correlate every instance with the same key
        if let (Some(key), Some(at)) = (&correlation_key, subscription) {
            let key = key.trim();
            if !key.starts_with('=') {
                ctx.problem(
                    Some(id),
                    at,
                    format!("Expected expression but found static value '{key}'. An expression must start with '=' (e.g. '={key}')."),
                );
            }
        }
        ctx.messages.insert(
            id.to_string(),
            MessageDef {
                name: non_empty_attr(node, "name").map(str::to_string),
                correlation_key,
            },
        );
    }

    for node in root.children().filter(|n| is_bpmn(*n, "signal")) {
        if let Some(id) = non_empty_attr(node, "id") {
            let name = non_empty_attr(node, "name").map(|c| c.trim().to_string());
            ctx.signals.insert(id.to_string(), name);
        }
    }

    for node in root.children().filter(|n| is_bpmn(*n, "error")) {
        if let Some(id) = non_empty_attr(node, "id") {
            let code = non_empty_attr(node, "errorCode").map(|c| c.trim().to_string());
            ctx.errors.insert(id.to_string(), code);
        }
    }

    for node in root.children().filter(|n| is_bpmn(*n, "escalation")) {
        if let Some(id) = non_empty_attr(node, "id") {
            let code = non_empty_attr(node, "escalationCode").map(|c| c.trim().to_string());
            ctx.escalations.insert(id.to_string(), code);
        }
    }

    let mut processes = Vec::new();
    let mut executable_count = 0;
    for node in root.children().filter(|n| is_bpmn(*n, "process")) {
        let executable = node
            .attribute("isExecutable")
            .is_some_and(|v| matches!(v.trim(), "true" | "1"));
        if executable {
            executable_count += 1;
            if let Some(p) = ProcessBuilder::new(&mut ctx).build(node) {
                processes.push(p);
            }
        }
    }
    if executable_count == 0 {
        ctx.problem(
            None,
            root,
            "no executable process: the resource must contain at least one process with \
             isExecutable=\"true\" (Must contain at least one executable process)",
        );
    }

    if ctx.problems.is_empty() {
        Ok(processes)
    } else {
        ctx.problems.sort_by_key(|p| (p.line, p.column));
        Err(fail(ctx.problems))
    }
}

// ---------------------------------------------------------------------------------------------
// Positions and problems

struct Ctx<'t> {
    lines: LineIndex<'t>,
    problems: Vec<Problem>,
    /// `bpmn:message` elements of the definitions, by id.
    messages: HashMap<String, MessageDef>,
    /// `bpmn:error` elements of the definitions: id -> errorCode (if any).
    errors: HashMap<String, Option<String>>,
    /// `bpmn:signal` elements of the definitions: id -> name (if any).
    signals: HashMap<String, Option<String>>,
    /// `bpmn:escalation` elements of the definitions: id -> escalationCode (if any).
    escalations: HashMap<String, Option<String>>,
}

/// A `bpmn:message` as written: its name and `zeebe:subscription` correlation key.
struct MessageDef {
    name: Option<String>,
    correlation_key: Option<String>,
}

impl Ctx<'_> {
    fn line(&self, node: Node) -> u32 {
        self.lines.line(node)
    }

    fn problem(&mut self, element_id: Option<&str>, node: Node, message: impl Into<String>) {
        let problem = self.lines.problem(element_id, node, message);
        self.problems.push(problem);
    }

    /// Parses model text as an [`Expression`]; a FEEL error becomes a problem.
    fn expression(&mut self, id: &str, node: Node, what: &str, text: &str) -> Option<Expression> {
        match Expression::from_model(text) {
            Ok(e) => Some(e),
            Err(e) => {
                self.problem(
                    Some(id),
                    node,
                    // The FEEL error names the expression already.
                    format!("{what}: {}", e.message),
                );
                None
            }
        }
    }
}

fn is_in(node: Node, ns: &str, name: &str) -> bool {
    node.is_element() && node.tag_name().namespace() == Some(ns) && node.tag_name().name() == name
}

/// True when `node` has the `zeebe:<name>` extension element.
fn has_zeebe_extension(node: Node, name: &str) -> bool {
    children_in(node, BPMN_NS)
        .filter(|n| n.tag_name().name() == "extensionElements")
        .any(|e| children_in(e, ZEEBE_NS).any(|c| c.tag_name().name() == name))
}

fn is_bpmn(node: Node, name: &str) -> bool {
    is_in(node, BPMN_NS, name)
}

fn children_in<'a, 'input>(
    node: Node<'a, 'input>,
    ns: &'static str,
) -> impl Iterator<Item = Node<'a, 'input>> {
    node.children()
        .filter(move |n| n.is_element() && n.tag_name().namespace() == Some(ns))
}

/// Concatenated text of the direct text (and CDATA) children.
fn text_of(node: Node) -> String {
    node.children()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect()
}

fn non_empty_attr<'a>(node: Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.attribute(name).filter(|v| !v.trim().is_empty())
}

/// Every BPMN-namespace element id must be unique in the resource (they are `xs:ID`s).
fn check_duplicate_ids(ctx: &mut Ctx, root: Node) {
    let mut seen: HashMap<&str, u32> = HashMap::new();
    for node in root
        .descendants()
        .filter(|n| n.is_element() && n.tag_name().namespace() == Some(BPMN_NS))
    {
        let Some(id) = node.attribute("id") else {
            continue;
        };
        match seen.entry(id) {
            Entry::Occupied(first) => ctx.problem(
                Some(id),
                node,
                format!("Duplicate id '{id}': already used on line {}", first.get()),
            ),
            Entry::Vacant(slot) => {
                slot.insert(ctx.line(node));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Processes

struct PendingFlow<'a, 'input> {
    node: Node<'a, 'input>,
    id: &'a str,
    source: Option<&'a str>,
    target: Option<&'a str>,
    condition: Option<Expression>,
    /// Whether a `conditionExpression` child exists (even one that failed to parse).
    has_condition_node: bool,
}

struct ProcessBuilder<'c, 't, 'a, 'input> {
    ctx: &'c mut Ctx<'t>,
    elements: Vec<Element>,
    /// The XML node of each element (same index).
    nodes: Vec<Node<'a, 'input>>,
    by_id: HashMap<String, ElementIdx>,
    /// Ids of flow nodes that are not supported (already reported); flows touching them are
    /// dropped without further noise.
    unsupported: HashSet<&'a str>,
    pending_flows: Vec<PendingFlow<'a, 'input>>,
    /// Ids of every `sequenceFlow` of the process, resolved or not.
    all_flow_ids: HashSet<&'a str>,
    /// Per resolved flow (same index as the flows): its XML node and whether it has a
    /// `conditionExpression` child.
    flow_nodes: Vec<(Node<'a, 'input>, bool)>,
    /// Number of start events (of any kind) directly in the process.
    start_event_count: usize,
    /// The scope (process or embedded sub-process) whose children are being read.
    scope: ElementIdx,
    /// Per element: outgoing flows dropped because their target is unsupported or missing.
    dropped_outgoing: HashMap<ElementIdx, usize>,
    /// Boundary events and the id of the activity they are attached to (resolved once every
    /// element is read).
    attachments: Vec<(ElementIdx, &'a str)>,
    /// `bpmn:association`s: (source id, target id), linking compensation boundary events to
    /// their handlers.
    associations: Vec<(&'a str, &'a str)>,
    /// The form of the process's none start event.
    start_form: Option<StartForm>,
}

impl<'c, 't, 'a, 'input> ProcessBuilder<'c, 't, 'a, 'input> {
    fn new(ctx: &'c mut Ctx<'t>) -> Self {
        ProcessBuilder {
            ctx,
            elements: Vec::new(),
            nodes: Vec::new(),
            by_id: HashMap::new(),
            unsupported: HashSet::new(),
            pending_flows: Vec::new(),
            all_flow_ids: HashSet::new(),
            flow_nodes: Vec::new(),
            start_event_count: 0,
            scope: Process::ROOT,
            dropped_outgoing: HashMap::new(),
            attachments: Vec::new(),
            associations: Vec::new(),
            start_form: None,
        }
    }

    fn build(mut self, node: Node<'a, 'input>) -> Option<Process> {
        let line = self.ctx.line(node);
        let Some(id) = non_empty_attr(node, "id") else {
            self.ctx
                .problem(None, node, "the process has no 'id' attribute");
            return None;
        };
        let mut process = new_element(
            id,
            node,
            ElementKind::Process,
            BpmnElementType::Process,
            BpmnEventType::Unspecified,
            line,
        );
        process.flow_scope = None;
        let ext = self.extensions(id, node, &Allowed::NONE);
        self.keep_listeners(&mut process, node, ext.listeners);
        let embedded_forms = self.embedded_forms(id, &ext.user_task_forms);
        self.push(process, node);

        self.scope_children(node);

        self.resolve_attachments();
        self.resolve_compensation();
        let flows = self.resolve_flows();
        self.resolve_ad_hoc();
        self.resolve_defaults(&flows);
        self.validate(&flows);
        self.validate_compensation();

        let ProcessBuilder {
            elements,
            by_id,
            start_form,
            ..
        } = self;
        let flows_by_id = flows
            .iter()
            .enumerate()
            .map(|(i, f)| (f.id.clone(), i))
            .collect();
        let uses_compensation = elements.iter().any(|e| e.compensation_boundary.is_some());
        Some(Process {
            uses_compensation,
            embedded_forms,
            start_form,
            id: id.to_string(),
            name: elements[0].name.clone(),
            elements,
            flows,
            by_id,
            flows_by_id,
        })
    }

    fn push(&mut self, element: Element, node: Node<'a, 'input>) -> ElementIdx {
        let idx = self.elements.len();
        self.by_id.entry(element.id.clone()).or_insert(idx);
        self.elements.push(element);
        self.nodes.push(node);
        idx
    }

    fn flow_node(&mut self, node: Node<'a, 'input>) {
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

        let unsupported_event = |defs: &[Node]| {
            let names: Vec<String> = defs
                .iter()
                .map(|d| format!("'{}'", d.tag_name().name()))
                .collect();
            format!(
                "the element kind '{kind_name}' with {} {UNSUPPORTED}",
                names.join(", ")
            )
        };

        // the element type of a throw event: an end event or an intermediate throw event
        let throw_type = if kind_name == "endEvent" {
            BpmnElementType::EndEvent
        } else {
            BpmnElementType::IntermediateThrowEvent
        };
        let mut element = match kind_name {
            "startEvent"
                if self.elements[self.scope].element_type == BpmnElementType::EventSubProcess =>
            {
                let [def] = event_defs.as_slice() else {
                    let msg = "Start events in event sub-processes must have exactly one event definition: message, timer, signal, error or escalation".to_string();
                    return self.unsupported(id, node, msg);
                };
                let event_type = match def.tag_name().name() {
                    "messageEventDefinition" => BpmnEventType::Message,
                    "timerEventDefinition" => BpmnEventType::Timer,
                    "signalEventDefinition" => BpmnEventType::Signal,
                    "errorEventDefinition" => BpmnEventType::Error,
                    "escalationEventDefinition" => BpmnEventType::Escalation,
                    _ => {
                        let msg = unsupported_event(std::slice::from_ref(def));
                        return self.unsupported(id, node, msg);
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
            "startEvent" if self.scope != Process::ROOT && !event_defs.is_empty() => {
                let msg = "Start events in sub-processes must be of type none".to_string();
                return self.unsupported(id, node, msg);
            }
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
            "startEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "signalEventDefinition")) =>
            {
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
            "startEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "timerEventDefinition")) =>
            {
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
            "startEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "messageEventDefinition")) =>
            {
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
            // message throw events publish through a job worker, as in Zeebe
            "endEvent" | "intermediateThrowEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "messageEventDefinition")) => {
                new_element(
                    id,
                    node,
                    ElementKind::JobWorkerTask,
                    throw_type,
                    BpmnEventType::Message,
                    line,
                )
            }
            "endEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "errorEventDefinition")) =>
            {
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
            "endEvent" | "intermediateThrowEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "signalEventDefinition")) =>
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
            "endEvent" | "intermediateThrowEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "escalationEventDefinition")) =>
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
            "endEvent" | "intermediateThrowEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "compensateEventDefinition")) =>
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
            "endEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "terminateEventDefinition")) => {
                new_element(
                    id,
                    node,
                    ElementKind::TerminateEndEvent,
                    BpmnElementType::EndEvent,
                    BpmnEventType::Terminate,
                    line,
                )
            }
            "intermediateThrowEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "linkEventDefinition")) =>
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
                let msg = unsupported_event(&event_defs);
                return self.unsupported(id, node, msg);
            }
            "boundaryEvent" if matches!(event_defs.as_slice(), [d] if is_bpmn(*d, "compensateEventDefinition")) =>
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
                let [def] = event_defs.as_slice() else {
                    let msg = "Must have exactly one event definition".to_string();
                    return self.unsupported(id, node, msg);
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
                            let msg = unsupported_event(std::slice::from_ref(def));
                            return self.unsupported(id, node, msg);
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
            "intermediateCatchEvent" => match event_defs.as_slice() {
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
                    let msg = unsupported_event(std::slice::from_ref(def));
                    return self.unsupported(id, node, msg);
                }
                _ => {
                    let msg = "Must have exactly one event definition".to_string();
                    return self.unsupported(id, node, msg);
                }
            },
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
                return self.unsupported(id, node, msg);
            }
        };

        element.flow_scope = Some(self.scope);
        let allowed = match element.kind {
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
            ElementKind::EscalationThrowEvent
                if element.element_type == BpmnElementType::EndEvent =>
            {
                Allowed::INPUTS
            }
            ElementKind::EscalationThrowEvent => Allowed::IO,
            _ => Allowed::NONE,
        };
        let mut ext = self.extensions(id, node, &allowed);
        if let Some(form) = self.start_form_of(id, &ext.start_forms) {
            if self.scope == Process::ROOT {
                self.start_form = Some(form);
            }
        }

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
        // Zeebe 8.8 evaluates no input mappings of a none end event (its output mappings see
        // the variables of the flow scope); they are accepted and left out
        if element.kind != ElementKind::NoneEndEvent {
            element.inputs = ext.inputs;
        }
        element.outputs = ext.outputs;
        self.keep_listeners(&mut element, node, ext.listeners);
        if !ext.task_listeners.is_empty() {
            if element.kind == ElementKind::UserTask {
                element.task_listeners = ext.task_listeners;
            } else {
                self.ctx.problem(
                    Some(id),
                    node,
                    "Task listeners are only allowed on Camunda user tasks.",
                );
            }
        }
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

    /// `zeebe:adHoc`, `bpmn:completionCondition` and `cancelRemainingInstances` of an ad-hoc
    /// sub-process. Its activities and the `adHocSubProcessElements` variable are worked out
    /// once the sequence flows are known (`resolve_ad_hoc`).
    fn ad_hoc(&mut self, id: &str, node: Node, ext: &[Node]) -> Option<AdHoc> {
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
    fn output_pair(&mut self, id: &str, node: Node, collection: bool, element: bool) {
        let missing = match (collection, element) {
            (true, false) => "Attribute 'outputElement' must be present if the attribute 'outputCollection' is set",
            (false, true) => "Attribute 'outputCollection' must be present if the attribute 'outputElement' is set",
            _ => return,
        };
        self.ctx.problem(Some(id), node, missing);
    }

    /// The `bpmn:completionCondition` child of `node` (a multi-instance loop or an ad-hoc
    /// sub-process): a FEEL expression. `None` when it is invalid (a problem is reported).
    fn completion_condition(&mut self, id: &str, node: Node) -> Option<Option<Expression>> {
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
    fn resolve_ad_hoc(&mut self) {
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
    fn latest_binding(&mut self, id: &str, node: Node, what: &str) {
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
    fn called_decision(&mut self, id: &str, owner: Node, nodes: &[Node]) -> Option<CalledDecision> {
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
    fn called_element(&mut self, id: &str, owner: Node, nodes: &[Node]) -> Option<CalledElement> {
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
    fn multi_instance(&mut self, id: &str, node: Node) -> Option<MultiInstance> {
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
    fn scope_children(&mut self, node: Node<'a, 'input>) {
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

    /// The message that `owner` (a message event definition or a receive task) references
    /// with `messageRef`. Where an instance waits for it, the message needs a correlation key.
    fn message_ref(&mut self, id: &str, owner: Node, needs_key: bool) -> Option<MessageRef> {
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
    fn signal_name(&mut self, id: &str, def: Node, at_deployment: bool) -> Option<Expression> {
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
    fn thrown_code(&mut self, id: &str, def: Node, kind: CodeKind) -> Option<String> {
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
    fn caught_code(&mut self, id: &str, def: Node, kind: CodeKind) -> Option<String> {
        let reference = non_empty_attr(def, kind.ref_attr())?;
        self.referenced_code(id, def, kind, reference)?
    }

    /// The code of the `bpmn:error` or `bpmn:escalation` with id `reference`: `None` (and a
    /// problem) when the definitions have none with that id, `Some(None)` when it has no code.
    fn referenced_code(
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
    fn resolve_compensation(&mut self) {
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
    fn validate_compensation(&mut self) {
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

    fn resolve_attachments(&mut self) {
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

    fn unsupported(&mut self, id: &'a str, node: Node, message: String) {
        self.ctx.problem(Some(id), node, message);
        self.unsupported.insert(id);
    }

    /// `zeebe:script` of a script task (Zeebe's rules: one of them, a FEEL expression, a
    /// result variable; no job definition beside it).
    fn script(&mut self, id: &str, owner: Node, scripts: &[Node]) -> Option<Script> {
        if has_zeebe_extension(owner, "taskDefinition") {
            self.ctx.problem(
                Some(id),
                owner,
                "Must have either one 'zeebe:script' or one 'zeebe:taskDefinition' extension element",
            );
            return None;
        }
        let [script] = scripts else {
            let at = scripts.get(1).copied().unwrap_or(owner);
            self.ctx.problem(
                Some(id),
                at,
                "Must have exactly one 'zeebe:script' extension element",
            );
            return None;
        };
        let expression = match non_empty_attr(*script, "expression") {
            None => {
                self.ctx.problem(
                    Some(id),
                    *script,
                    "Attribute 'expression' must be present and not empty",
                );
                None
            }
            Some(text) if !text.trim_start().starts_with('=') => {
                self.ctx.problem(
                    Some(id),
                    *script,
                    format!("Attribute 'expression' must be a FEEL expression (starting with '='), but was '{text}'"),
                );
                None
            }
            Some(text) => self
                .ctx
                .expression(id, *script, "Attribute 'expression'", text),
        };
        let result_variable = match non_empty_attr(*script, "resultVariable") {
            Some(v) => Some(v.trim().to_string()),
            None => {
                self.ctx.problem(
                    Some(id),
                    *script,
                    "Attribute 'resultVariable' must be present and not empty",
                );
                None
            }
        };
        Some(Script {
            expression: expression?,
            result_variable: result_variable?,
        })
    }

    fn task_definition(&mut self, id: &str, owner: Node, defs: &[Node]) -> Option<TaskDefinition> {
        let [def] = defs else {
            let at = defs.get(1).copied().unwrap_or(owner);
            // Zeebe's wording: the kinds that can run without a job name their alternative
            let message = match (owner.tag_name().name(), defs.is_empty()) {
                ("scriptTask", true) => {
                    "Must have either one 'zeebe:script' or one 'zeebe:taskDefinition' extension element"
                }
                ("businessRuleTask", true) => {
                    "Must have either one 'zeebe:calledDecision' or one 'zeebe:taskDefinition' extension element"
                }
                _ => "Must have exactly one 'zeebe:taskDefinition' extension element",
            };
            self.ctx.problem(Some(id), at, message);
            return None;
        };
        self.job_definition(id, *def)
    }

    /// The `type` and `retries` attributes of a `zeebe:taskDefinition` or
    /// `zeebe:executionListener`.
    fn job_definition(&mut self, id: &str, def: Node) -> Option<TaskDefinition> {
        let job_type = match non_empty_attr(def, "type") {
            None => {
                self.ctx.problem(
                    Some(id),
                    def,
                    "Attribute 'type' must be present and not empty",
                );
                None
            }
            Some(t) => self.ctx.expression(id, def, "Attribute 'type'", t),
        };
        let retries = match non_empty_attr(def, "retries") {
            None => Some(Expression::Static("3".to_string())),
            Some(r) => {
                match self.ctx.expression(id, def, "Attribute 'retries'", r) {
                    Some(Expression::Static(s)) if s.trim().parse::<i32>().is_err() => {
                        self.ctx.problem(
                        Some(id),
                        def,
                        format!("Attribute 'retries' must be an integer or an expression, but is '{s}'"),
                    );
                        None
                    }
                    Some(Expression::Static(s)) => Some(Expression::Static(s.trim().to_string())),
                    other => other,
                }
            }
        };
        Some(TaskDefinition {
            job_type: job_type?,
            retries: retries?,
        })
    }

    /// `zeebe:executionListeners`: each listener's event type and job; a pair of event type and
    /// static job type may appear once.
    fn execution_listeners(&mut self, id: &str, list: Node, out: &mut Vec<ExecutionListener>) {
        let mut seen: Vec<(ListenerEventType, String, usize)> = Vec::new();
        for l in children_in(list, ZEEBE_NS) {
            if l.tag_name().name() != "executionListener" {
                continue;
            }
            let event_type = match l.attribute("eventType").map(str::trim) {
                Some("start") | None => ListenerEventType::Start,
                Some("end") => ListenerEventType::End,
                Some(other) => {
                    self.ctx.problem(
                        Some(id),
                        l,
                        format!("Attribute 'eventType' of an execution listener must be 'start' or 'end', but is '{other}'"),
                    );
                    continue;
                }
            };
            let Some(job) = self.job_definition(id, l) else {
                continue;
            };
            if let Expression::Static(t) = &job.job_type {
                match seen.iter_mut().find(|(e, s, _)| *e == event_type && s == t) {
                    Some((_, _, n)) => *n += 1,
                    None => seen.push((event_type, t.clone(), 1)),
                }
            }
            out.push(ExecutionListener { event_type, job });
        }
        for (event_type, job_type, n) in seen {
            if n > 1 {
                self.ctx.problem(
                    Some(id),
                    list,
                    format!("Found '{n}' duplicates based on eventType[{}] and type[{job_type}], these combinations should be unique.", event_type.name()),
                );
            }
        }
    }

    /// `zeebe:taskListeners` of a user task.
    fn task_listeners(&mut self, id: &str, list: Node, out: &mut Vec<TaskListener>) {
        for l in children_in(list, ZEEBE_NS) {
            if l.tag_name().name() != "taskListener" {
                continue;
            }
            let text = l.attribute("eventType").map(str::trim).unwrap_or("");
            let Some(event_type) = TaskListenerEventType::parse(text) else {
                self.ctx.problem(
                    Some(id),
                    l,
                    format!("Attribute 'eventType' of a task listener must be one of creating, assigning, updating, completing or canceling, but is '{text}'"),
                );
                continue;
            };
            if let Some(job) = self.job_definition(id, l) {
                out.push(TaskListener { event_type, job });
            }
        }
    }

    /// Checks that `element` can run the execution listeners it has (Zeebe's limits: no start
    /// listeners on start and boundary events, no end listeners on gateways and error end
    /// events) and keeps them.
    fn keep_listeners(
        &mut self,
        element: &mut Element,
        node: Node,
        listeners: Vec<ExecutionListener>,
    ) {
        let has = |t| listeners.iter().any(|l| l.event_type == t);
        let refused = match element.kind {
            ElementKind::CompensationBoundary if !listeners.is_empty() => {
                Some("Execution listeners are not supported by compensation boundary events")
            }
            ElementKind::NoneStartEvent
            | ElementKind::MessageStartEvent
            | ElementKind::SignalStartEvent
            | ElementKind::TimerStartEvent
            | ElementKind::EventSubProcessStart
                if has(ListenerEventType::Start) =>
            {
                Some("Execution listeners of type 'start' are not supported by start events")
            }
            ElementKind::BoundaryEvent if has(ListenerEventType::Start) => {
                Some("Execution listeners of type 'start' are not supported by boundary events")
            }
            ElementKind::ExclusiveGateway
            | ElementKind::InclusiveGateway
            | ElementKind::ParallelGateway
            | ElementKind::EventBasedGateway
                if has(ListenerEventType::End) =>
            {
                Some("Execution listeners of type 'end' are not supported by gateway element")
            }
            ElementKind::ErrorEndEvent if has(ListenerEventType::End) => {
                Some("Execution listeners of type 'end' are not supported by error end events")
            }
            _ => None,
        };
        match refused {
            Some(msg) => self.ctx.problem(Some(&element.id), node, msg),
            None => element.execution_listeners = listeners,
        }
    }

    /// `bpmn:timerEventDefinition`: exactly one of timeDuration, timeDate, timeCycle. Static
    /// values are validated now.
    fn timer(&mut self, id: &str, def: Node, intermediate: bool) -> Option<TimerDefinition> {
        let parts: Vec<Node> = children_in(def, BPMN_NS)
            .filter(|n| {
                matches!(
                    n.tag_name().name(),
                    "timeDuration" | "timeDate" | "timeCycle"
                )
            })
            .collect();
        let [part] = parts.as_slice() else {
            self.ctx.problem(
                Some(id),
                def,
                "Must be exactly one type of timer: timeDuration, timeDate or timeCycle",
            );
            return None;
        };
        let kind = part.tag_name().name();
        if intermediate && kind == "timeCycle" {
            self.ctx.problem(
                Some(id),
                *part,
                "Intermediate timer catch event must have either a time duration or a time date.",
            );
            return None;
        }
        let text = text_of(*part);
        let text = text.trim();
        let what = format!("Element '{kind}'");
        let expr = self.ctx.expression(id, *part, &what, text)?;
        if let Expression::Static(s) = &expr {
            let check = match kind {
                "timeDuration" => time::parse_duration(s)
                    .map(|_| ())
                    .map_err(|e| ("duration", e)),
                "timeDate" => time::parse_date_time(s)
                    .map(|_| ())
                    .map_err(|e| ("date", e)),
                _ => time::parse_time_cycle(s)
                    .map(|_| ())
                    .map_err(|e| ("cycle", e)),
            };
            if let Err((label, e)) = check {
                self.ctx
                    .problem(Some(id), *part, format!("Invalid timer {label} '{s}': {e}"));
                return None;
            }
        }
        Some(match kind {
            "timeDuration" => TimerDefinition::Duration(expr),
            "timeDate" => TimerDefinition::Date(expr),
            _ => TimerDefinition::Cycle(expr),
        })
    }

    /// The name of a link event definition (required).
    fn link_name(&mut self, id: &str, def: Node) -> Option<String> {
        match non_empty_attr(def, "name") {
            Some(n) => Some(n.to_string()),
            None => {
                self.ctx.problem(
                    Some(id),
                    def,
                    "Link events must have a name (attribute 'name')",
                );
                None
            }
        }
    }

    /// A user task's assignment, form, schedule and priority; `native`: a Camunda user task
    /// (`zeebe:userTask`), else a job-worker user task.
    fn user_task_props(&mut self, id: &str, nodes: &[Node], native: bool) -> UserTaskProps {
        let mut props = UserTaskProps::default();
        for &n in nodes {
            let mut expr = |attr: &str| -> Option<Expression> {
                let text = non_empty_attr(n, attr)?;
                self.ctx
                    .expression(id, n, &format!("Attribute '{attr}'"), text.trim())
            };
            match n.tag_name().name() {
                "assignmentDefinition" => {
                    props.assignee = expr("assignee");
                    props.candidate_groups = expr("candidateGroups");
                    props.candidate_users = expr("candidateUsers");
                }
                "taskSchedule" => {
                    props.due_date = expr("dueDate");
                    props.follow_up_date = expr("followUpDate");
                }
                "userTask" => {}
                "priorityDefinition" if native => {
                    props.priority = expr("priority");
                    if let Some(Expression::Static(p)) = &props.priority {
                        let msg = match p.trim().parse::<i64>() {
                            Ok(v) if (0..=100).contains(&v) => None,
                            Ok(_) => Some(format!("Priority must be a number between 0 and 100, but was '{p}'.")),
                            Err(_) => Some(format!("Expected static value to be a valid Number between 0 and 100, but found '{p}'.")),
                        };
                        if let Some(msg) = msg {
                            self.ctx.problem(Some(id), n, msg);
                        }
                    }
                }
                "priorityDefinition" => {}
                "formDefinition" if native => {
                    let form_id = non_empty_attr(n, "formId");
                    let external = non_empty_attr(n, "externalReference");
                    match (form_id, external) {
                        (None, Some(_)) => {
                            props.external_reference = expr("externalReference");
                        }
                        (Some(f), None) => props.form_id = self.form_id(id, n, f),
                        _ => {
                            self.ctx.problem(
                                Some(id),
                                n,
                                "Exactly one of the attributes 'formId, externalReference' must be present and not blank for native user tasks",
                            );
                        }
                    }
                }
                _ => {
                    if let Some(k) = non_empty_attr(n, "formKey") {
                        props.form_key = Some(k.trim().to_string());
                    } else if let Some(f) = non_empty_attr(n, "formId") {
                        props.form_id = self.form_id(id, n, f);
                    }
                }
            }
        }
        for (expr, what) in [
            (&props.due_date, "dueDate"),
            (&props.follow_up_date, "followUpDate"),
        ] {
            if let Some(Expression::Static(s)) = expr {
                if let Err(e) = time::parse_date_time(s) {
                    let at = nodes[0];
                    self.ctx.problem(
                        Some(id),
                        at,
                        format!("Attribute '{what}' must be an ISO 8601 date-time, but '{s}' is not: {e}"),
                    );
                }
            }
        }
        props
    }

    /// `zeebe:formDefinition formId`, linked to the latest version of the form (the only
    /// binding Zest has: it does not record which deployment a process came from).
    fn form_id(&mut self, id: &str, n: Node, form_id: &str) -> Option<String> {
        match n.attribute("bindingType").map(str::trim) {
            None | Some("latest") => Some(form_id.trim().to_string()),
            Some(other) => {
                self.ctx.problem(
                    Some(id),
                    n,
                    format!(
                        "the form binding type '{other}' {UNSUPPORTED}; use 'latest' (the default)"
                    ),
                );
                None
            }
        }
    }

    /// A timer start event's timer is set at deployment, before any variable exists: a FEEL
    /// timer is evaluated now, without variables, and must give a valid value.
    fn static_start_timer(
        &mut self,
        id: &str,
        def: Node,
        timer: TimerDefinition,
    ) -> Option<TimerDefinition> {
        type Check = fn(&str) -> Result<(), String>;
        let (expr, wrap, check): (Expression, fn(Expression) -> TimerDefinition, Check) =
            match timer {
                TimerDefinition::Duration(e) => (e, TimerDefinition::Duration, |s| {
                    time::parse_duration(s).map(|_| ())
                }),
                TimerDefinition::Date(e) => (e, TimerDefinition::Date, |s| {
                    time::parse_date_time(s).map(|_| ())
                }),
                TimerDefinition::Cycle(e) => (e, TimerDefinition::Cycle, |s| {
                    time::parse_time_cycle(s).map(|_| ())
                }),
            };
        let Expression::Feel(f) = &expr else {
            return Some(wrap(expr));
        };
        match f.evaluate(&serde_json::Map::new()) {
            Ok(serde_json::Value::String(v)) if check(&v).is_ok() => {
                Some(wrap(Expression::Static(v)))
            }
            other => {
                let got = match other {
                    Ok(v) => format!("'{v}'"),
                    Err(e) => e.message,
                };
                self.ctx.problem(
                    Some(id),
                    def,
                    format!("Expected the timer expression '={}' of a timer start event to give a valid timer without variables (it is evaluated at deployment), but got {got}", f.source()),
                );
                None
            }
        }
    }

    /// The forms embedded in a process (`zeebe:userTaskForm id="..."` with the form's JSON as
    /// its text).
    fn embedded_forms(&mut self, id: &str, nodes: &[Node]) -> Vec<EmbeddedForm> {
        let mut forms: Vec<EmbeddedForm> = Vec::new();
        for n in nodes {
            let Some(form_id) = non_empty_attr(*n, "id") else {
                self.ctx.problem(
                    Some(id),
                    *n,
                    "Attribute 'id' of 'zeebe:userTaskForm' must be present and not empty",
                );
                continue;
            };
            let schema: String = n
                .descendants()
                .filter(|d| d.is_text())
                .filter_map(|d| d.text())
                .collect();
            if forms.iter().any(|f| f.id == form_id.trim()) {
                self.ctx.problem(
                    Some(id),
                    *n,
                    format!("the embedded form id '{form_id}' is used twice in the process"),
                );
                continue;
            }
            forms.push(EmbeddedForm {
                id: form_id.trim().to_string(),
                schema: schema.trim().to_string(),
            });
        }
        forms
    }

    /// `zeebe:formDefinition` of a none start event: `formId` (a linked form), `formKey` (an
    /// embedded or custom form) or `externalReference`.
    fn start_form_of(&mut self, id: &str, nodes: &[Node]) -> Option<StartForm> {
        let n = *nodes.first()?;
        if nodes.len() > 1 {
            self.ctx.problem(
                Some(id),
                nodes[1],
                "Must have at most one 'zeebe:formDefinition' extension element",
            );
        }
        let attr = |name| non_empty_attr(n, name).map(|v| v.trim().to_string());
        match (attr("formId"), attr("formKey"), attr("externalReference")) {
            (Some(f), None, None) => self.form_id(id, n, &f).map(StartForm::Linked),
            (None, Some(k), None) => Some(StartForm::Key(k)),
            (None, None, Some(r)) => Some(StartForm::External(r)),
            _ => {
                self.ctx.problem(
                    Some(id),
                    n,
                    "Exactly one of the attributes 'formId, formKey, externalReference' must be present and not blank",
                );
                None
            }
        }
    }

    /// Reads `zeebe:*` extension elements of `owner`.
    fn extensions(
        &mut self,
        id: &str,
        owner: Node<'a, 'input>,
        allowed: &Allowed,
    ) -> Extensions<'a, 'input> {
        let mut ext = Extensions::default();
        let mut io_mappings = 0;
        let mut header_lists = 0;
        let kind_name = owner.tag_name().name();
        let ext_nodes =
            children_in(owner, BPMN_NS).filter(|n| n.tag_name().name() == "extensionElements");
        for ext_node in ext_nodes {
            for child in children_in(ext_node, ZEEBE_NS) {
                match child.tag_name().name() {
                    "taskDefinition" if allowed.task => ext.task_definitions.push(child),
                    "script" if allowed.script => ext.scripts.push(child),
                    "calledElement" if allowed.call => ext.called_elements.push(child),
                    "calledDecision" if allowed.decision => ext.called_decisions.push(child),
                    "assignmentDefinition"
                    | "formDefinition"
                    | "taskSchedule"
                    | "userTask"
                    | "priorityDefinition"
                        if allowed.user_task =>
                    {
                        ext.user_task.push(child)
                    }
                    "taskHeaders" if allowed.task || allowed.user_task => {
                        header_lists += 1;
                        if header_lists > 1 {
                            self.ctx.problem(
                                Some(id),
                                child,
                                "Must have at most one 'zeebe:taskHeaders' extension element",
                            );
                            continue;
                        }
                        self.headers(id, child, &mut ext.headers);
                    }
                    "ioMapping" if allowed.inputs || allowed.outputs => {
                        io_mappings += 1;
                        if io_mappings > 1 {
                            self.ctx.problem(
                                Some(id),
                                child,
                                "Must have at most one 'zeebe:ioMapping' extension element",
                            );
                            continue;
                        }
                        self.io_mapping(id, kind_name, child, allowed, &mut ext);
                    }
                    "ioMapping" => {
                        self.ctx.problem(
                            Some(id),
                            child,
                            format!("input/output mappings ('zeebe:ioMapping') on '{kind_name}' elements {UNSUPPORTED_PL}"),
                        );
                    }
                    // Ignored: metadata without behaviour; job-worker extensions on elements that
                    // do not create jobs (Zeebe ignores them there too).
                    "properties" | "versionTag" | "taskDefinition" | "taskHeaders" => {}
                    "executionListeners" => self.execution_listeners(id, child, &mut ext.listeners),
                    "taskListeners" => {
                        if allowed.user_task {
                            self.task_listeners(id, child, &mut ext.task_listeners)
                        } else {
                            self.ctx.problem(
                                Some(id),
                                child,
                                "Task listeners are only allowed on Camunda user tasks.",
                            );
                        }
                    }
                    "adHoc" if kind_name == "adHocSubProcess" => ext.ad_hoc.push(child),
                    "userTaskForm" if kind_name == "process" => ext.user_task_forms.push(child),
                    "formDefinition" if allowed.start_form => ext.start_forms.push(child),
                    other => {
                        self.ctx.problem(
                            Some(id),
                            child,
                            format!("the extension element 'zeebe:{other}' on '{kind_name}' elements {UNSUPPORTED}"),
                        );
                    }
                }
            }
        }
        ext
    }

    /// `zeebe:ioMapping` of an element of kind `kind_name`.
    fn io_mapping(
        &mut self,
        id: &str,
        kind_name: &str,
        io: Node,
        allowed: &Allowed,
        ext: &mut Extensions,
    ) {
        for m in children_in(io, ZEEBE_NS) {
            let name = m.tag_name().name();
            let is_input = match name {
                "input" => true,
                "output" => false,
                _ => continue,
            };
            if is_input && !allowed.inputs {
                self.ctx.problem(
                    Some(id),
                    m,
                    format!(
                        "input mappings ('zeebe:input') on '{kind_name}' elements {UNSUPPORTED_PL}"
                    ),
                );
                continue;
            }
            if !is_input && !allowed.outputs {
                self.ctx.problem(
                    Some(id),
                    m,
                    format!("output mappings ('zeebe:output') on '{kind_name}' elements {UNSUPPORTED_PL}"),
                );
                continue;
            }
            let target = match non_empty_attr(m, "target") {
                Some(t) => Some(t.trim().to_string()),
                None => {
                    self.ctx.problem(
                        Some(id),
                        m,
                        "Attribute 'target' must be present and not empty",
                    );
                    None
                }
            };
            let source = match non_empty_attr(m, "source") {
                Some(s) => self.ctx.expression(id, m, "Attribute 'source'", s),
                // An input without a source creates a local variable with value null.
                None if is_input => self.ctx.expression(id, m, "Attribute 'source'", "=null"),
                None => {
                    self.ctx.problem(
                        Some(id),
                        m,
                        "Attribute 'source' must be present and not empty",
                    );
                    None
                }
            };
            if let (Some(source), Some(target)) = (source, target) {
                let mapping = Mapping { source, target };
                if is_input {
                    ext.inputs.push(mapping);
                } else {
                    ext.outputs.push(mapping);
                }
            }
        }
    }

    fn headers(&mut self, id: &str, list: Node, out: &mut Vec<(String, String)>) {
        for h in children_in(list, ZEEBE_NS).filter(|n| n.tag_name().name() == "header") {
            match non_empty_attr(h, "key") {
                Some(key) => out.push((
                    key.to_string(),
                    h.attribute("value").unwrap_or("").to_string(),
                )),
                None => self.ctx.problem(
                    Some(id),
                    h,
                    "Attribute 'key' of 'zeebe:header' must be present and not empty",
                ),
            }
        }
    }

    fn sequence_flow(&mut self, node: Node<'a, 'input>) {
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
    fn flow_node_idx(&self, id: &str) -> Option<ElementIdx> {
        self.by_id.get(id).copied().filter(|&i| i != Process::ROOT)
    }

    fn resolve_flows(&mut self) -> Vec<SequenceFlow> {
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

    fn resolve_defaults(&mut self, flows: &[SequenceFlow]) {
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
    fn resolve_links(&mut self) {
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
    fn validate_event_gateways(&mut self) {
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

    fn validate(&mut self, flows: &[SequenceFlow]) {
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
        self.resolve_links();
        self.validate_event_gateways();

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

    fn flow_problem(&mut self, f: FlowIdx, flows: &[SequenceFlow], message: String) {
        let node = self.flow_nodes[f].0;
        self.ctx.problem(Some(&flows[f].id), node, message);
    }
}

/// Which zeebe extensions an element kind understands.
struct Allowed {
    task: bool,
    user_task: bool,
    script: bool,
    inputs: bool,
    outputs: bool,
    call: bool,
    decision: bool,
    /// `zeebe:formDefinition` of a none start event (the form an instance starts with).
    start_form: bool,
}

impl Allowed {
    const NONE: Allowed = Allowed {
        task: false,
        user_task: false,
        script: false,
        inputs: false,
        outputs: false,
        call: false,
        decision: false,
        start_form: false,
    };
    const SCRIPT_TASK: Allowed = Allowed {
        task: false,
        user_task: false,
        script: true,
        inputs: true,
        outputs: true,
        call: false,
        decision: false,
        start_form: false,
    };
    const BUSINESS_RULE_TASK: Allowed = Allowed {
        task: false,
        user_task: false,
        script: false,
        inputs: true,
        outputs: true,
        call: false,
        decision: true,
        start_form: false,
    };
    const SERVICE_TASK: Allowed = Allowed {
        task: true,
        user_task: false,
        script: false,
        inputs: true,
        outputs: true,
        call: false,
        decision: false,
        start_form: false,
    };
    const USER_TASK: Allowed = Allowed {
        task: false,
        user_task: true,
        script: false,
        inputs: true,
        outputs: true,
        call: false,
        decision: false,
        start_form: false,
    };
    const IO: Allowed = Allowed {
        task: false,
        user_task: false,
        script: false,
        inputs: true,
        outputs: true,
        call: false,
        decision: false,
        start_form: false,
    };
    const INPUTS: Allowed = Allowed {
        task: false,
        user_task: false,
        script: false,
        inputs: true,
        outputs: false,
        call: false,
        decision: false,
        start_form: false,
    };
    const CALL_ACTIVITY: Allowed = Allowed {
        task: false,
        user_task: false,
        script: false,
        inputs: true,
        outputs: true,
        call: true,
        decision: false,
        start_form: false,
    };
    const OUTPUTS: Allowed = Allowed {
        task: false,
        user_task: false,
        script: false,
        inputs: false,
        outputs: true,
        call: false,
        decision: false,
        start_form: false,
    };
    const NONE_START_EVENT: Allowed = Allowed {
        start_form: true,
        ..Allowed::OUTPUTS
    };
}

/// What a throw or catch event's code refers to: a `bpmn:error` or a `bpmn:escalation`.
#[derive(Clone, Copy)]
enum CodeKind {
    Error,
    Escalation,
}

impl CodeKind {
    fn name(self) -> &'static str {
        match self {
            CodeKind::Error => "error",
            CodeKind::Escalation => "escalation",
        }
    }

    fn ref_attr(self) -> &'static str {
        match self {
            CodeKind::Error => "errorRef",
            CodeKind::Escalation => "escalationRef",
        }
    }

    fn code_attr_capitalized(self) -> &'static str {
        match self {
            CodeKind::Error => "ErrorCode",
            CodeKind::Escalation => "EscalationCode",
        }
    }
}

#[derive(Default)]
struct Extensions<'a, 'input> {
    /// zeebe:assignmentDefinition, formDefinition, taskSchedule of a user task.
    user_task: Vec<Node<'a, 'input>>,
    task_definitions: Vec<Node<'a, 'input>>,
    scripts: Vec<Node<'a, 'input>>,
    called_elements: Vec<Node<'a, 'input>>,
    called_decisions: Vec<Node<'a, 'input>>,
    headers: Vec<(String, String)>,
    inputs: Vec<Mapping>,
    outputs: Vec<Mapping>,
    listeners: Vec<ExecutionListener>,
    task_listeners: Vec<TaskListener>,
    /// zeebe:adHoc of an ad-hoc sub-process.
    ad_hoc: Vec<Node<'a, 'input>>,
    /// zeebe:userTaskForm of a process: forms embedded in the model (Camunda 8.0 to 8.2).
    user_task_forms: Vec<Node<'a, 'input>>,
    /// zeebe:formDefinition of a none start event.
    start_forms: Vec<Node<'a, 'input>>,
}

fn has_time_cycle(def: Node) -> bool {
    children_in(def, BPMN_NS).any(|n| n.tag_name().name() == "timeCycle")
}

fn new_element(
    id: &str,
    node: Node,
    kind: ElementKind,
    element_type: BpmnElementType,
    event_type: BpmnEventType,
    line: u32,
) -> Element {
    Element {
        id: id.to_string(),
        name: node.attribute("name").map(str::to_string),
        kind,
        element_type,
        event_type,
        flow_scope: Some(Process::ROOT),
        incoming: Vec::new(),
        outgoing: Vec::new(),
        default_flow: None,
        inputs: Vec::new(),
        outputs: Vec::new(),
        task_definition: None,
        task_headers: Vec::new(),
        timer: None,
        script: None,
        called_decision: None,
        message: None,
        start_events: Vec::new(),
        message_start_events: Vec::new(),
        event_sub_process_starts: Vec::new(),
        attached_to: None,
        interrupting: true,
        boundary_events: Vec::new(),
        error_code: None,
        escalation_code: None,
        signal: None,
        link_name: None,
        link_target: None,
        user_task: None,
        called_element: None,
        multi_instance: None,
        ad_hoc: None,
        execution_listeners: Vec::new(),
        task_listeners: Vec::new(),
        compensation_boundary: None,
        compensation_handler: None,
        compensation_activity: None,
        is_for_compensation: false,
        line,
    }
}

/// One entry of an ad-hoc sub-process's `adHocSubProcessElements` variable, with Zeebe's field
/// names; fields without a value are left out, as Zeebe does.
fn activity_metadata(element: &Element, node: Node) -> serde_json::Value {
    let mut entry = serde_json::Map::new();
    entry.insert("elementId".into(), element.id.clone().into());
    if let Some(name) = element.name.as_ref().filter(|n| !n.is_empty()) {
        entry.insert("elementName".into(), name.clone().into());
    }
    if let Some(doc) = children_in(node, BPMN_NS).find(|c| c.tag_name().name() == "documentation") {
        let text = text_of(doc);
        if !text.is_empty() {
            entry.insert("documentation".into(), text.into());
        }
    }
    let mut properties = serde_json::Map::new();
    for ext in children_in(node, BPMN_NS).filter(|n| n.tag_name().name() == "extensionElements") {
        for list in children_in(ext, ZEEBE_NS).filter(|n| n.tag_name().name() == "properties") {
            for p in children_in(list, ZEEBE_NS).filter(|n| n.tag_name().name() == "property") {
                if let Some(name) = p.attribute("name") {
                    let value = p.attribute("value").unwrap_or_default();
                    properties.insert(name.to_string(), value.into());
                }
            }
        }
    }
    if !properties.is_empty() {
        entry.insert("properties".into(), properties.into());
    }
    serde_json::Value::Object(entry)
}
