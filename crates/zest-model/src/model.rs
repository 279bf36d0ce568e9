use std::fmt;

pub use zest_protocol::{BpmnElementType, BpmnEventType};

/// Index of an element in `Process::elements`.
pub type ElementIdx = usize;
/// Index of a sequence flow in `Process::flows`.
pub type FlowIdx = usize;

/// An expression as written in the model: a FEEL expression (written with a leading `=`) or a
/// static value (anything else).
#[derive(Debug, Clone)]
pub enum Expression {
    /// A static value, as written.
    Static(String),
    /// A FEEL expression, parsed at deploy time.
    Feel(zest_feel::Expression),
}

impl Expression {
    /// Parses model text: `=expr` is FEEL, anything else is a static value.
    pub fn from_model(text: &str) -> Result<Expression, zest_feel::FeelError> {
        match text.trim_start().strip_prefix('=') {
            Some(feel) => Ok(Expression::Feel(zest_feel::Expression::parse(feel)?)),
            None => Ok(Expression::Static(text.to_string())),
        }
    }

    /// The text as written in the model.
    pub fn source(&self) -> String {
        match self {
            Expression::Static(s) => s.clone(),
            Expression::Feel(e) => format!("={}", e.source()),
        }
    }

    /// The expression as Zeebe quotes it in messages: FEEL without the leading `=`.
    pub fn quoted(&self) -> &str {
        match self {
            Expression::Static(s) => s,
            Expression::Feel(e) => e.source(),
        }
    }
}

/// `bpmn:multiInstanceLoopCharacteristics` with its `zeebe:loopCharacteristics`: the activity
/// runs once per item of a collection, in a multi-instance body (same element id, element type
/// MULTI_INSTANCE_BODY) that holds the inner instances.
/// What makes an ad-hoc sub-process (Zeebe 8.8's BPMN implementation).
#[derive(Debug, Clone)]
pub struct AdHoc {
    /// `zeebe:adHoc activeElementsCollection`: the ids of the elements to activate (a list of
    /// strings), evaluated when the sub-process activates; `None`: nothing is activated.
    pub active_elements_collection: Option<Expression>,
    /// `bpmn:completionCondition`: checked as each inner instance completes.
    pub completion_condition: Option<Expression>,
    /// `cancelRemainingInstances` (default true): when the condition holds, the other inner
    /// instances are terminated; else the sub-process waits for them.
    pub cancel_remaining_instances: bool,
    /// `zeebe:adHoc outputCollection`: a variable local to the sub-process (an empty list at
    /// first) that each completed flow appends its `outputElement` to; propagated on completion.
    pub output_collection: Option<String>,
    /// `zeebe:adHoc outputElement`: evaluated in a completed inner instance.
    pub output_element: Option<Expression>,
    /// The synthetic inner-instance element, the flow scope of the elements inside.
    pub inner: ElementIdx,
    /// The elements that can be activated: the flow nodes directly inside without incoming
    /// sequence flows (no start, end or boundary events), in document order.
    pub activities: Vec<ElementIdx>,
    /// The value of the `adHocSubProcessElements` variable: per activity its `elementId`, and
    /// where set its `elementName`, `documentation` and `properties` (`zeebe:properties`).
    pub elements_variable: serde_json::Value,
}

#[derive(Debug, Clone)]
pub struct MultiInstance {
    /// `isSequential`: one inner instance after the other, else all at once.
    pub sequential: bool,
    /// A FEEL expression giving the items (a list).
    pub input_collection: Expression,
    /// The variable that holds an inner instance's item (local to it).
    pub input_element: Option<String>,
    /// The variable (local to the body, then propagated) collecting the output elements.
    pub output_collection: Option<String>,
    /// Evaluated as each inner instance completes; stored at its index of the output collection.
    pub output_element: Option<Expression>,
    /// `bpmn:completionCondition`: checked as each inner instance completes; when true the
    /// body completes and the remaining inner instances are terminated.
    pub completion_condition: Option<Expression>,
}

impl MultiInstance {
    /// The variable an output element that is just a variable (or a path into one) refers to:
    /// Zeebe creates it as a local null in each inner instance so its value stays there.
    pub fn output_element_variable(&self) -> Option<&str> {
        let root = output_element_root(self.output_element.as_ref())?;
        let same_as_input = self.input_element.as_deref() == Some(root);
        (!same_as_input && root != "loopCounter").then_some(root)
    }
}

impl AdHoc {
    /// The variable an output element that is just a variable refers to: Zeebe creates it as
    /// a local null in each inner instance, as for multi-instance.
    pub fn output_element_variable(&self) -> Option<&str> {
        output_element_root(self.output_element.as_ref())
    }
}

/// The root variable of an output element that is just a variable or a path into one
/// (`= result`, `= result.value`).
fn output_element_root(output_element: Option<&Expression>) -> Option<&str> {
    let Some(Expression::Feel(e)) = output_element else {
        return None;
    };
    let src = e.source().trim();
    let is_name = |p: &str| {
        let mut chars = p.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if !src.split('.').all(is_name) {
        return None;
    }
    src.split('.').next()
}

/// `zeebe:calledElement` of a call activity (binding 'latest').
#[derive(Debug, Clone)]
pub struct CalledElement {
    /// The BPMN process id of the process to start (static or FEEL).
    pub process_id: Expression,
    /// `propagateAllChildVariables` (default true): the child's variables come back.
    pub propagate_all_child_variables: bool,
    /// `propagateAllParentVariables` (default true): the child starts with every variable
    /// the call activity sees; otherwise only with its input mappings' result.
    pub propagate_all_parent_variables: bool,
}

/// A `zeebe:input` or `zeebe:output` mapping.
#[derive(Debug, Clone)]
pub struct Mapping {
    pub source: Expression,
    /// Target variable, possibly a path `a.b.c` that merges into nested contexts.
    pub target: String,
}

/// `zeebe:taskDefinition`.
#[derive(Debug, Clone)]
pub struct TaskDefinition {
    pub job_type: Expression,
    /// Defaults to the static value "3" when absent.
    pub retries: Expression,
}

/// When an execution listener runs: before the element's behaviour (after its input mappings),
/// or after it (after its output mappings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenerEventType {
    Start,
    End,
}

impl ListenerEventType {
    /// Zeebe's name (`zeebe:executionListener eventType`).
    pub fn name(self) -> &'static str {
        match self {
            ListenerEventType::Start => "start",
            ListenerEventType::End => "end",
        }
    }
}

/// `zeebe:executionListener`: a job of `job` that the element's lifecycle waits for.
#[derive(Debug, Clone)]
pub struct ExecutionListener {
    pub event_type: ListenerEventType,
    pub job: TaskDefinition,
}

/// A `zeebe:taskListener`: a job a Camunda user task's transition waits for.
#[derive(Debug, Clone)]
pub struct TaskListener {
    pub event_type: TaskListenerEventType,
    pub job: TaskDefinition,
}

/// The transitions of a user task that listeners can run for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskListenerEventType {
    Creating,
    Assigning,
    Updating,
    Completing,
    Canceling,
}

impl TaskListenerEventType {
    /// Zeebe 8.8's name, or one of 8.7's (`create`, `assignment`, `update`, `complete`,
    /// `cancel`), which 8.8 still reads.
    pub fn parse(text: &str) -> Option<TaskListenerEventType> {
        Some(match text {
            "creating" | "create" => TaskListenerEventType::Creating,
            "assigning" | "assignment" => TaskListenerEventType::Assigning,
            "updating" | "update" => TaskListenerEventType::Updating,
            "completing" | "complete" => TaskListenerEventType::Completing,
            "canceling" | "cancel" => TaskListenerEventType::Canceling,
            _ => return None,
        })
    }
}

impl Element {
    /// The task listeners of one transition, in the order they run.
    pub fn task_listeners_of(
        &self,
        event: TaskListenerEventType,
    ) -> impl Iterator<Item = &TaskListener> {
        self.task_listeners
            .iter()
            .filter(move |l| l.event_type == event)
    }
}

/// `zeebe:script` of a script task: a FEEL expression whose result is written to a variable.
#[derive(Debug, Clone)]
pub struct Script {
    pub expression: Expression,
    pub result_variable: String,
}

/// `zeebe:calledDecision` of a business rule task: the DMN decision to evaluate (by id, latest
/// version; static or FEEL) and the variable its result is written to.
#[derive(Debug, Clone)]
pub struct CalledDecision {
    pub decision_id: Expression,
    pub result_variable: String,
}

#[derive(Debug, Clone)]
pub enum TimerDefinition {
    /// `bpmn:timeDuration`: ISO 8601 duration (static or FEEL).
    Duration(Expression),
    /// `bpmn:timeDate`: ISO 8601 date-time (static or FEEL).
    Date(Expression),
    /// `bpmn:timeCycle`: `R[n]/duration` or cron (static or FEEL).
    Cycle(Expression),
}

/// The assignment, form and schedule of a user task (`zeebe:assignmentDefinition`,
/// `zeebe:formDefinition`, `zeebe:taskSchedule`), static or FEEL.
#[derive(Debug, Clone, Default)]
pub struct UserTaskProps {
    pub assignee: Option<Expression>,
    /// A comma-separated static list, or FEEL giving a list of strings.
    pub candidate_groups: Option<Expression>,
    pub candidate_users: Option<Expression>,
    pub due_date: Option<Expression>,
    pub follow_up_date: Option<Expression>,
    /// The custom form key of a job-worker user task (sent as a job header).
    pub form_key: Option<String>,
    /// `zeebe:formDefinition externalReference` of a Camunda user task (static or FEEL).
    pub external_reference: Option<Expression>,
    /// `zeebe:priorityDefinition priority` of a Camunda user task: 0 to 100 (static or FEEL).
    pub priority: Option<Expression>,
    /// `zeebe:formDefinition formId`: a deployed form, linked by its id (latest version).
    pub form_id: Option<String>,
}

/// The `bpmn:message` an event or receive task refers to.
#[derive(Debug, Clone)]
pub struct MessageRef {
    /// The message name (static, or FEEL evaluated when the subscription opens).
    pub name: Expression,
    /// `zeebe:subscription correlationKey`: required where an instance waits for the message
    /// (catch events, receive tasks); unused on start events.
    pub correlation_key: Option<Expression>,
}

/// What an element does when the engine reaches it. One variant per element behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementKind {
    Process,
    NoneStartEvent,
    NoneEndEvent,
    /// A none intermediate throw event: passes through (a milestone in the record stream).
    NoneIntermediateThrowEvent,
    /// A task that creates a job for a worker (`zeebe:taskDefinition`): service, send, script
    /// and business rule tasks. `Element::element_type` says which.
    JobWorkerTask,
    /// A script task with `zeebe:script`: evaluates its FEEL expression, writes the result to
    /// its result variable and completes.
    ScriptTask,
    /// A business rule task with `zeebe:calledDecision`: evaluates the DMN decision, writes the
    /// result to its result variable and completes.
    BusinessRuleTask,
    /// A task without behaviour, completed as soon as it is activated: undefined task
    /// (`bpmn:task`) and manual task, as Zeebe runs them.
    PassThroughTask,
    ExclusiveGateway,
    ParallelGateway,
    TimerIntermediateCatchEvent,
    /// Waits for a message: a message intermediate catch event or a receive task
    /// (`Element::element_type` says which).
    MessageCatch,
    /// A start event with a message definition: a published message creates an instance.
    MessageStartEvent,
    /// An embedded sub-process: a scope whose none start event starts when it activates and
    /// that completes when no token is left in it. An event sub-process (element type
    /// EVENT_SUB_PROCESS) is one too; its start event is an `EventSubProcessStart`.
    SubProcess,
    /// A compensation boundary event: marks its activity as compensable once it completed
    /// (`Element::compensation_handler` is the activity that undoes it). Never subscribed to;
    /// a compensation throw event activates it, then its handler.
    CompensationBoundary,
    /// A compensation intermediate throw or end event: runs the compensation handlers of the
    /// completed activities of its scope (or of `Element::compensation_activity` only) and
    /// waits for them.
    CompensationThrowEvent,
    /// A boundary event (timer, message or error) attached to an activity
    /// (`Element::attached_to`); `Element::interrupting` says whether it terminates it.
    BoundaryEvent,
    /// An error end event: throws `Element::error_code` to the nearest error catch event.
    ErrorEndEvent,
    /// A signal intermediate catch event: waits for a broadcast of its signal.
    SignalCatch,
    /// A signal start event: a broadcast of its signal creates an instance.
    SignalStartEvent,
    /// A timer start event (timeDate, timeDuration or timeCycle, static): the timer, set when
    /// the process version is deployed, starts instances.
    TimerStartEvent,
    /// A signal intermediate throw or end event: broadcasts its signal (with the element's
    /// variables, or its input mappings' result) and passes on.
    SignalThrowEvent,
    /// A link intermediate throw event: completes and activates the link catch event of the
    /// same name in its scope (`Element::link_target`), without a sequence flow.
    LinkThrowEvent,
    /// A link intermediate catch event: reached from its throw event, passes through.
    LinkCatchEvent,
    /// An event-based gateway: waits for the first event of the catch events its flows lead
    /// to (messages, timers), then activates that catch event.
    EventBasedGateway,
    /// An inclusive gateway: forks to every flow whose condition holds (or the default one) and
    /// joins the tokens that can still arrive.
    InclusiveGateway,
    /// A terminate end event: once completed, terminates every other element instance in its
    /// scope, which then completes.
    TerminateEndEvent,
    /// Starts an instance of another process (`zeebe:calledElement`) and completes when it
    /// completes.
    CallActivity,
    /// An escalation intermediate throw or end event: throws `Element::escalation_code` to the
    /// nearest escalation boundary event of an enclosing sub-process or call activity, and
    /// goes on unless that boundary event interrupts its scope.
    EscalationThrowEvent,
    /// A Camunda user task (`zeebe:userTask`): creates a USER_TASK that people assign, update
    /// and complete through the REST API (`Element::user_task` holds its properties).
    UserTask,
    /// The start event of an event sub-process (`Element::event_type` says which event:
    /// message, timer, signal, error or escalation). Its event is subscribed to (or caught)
    /// on the event sub-process's flow scope; `Element::interrupting` says whether it
    /// terminates everything else in that scope first.
    EventSubProcessStart,
    /// An ad-hoc sub-process (`bpmn:adHocSubProcess`, `Element::ad_hoc`): on activation it
    /// activates the elements its `activeElementsCollection` names, each in an inner instance
    /// of its own, and completes by its completion condition or once every flow is done.
    AdHocSubProcess,
    /// The inner instance of an ad-hoc sub-process (`<id>#innerInstance`, element type
    /// AD_HOC_SUB_PROCESS_INNER_INSTANCE): not in the XML; the parser adds it as the flow
    /// scope of the ad-hoc sub-process's elements. Created by events, never by a command.
    AdHocInnerInstance,
}

#[derive(Debug, Clone)]
pub struct Element {
    pub id: String,
    pub name: Option<String>,
    pub kind: ElementKind,
    pub element_type: BpmnElementType,
    pub event_type: BpmnEventType,
    /// The enclosing scope (process or sub-process); `None` only for the process itself.
    pub flow_scope: Option<ElementIdx>,
    pub incoming: Vec<FlowIdx>,
    pub outgoing: Vec<FlowIdx>,
    /// `default` attribute of a gateway or activity.
    pub default_flow: Option<FlowIdx>,
    pub inputs: Vec<Mapping>,
    pub outputs: Vec<Mapping>,
    /// `zeebe:taskDefinition`: the job of a job worker task, or of an ad-hoc sub-process with
    /// the job worker implementation.
    pub task_definition: Option<TaskDefinition>,
    /// `zeebe:taskHeaders`, in document order.
    pub task_headers: Vec<(String, String)>,
    pub timer: Option<TimerDefinition>,
    /// `zeebe:script` of a script task.
    pub script: Option<Script>,
    /// The message of a message catch event, receive task or message start event.
    pub message: Option<MessageRef>,
    /// Start events directly inside this scope (for the process: its none start event).
    pub start_events: Vec<ElementIdx>,
    /// Message start events directly inside this scope (for the process only).
    pub message_start_events: Vec<ElementIdx>,
    /// The start events of the event sub-processes directly inside this scope (process or
    /// sub-process), in document order: subscribed to while the scope runs.
    pub event_sub_process_starts: Vec<ElementIdx>,
    /// The activity a boundary event is attached to.
    pub attached_to: Option<ElementIdx>,
    /// A boundary event's `cancelActivity`, an event sub-process start event's
    /// `isInterrupting` (true unless written false).
    pub interrupting: bool,
    /// Boundary events attached to this activity, in document order.
    pub boundary_events: Vec<ElementIdx>,
    /// The error code an error end event throws, or an error boundary event catches (`None`
    /// for an error boundary event: it catches every error).
    pub error_code: Option<String>,
    /// The escalation code an escalation throw event throws, or an escalation boundary event
    /// catches (`None` for a boundary event: it catches every escalation).
    pub escalation_code: Option<String>,
    /// The signal name of a signal event (static, or FEEL evaluated on activation).
    pub signal: Option<Expression>,
    /// The name of a link event (`bpmn:linkEventDefinition name`).
    pub link_name: Option<String>,
    /// A link throw event's catch event (same name, same scope).
    pub link_target: Option<ElementIdx>,
    /// A user task's properties: a Camunda user task's USER_TASK record, or what a job-worker
    /// user task tells its worker (sent as the job's custom headers).
    pub user_task: Option<UserTaskProps>,
    /// The process a call activity starts.
    pub called_element: Option<CalledElement>,
    /// The decision a business rule task evaluates.
    pub called_decision: Option<CalledDecision>,
    /// Multi-instance loop characteristics of an activity.
    pub multi_instance: Option<MultiInstance>,
    /// What an ad-hoc sub-process activates and when it completes.
    pub ad_hoc: Option<AdHoc>,
    /// The compensation boundary event attached to this activity.
    pub compensation_boundary: Option<ElementIdx>,
    /// The compensation handler (an activity with `isForCompensation`) a compensation
    /// boundary event is associated with.
    pub compensation_handler: Option<ElementIdx>,
    /// The activity a compensation throw event compensates (`activityRef`); `None`: every
    /// completed activity of its scope.
    pub compensation_activity: Option<String>,
    /// Whether this activity is a compensation handler (`isForCompensation="true"`): only a
    /// compensation throw event activates it.
    pub is_for_compensation: bool,
    /// `zeebe:executionListeners`, in document order (the order they run in).
    pub execution_listeners: Vec<ExecutionListener>,
    /// `zeebe:taskListeners` of a Camunda user task, in document order.
    pub task_listeners: Vec<TaskListener>,
    /// 1-based line of the element's start tag in the XML.
    pub line: u32,
}

impl Element {
    /// Whether an instance with element type `element_type` of this element is an inner
    /// instance of a multi-instance activity (its body has type MULTI_INSTANCE_BODY).
    pub fn is_inner_instance(&self, element_type: BpmnElementType) -> bool {
        self.multi_instance.is_some() && element_type != BpmnElementType::MultiInstanceBody
    }

    /// Whether an instance with element type `element_type` is this element's
    /// multi-instance body.
    pub fn is_body_instance(&self, element_type: BpmnElementType) -> bool {
        self.multi_instance.is_some() && element_type == BpmnElementType::MultiInstanceBody
    }

    /// The execution listeners of one event type, in the order they run.
    pub fn listeners(&self, event_type: ListenerEventType) -> Vec<&ExecutionListener> {
        self.execution_listeners
            .iter()
            .filter(|l| l.event_type == event_type)
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct SequenceFlow {
    pub id: String,
    pub source: ElementIdx,
    pub target: ElementIdx,
    pub condition: Option<Expression>,
    pub line: u32,
}

/// One executable process of a deployed resource.
#[derive(Debug, Clone)]
pub struct Process {
    pub id: String,
    pub name: Option<String>,
    /// `elements[0]` is the process itself.
    pub elements: Vec<Element>,
    pub flows: Vec<SequenceFlow>,
    pub by_id: foldhash::HashMap<String, ElementIdx>,
    /// Sequence flows by id.
    pub flows_by_id: foldhash::HashMap<String, FlowIdx>,
    /// Whether an activity has a compensation boundary event (so completions may create
    /// compensation subscriptions).
    pub uses_compensation: bool,
    /// Forms embedded in the model (`zeebe:userTaskForm`, how Camunda 8.0 to 8.2 kept forms),
    /// referred to as `camunda-forms:bpmn:<id>` by user tasks and the start event.
    pub embedded_forms: Vec<EmbeddedForm>,
    /// The form an instance starts with (`zeebe:formDefinition` on the none start event):
    /// Tasklist shows it to start the process.
    pub start_form: Option<StartForm>,
}

/// A `zeebe:userTaskForm`: its id and its form-js schema (JSON text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedForm {
    pub id: String,
    pub schema: String,
}

/// The prefix of a form key that names a form embedded in the model.
pub const EMBEDDED_FORM_PREFIX: &str = "camunda-forms:bpmn:";

/// How a start event names its form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartForm {
    /// `formId`: a deployed form, its latest version.
    Linked(String),
    /// `formKey`: `camunda-forms:bpmn:<id>` for an embedded form, or a custom key.
    Key(String),
    /// `externalReference`: a form hosted elsewhere.
    External(String),
}

impl Process {
    /// The schema of the embedded form a form key names, if it names one.
    pub fn embedded_form(&self, form_key: &str) -> Option<&EmbeddedForm> {
        let id = form_key.strip_prefix(EMBEDDED_FORM_PREFIX)?;
        self.embedded_forms.iter().find(|f| f.id == id)
    }
}

impl Process {
    pub const ROOT: ElementIdx = 0;

    pub fn element(&self, idx: ElementIdx) -> &Element {
        &self.elements[idx]
    }

    pub fn element_by_id(&self, id: &str) -> Option<(ElementIdx, &Element)> {
        self.by_id.get(id).map(|&i| (i, &self.elements[i]))
    }

    pub fn flow_by_id(&self, id: &str) -> Option<&SequenceFlow> {
        self.flows_by_id.get(id).map(|&i| &self.flows[i])
    }

    pub fn flow(&self, idx: FlowIdx) -> &SequenceFlow {
        &self.flows[idx]
    }
}

/// A problem found while parsing or validating a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub element_id: Option<String>,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.element_id {
            Some(id) => write!(f, "- Element: {id} (line {}): {}", self.line, self.message),
            None => write!(
                f,
                "- line {}, column {}: {}",
                self.line, self.column, self.message
            ),
        }
    }
}

/// Why a resource cannot be deployed; the message lists every problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub resource_name: String,
    pub problems: Vec<Problem>,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "'{}': {} problem(s) found:",
            self.resource_name,
            self.problems.len()
        )?;
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ModelError {}
