//! The `zeebe:` extensions of an element: scripts, job definitions, listeners, timers, user task
//! properties, forms, input/output mappings and headers.

use super::*;

impl<'c, 't, 'a, 'input> ProcessBuilder<'c, 't, 'a, 'input> {
    /// `zeebe:script` of a script task (Zeebe's rules: one of them, a FEEL expression, a
    /// result variable; no job definition beside it).
    pub(super) fn script(&mut self, id: &str, owner: Node, scripts: &[Node]) -> Option<Script> {
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

    pub(super) fn task_definition(
        &mut self,
        id: &str,
        owner: Node,
        defs: &[Node],
    ) -> Option<TaskDefinition> {
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
    pub(super) fn job_definition(&mut self, id: &str, def: Node) -> Option<TaskDefinition> {
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
    pub(super) fn execution_listeners(
        &mut self,
        id: &str,
        list: Node,
        out: &mut Vec<ExecutionListener>,
    ) {
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
    pub(super) fn task_listeners(&mut self, id: &str, list: Node, out: &mut Vec<TaskListener>) {
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
    pub(super) fn keep_listeners(
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
    pub(super) fn timer(
        &mut self,
        id: &str,
        def: Node,
        intermediate: bool,
    ) -> Option<TimerDefinition> {
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
    pub(super) fn link_name(&mut self, id: &str, def: Node) -> Option<String> {
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
    pub(super) fn user_task_props(
        &mut self,
        id: &str,
        nodes: &[Node],
        native: bool,
    ) -> UserTaskProps {
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
    pub(super) fn form_id(&mut self, id: &str, n: Node, form_id: &str) -> Option<String> {
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
    pub(super) fn static_start_timer(
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
    pub(super) fn embedded_forms(&mut self, id: &str, nodes: &[Node]) -> Vec<EmbeddedForm> {
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
    pub(super) fn start_form_of(&mut self, id: &str, nodes: &[Node]) -> Option<StartForm> {
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
    pub(super) fn extensions(
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
    pub(super) fn io_mapping(
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

    pub(super) fn headers(&mut self, id: &str, list: Node, out: &mut Vec<(String, String)>) {
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
}
