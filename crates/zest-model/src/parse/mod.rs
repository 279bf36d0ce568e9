//! BPMN XML -> [`Process`]: parsing, Zeebe extensions and deploy-time validation.
//!
//! Every problem is collected (never only the first); the result is either all executable
//! processes of the resource or a [`ModelError`] listing every problem, sorted by position.

mod activities;
mod elements;
mod events;
mod extensions;
mod flows;

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
    by_id: foldhash::HashMap<String, ElementIdx>,
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
            by_id: foldhash::HashMap::default(),
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
