// Prints the record stream the real Zeebe engine writes for a scenario, one line per record, so
// Zest's record order can be checked against Zeebe's (the oracle of issue 3). Run it with the
// classpath of ../shared/anchors/zeebe (see tests/anchor/dump.sh).
//
// Steps (arguments, in order):
//   deploy FILE                 deploy a BPMN or DMN file
//   create PROCESS_ID [JSON]    create an instance
//   complete TYPE [JSON]        activate and complete every job of TYPE, oldest first
//   fail TYPE RETRIES           activate and fail every job of TYPE
//   throw TYPE CODE [MESSAGE]   activate the jobs of TYPE and throw an error from each
//   publish NAME KEY [JSON]     publish a message (time to live 1 h)
//   signal NAME [JSON]          broadcast a signal
//   time DURATION               advance the engine's clock (ISO 8601, e.g. PT1M)
//   cancel                      cancel the instance created last
//   resolve                     resolve every open incident, oldest first
//   usertask OP ELEMENT [ARG]   a command on the newest Camunda user task of ELEMENT, written to
//                               the log as Zeebe's REST gateway writes it (the test engine has no
//                               REST API): OP is complete [JSON], assign USER, claim USER,
//                               unassign, or update JSON (changed attributes)
//   adhocjob TYPE JSON          complete every open ad-hoc sub-process job of TYPE (activated or
//                               not) with an ad-hoc result, written to the log as the gateway does
//                               (the 8.8 client of the test engine sends no result type): JSON is
//                               {"activate":[{"elementId":"A","variables":{..}}],"done":bool,
//                               "cancel":bool,"variables":{..}}
//   tljob TYPE JSON             complete every open task listener job of TYPE with a user task
//                               result, written to the log as the gateway does: JSON is
//                               {"denied":bool,"deniedReason":"..","corrections":{"assignee":..,
//                               "dueDate":..,"followUpDate":..,"candidateUsers":[..],
//                               "candidateGroups":[..],"priority":N},"variables":{..}}
//   adhocactivate ELEMENT JSON  AD_HOC_SUB_PROCESS_INSTRUCTION ACTIVATE on the active instance of
//                               the ad-hoc sub-process ELEMENT, as the REST API writes it: JSON is
//                               {"activate":[{"elementId":"A","variables":{..}}],"cancel":bool}
import io.camunda.zeebe.client.ZeebeClient;
import io.camunda.zeebe.process.test.api.ZeebeTestEngine;
import io.camunda.zeebe.process.test.engine.EngineFactory;
import io.camunda.zeebe.protocol.record.Record;
import io.camunda.zeebe.protocol.record.RecordType;
import io.camunda.zeebe.protocol.record.value.*;
import io.camunda.zeebe.protocol.record.value.deployment.DecisionRecordValue;
import io.camunda.zeebe.protocol.record.value.deployment.DecisionRequirementsRecordValue;
import java.time.Duration;

public final class RecordDump {
  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable e) {
      // the engine's threads would keep the JVM alive: say why and exit
      System.out.println("FAILED: " + e);
      System.exit(1);
    }
  }

  private static void run(String[] args) throws Exception {
    ZeebeTestEngine engine = EngineFactory.create();
    engine.start();
    ZeebeClient client = engine.createClient();
    long lastInstance = -1;
    boolean scopes = false;
    for (int i = 0; i < args.length; ) {
      String step = args[i++];
      switch (step) {
        case "deploy" -> client.newDeployResourceCommand().addResourceFile(args[i++]).send().join();
        case "create" -> {
          var c = client.newCreateInstanceCommand().bpmnProcessId(args[i++]).latestVersion();
          if (i < args.length && args[i].startsWith("{")) c = c.variables(args[i++]);
          lastInstance = c.send().join().getProcessInstanceKey();
        }
        case "cancel" -> client.newCancelInstanceCommand(lastInstance).send().join();
        case "complete", "fail", "throw" -> {
          String type = args[i++];
          String extra = i < args.length ? args[i] : null;
          var jobs = client.newActivateJobsCommand().jobType(type).maxJobsToActivate(100).send().join().getJobs()
              .stream().sorted(java.util.Comparator.comparingLong(j -> j.getKey())).toList();
          if (step.equals("throw") || step.equals("fail")) i++;
          String msg = step.equals("throw") && i < args.length && !isStep(args[i]) ? args[i++] : null;
          String vars = step.equals("complete") && extra != null && extra.startsWith("{") ? args[i++] : null;
          for (var job : jobs) {
            switch (step) {
              case "complete" -> { var c = client.newCompleteCommand(job.getKey()); if (vars != null) c = c.variables(vars); c.send().join(); }
              case "fail" -> client.newFailCommand(job.getKey()).retries(Integer.parseInt(extra)).send().join();
              default -> { var c = client.newThrowErrorCommand(job.getKey()).errorCode(extra); if (msg != null) c = c.errorMessage(msg); c.send().join(); }
            }
          }
        }
        case "publish" -> {
          var c = client.newPublishMessageCommand().messageName(args[i++]).correlationKey(args[i++]).timeToLive(Duration.ofHours(1));
          if (i < args.length && args[i].startsWith("{")) c.variables(args[i++]);
          c.send().join();
        }
        case "signal" -> {
          var c = client.newBroadcastSignalCommand().signalName(args[i++]);
          if (i < args.length && args[i].startsWith("{")) c.variables(args[i++]);
          c.send().join();
        }
        case "time" -> engine.increaseTime(Duration.parse(args[i++]));
        case "resolve" -> {
          var open = new java.util.TreeSet<Long>();
          for (Record<?> r : engine.getRecordStreamSource().getRecords()) {
            if (r.getValueType() != io.camunda.zeebe.protocol.record.ValueType.INCIDENT || r.getRecordType() != RecordType.EVENT) continue;
            if (r.getIntent() == io.camunda.zeebe.protocol.record.intent.IncidentIntent.CREATED) open.add(r.getKey());
            else if (r.getIntent() == io.camunda.zeebe.protocol.record.intent.IncidentIntent.RESOLVED) open.remove(r.getKey());
          }
          for (long key : open) client.newResolveIncidentCommand(key).send().join();
        }
        case "retries" -> {
          // retries TYPE N : updates the retries of the open jobs of that type
          String type = args[i++];
          int n = Integer.parseInt(args[i++]);
          for (long key : openJobs(engine, type)) client.newUpdateRetriesCommand(key).retries(n).send().join();
        }
        case "usertask" -> {
          String op = args[i++];
          String element = args[i++];
          String arg = i < args.length && !isStep(args[i]) ? args[i++] : null;
          userTaskCommand(engine, op, element, arg);
        }
        case "adhocjob" -> {
          String type = args[i++];
          String json = args[i++];
          for (long key : openJobs(engine, type)) adHocJobResult(engine, key, json);
        }
        case "tljob" -> {
          String type = args[i++];
          String json = args[i++];
          for (long key : openJobs(engine, type)) taskListenerResult(engine, key, json);
        }
        case "adhocactivate" -> {
          String element = args[i++];
          var spec = new com.fasterxml.jackson.databind.ObjectMapper().readTree(args[i++]);
          long key = activeInstances(engine, lastInstance).get(element).get(0);
          var record = new io.camunda.zeebe.protocol.impl.record.value.adhocsubprocess.AdHocSubProcessInstructionRecord()
              .setAdHocSubProcessInstanceKey(key)
              .setCancelRemainingInstances(spec.path("cancel").asBoolean(false));
          for (var a : spec.path("activate")) {
            var e = record.activateElements().add().setElementId(a.get("elementId").asText());
            if (a.has("variables")) e.setVariables(new org.agrona.concurrent.UnsafeBuffer(
                io.camunda.zeebe.protocol.impl.encoding.MsgPackConverter.convertToMsgPack(a.get("variables").toString())));
          }
          writeCommand(engine, key, record, io.camunda.zeebe.protocol.record.ValueType.AD_HOC_SUB_PROCESS_INSTRUCTION,
              io.camunda.zeebe.protocol.record.intent.AdHocSubProcessInstructionIntent.ACTIVATE);
        }
        case "modify" -> {
          // modify +ELEMENT[={"var":1}];-ELEMENT : activate elements (with global variables) and
          // terminate the active instances of elements, in one command
          var open = activeInstances(engine, lastInstance);
          var first = client.newModifyProcessInstanceCommand(lastInstance);
          io.camunda.zeebe.client.api.command.ModifyProcessInstanceCommandStep1.ModifyProcessInstanceCommandStep2 cmd = null;
          for (String item : args[i++].split(";")) {
            String id = item.substring(1);
            String vars = null;
            int eq = id.indexOf('=');
            if (eq >= 0) { vars = id.substring(eq + 1); id = id.substring(0, eq); }
            var base = cmd == null ? first : cmd.and();
            if (item.startsWith("+")) {
              var a = base.activateElement(id);
              cmd = vars == null ? a : a.withVariables(vars);
            } else {
              var keys = open.getOrDefault(id, java.util.List.of(-1L));
              for (long key : keys) cmd = (cmd == null ? first : cmd.and()).terminateElement(key);
            }
          }
          try { cmd.send().join(); } catch (Exception e) { /* the rejection is in the log */ }
        }
        case "delete" -> {
          // delete PROCESS_ID : deletes the latest version of the process
          String id = args[i++];
          long key = -1;
          // (or of the decision requirements graph, or the form, with that id)
          for (Record<?> r : engine.getRecordStreamSource().getRecords()) {
            if (r.getRecordType() != RecordType.EVENT || r.getIntent().name().equals("DELETED")) continue;
            if (r.getValue() instanceof io.camunda.zeebe.protocol.record.value.deployment.Process p
                && p.getBpmnProcessId().equals(id)) key = p.getProcessDefinitionKey();
            if (r.getValue() instanceof DecisionRequirementsRecordValue d
                && d.getDecisionRequirementsId().equals(id)) key = d.getDecisionRequirementsKey();
            if (r.getValue() instanceof io.camunda.zeebe.protocol.record.value.deployment.Form f
                && f.getFormId().equals(id)) key = f.getFormKey();
          }
          try { client.newDeleteResourceCommand(key).send().join(); } catch (Exception e) { /* rejected */ }
        }
        case "migrate" -> {
          // migrate PROCESS_ID SOURCE=TARGET[;SOURCE=TARGET] : migrates the last instance to the
          // latest version of the process, with those mapping instructions
          String id = args[i++];
          String mappings = args[i++];
          long key = -1;
          for (Record<?> r : engine.getRecordStreamSource().getRecords()) {
            if (r.getValue() instanceof io.camunda.zeebe.protocol.record.value.deployment.Process p
                && r.getRecordType() == RecordType.EVENT && p.getBpmnProcessId().equals(id)) key = p.getProcessDefinitionKey();
          }
          var plan = client.newMigrateProcessInstanceCommand(lastInstance).migrationPlan(key);
          io.camunda.zeebe.client.api.command.MigrateProcessInstanceCommandStep1.MigrateProcessInstanceCommandFinalStep cmd = null;
          for (String m : mappings.split(";")) {
            String[] st = m.split("=");
            cmd = cmd == null ? plan.addMappingInstruction(st[0], st[1]) : cmd.addMappingInstruction(st[0], st[1]);
          }
          try { cmd.send().join(); } catch (Exception e) { /* the rejection is in the log */ }
        }
        // VARIABLE lines name their scope ("@" and the element id of the scope)
        case "scopes" -> scopes = true;
        default -> throw new IllegalArgumentException("unknown step " + step);
      }
      engine.waitForIdleState(Duration.ofSeconds(10));
    }
    var elementIds = new java.util.HashMap<Long, String>();
    for (Record<?> r : engine.getRecordStreamSource().getRecords()) {
      if (r.getValue() instanceof ProcessInstanceRecordValue p) elementIds.put(r.getKey(), p.getElementId());
    }
    for (Record<?> r : engine.getRecordStreamSource().getRecords()) {
      String vt = r.getValueType().name();
      if (!java.util.Set.of("PROCESS_INSTANCE", "PROCESS_INSTANCE_CREATION", "JOB", "JOB_BATCH", "TIMER",
          "INCIDENT", "VARIABLE", "VARIABLE_DOCUMENT", "PROCESS_EVENT", "MESSAGE", "MESSAGE_BATCH",
          "MESSAGE_SUBSCRIPTION", "PROCESS_MESSAGE_SUBSCRIPTION", "MESSAGE_START_EVENT_SUBSCRIPTION",
          "SIGNAL", "SIGNAL_SUBSCRIPTION", "ERROR", "ESCALATION", "DECISION_EVALUATION",
          "PROCESS_INSTANCE_MODIFICATION", "PROCESS_INSTANCE_MIGRATION", "RESOURCE_DELETION", "USER_TASK", "AD_HOC_SUB_PROCESS_INSTRUCTION", "COMPENSATION_SUBSCRIPTION", "DECISION", "DECISION_REQUIREMENTS", "FORM").contains(vt)) continue;
      String kind = switch (r.getRecordType()) { case COMMAND -> "C"; case EVENT -> "E"; default -> "R"; };
      String detail = "";
      Object v = r.getValue();
      if (v instanceof ProcessInstanceRecordValue p) detail = p.getElementId() + " " + p.getBpmnElementType() + " " + p.getBpmnEventType();
      else if (v instanceof JobRecordValue j) {
        detail = j.getElementId() + " " + j.getType();
        if (j.getJobKind() == JobKind.AD_HOC_SUB_PROCESS) {
          detail += " kind=AD_HOC_SUB_PROCESS retries=" + j.getRetries() + " headers=" + j.getCustomHeaders();
          var res = j.getResult();
          if (res != null && res.getType() == JobResultType.AD_HOC_SUB_PROCESS) {
            detail += " result=[";
            for (var a : res.getActivateElements()) detail += a.getElementId() + a.getVariables() + ";";
            detail += "] done=" + res.isCompletionConditionFulfilled() + " cancel=" + res.isCancelRemainingInstances();
          }
        }
      }
      else if (v instanceof TimerRecordValue t) detail = t.getTargetElementId();
      else if (v instanceof IncidentRecordValue n) detail = n.getElementId() + " " + n.getErrorType() + " " + n.getErrorMessage();
      else if (v instanceof VariableRecordValue x) detail = x.getName() + "=" + x.getValue()
          + (scopes ? " @" + elementIds.getOrDefault(x.getScopeKey(), "?") : "");
      else if (v instanceof ProcessEventRecordValue e) detail = e.getTargetElementId();
      else if (v instanceof ProcessMessageSubscriptionRecordValue s) detail = s.getElementId() + " " + s.getMessageName();
      else if (v instanceof MessageSubscriptionRecordValue s) detail = s.getMessageName();
      else if (v instanceof SignalSubscriptionRecordValue s) detail = s.getSignalName() + " " + s.getCatchEventId();
      else if (v instanceof io.camunda.zeebe.protocol.record.value.deployment.Form f) detail = f.getFormId() + " v" + f.getVersion();
      else if (v instanceof CompensationSubscriptionRecordValue c) detail = c.getCompensableActivityId()
          + " throw=" + c.getThrowEventId() + " handler=" + c.getCompensationHandlerId();
      else if (v instanceof ErrorRecordValue e) detail = e.getExceptionMessage();
      else if (v instanceof UserTaskRecordValue u) detail = u.getElementId() + " assignee=" + u.getAssignee()
          + " candidateGroups=" + u.getCandidateGroupsList() + " candidateUsers=" + u.getCandidateUsersList()
          + " dueDate=" + u.getDueDate() + " followUpDate=" + u.getFollowUpDate() + " priority=" + u.getPriority()
          + " formKey=" + (u.getFormKey() > 0 ? "<key>" : "-1") + " externalForm=" + u.getExternalFormReference()
          + " changed=" + u.getChangedAttributes() + " action=" + u.getAction();
      else if (v instanceof DecisionRecordValue d) detail = d.getDecisionId() + " " + d.getDecisionName() + " v" + d.getVersion()
          + " drg=" + d.getDecisionRequirementsId() + " duplicate=" + d.isDuplicate();
      else if (v instanceof DecisionRequirementsRecordValue d) detail = d.getDecisionRequirementsId() + " " + d.getDecisionRequirementsName()
          + " v" + d.getDecisionRequirementsVersion() + " " + d.getResourceName() + " duplicate=" + d.isDuplicate();
      else if (v instanceof DecisionEvaluationRecordValue d) {
        StringBuilder b = new StringBuilder(d.getDecisionId() + " v" + d.getDecisionVersion() + " drg=" + d.getDecisionRequirementsId()
            + " element=" + d.getElementId() + " output=" + d.getDecisionOutput());
        if (!d.getFailedDecisionId().isEmpty()) b.append(" failed=" + d.getFailedDecisionId() + " message=" + d.getEvaluationFailureMessage());
        for (var e : d.getEvaluatedDecisions()) {
          b.append(" [" + e.getDecisionId() + " " + e.getDecisionName() + " " + e.getDecisionType() + " output=" + e.getDecisionOutput() + " inputs=");
          for (var in : e.getEvaluatedInputs()) b.append(in.getInputId() + "(" + in.getInputName() + ")=" + in.getInputValue() + ";");
          b.append(" rules=");
          for (var m : e.getMatchedRules()) {
            b.append(m.getRuleId() + "#" + m.getRuleIndex() + "{");
            for (var o : m.getEvaluatedOutputs()) b.append(o.getOutputId() + "(" + o.getOutputName() + ")=" + o.getOutputValue() + ";");
            b.append("}");
          }
          b.append("]");
        }
        detail = b.toString();
      }
      if (r.getRecordType() == RecordType.COMMAND_REJECTION) detail += " | " + r.getRejectionType() + ": " + r.getRejectionReason();
      System.out.printf("%s %s %s %s%n", kind, vt, r.getIntent().name(), detail);
    }
    client.close();
    engine.stop();
    System.exit(0);
  }

  // The jobs of a type that were created and are not completed or canceled, oldest first.
  private static java.util.TreeSet<Long> openJobs(ZeebeTestEngine engine, String type) {
    var open = new java.util.TreeSet<Long>();
    for (Record<?> r : engine.getRecordStreamSource().getRecords()) {
      if (r.getValueType() != io.camunda.zeebe.protocol.record.ValueType.JOB || r.getRecordType() != RecordType.EVENT) continue;
      if (!((JobRecordValue) r.getValue()).getType().equals(type)) continue;
      if (r.getIntent() == io.camunda.zeebe.protocol.record.intent.JobIntent.CREATED) open.add(r.getKey());
      else if (r.getIntent() == io.camunda.zeebe.protocol.record.intent.JobIntent.COMPLETED
          || r.getIntent() == io.camunda.zeebe.protocol.record.intent.JobIntent.CANCELED) open.remove(r.getKey());
    }
    return open;
  }

  // The element instances of a process instance that are still active, by element id.
  private static java.util.Map<String, java.util.List<Long>> activeInstances(ZeebeTestEngine engine, long processInstance) {
    var open = new java.util.LinkedHashMap<Long, String>();
    for (Record<?> r : engine.getRecordStreamSource().getRecords()) {
      if (r.getRecordType() != RecordType.EVENT || !(r.getValue() instanceof ProcessInstanceRecordValue p)) continue;
      if (p.getProcessInstanceKey() != processInstance) continue;
      switch (r.getIntent().name()) {
        case "ELEMENT_ACTIVATING" -> open.put(r.getKey(), p.getElementId());
        case "ELEMENT_COMPLETED", "ELEMENT_TERMINATED" -> open.remove(r.getKey());
        default -> {}
      }
    }
    var out = new java.util.HashMap<String, java.util.List<Long>>();
    open.forEach((k, id) -> out.computeIfAbsent(id, x -> new java.util.ArrayList<>()).add(k));
    return out;
  }

  private static boolean isStep(String s) {
    return switch (s) { case "deploy", "create", "complete", "fail", "throw", "publish", "signal", "time", "cancel", "usertask", "resolve", "modify", "delete", "retries", "migrate", "scopes", "adhocjob", "adhocactivate", "tljob" -> true; default -> false; };
  }

  // Writes a USER_TASK command the way Camunda's REST gateway does (UserTaskServices): the test
  // engine only speaks gRPC, so the command goes to its log writer directly.
  private static void userTaskCommand(ZeebeTestEngine engine, String op, String element, String arg) throws Exception {
    long key = -1;
    for (Record<?> r : engine.getRecordStreamSource().getRecords()) {
      if (r.getValueType() == io.camunda.zeebe.protocol.record.ValueType.USER_TASK
          && r.getIntent() == io.camunda.zeebe.protocol.record.intent.UserTaskIntent.CREATED
          && ((UserTaskRecordValue) r.getValue()).getElementId().equals(element)) key = r.getKey();
    }
    if (key < 0) throw new IllegalStateException("no user task created for " + element);
    var record = new io.camunda.zeebe.protocol.impl.record.value.usertask.UserTaskRecord().setUserTaskKey(key);
    io.camunda.zeebe.protocol.record.intent.UserTaskIntent intent;
    switch (op) {
      case "complete" -> {
        intent = io.camunda.zeebe.protocol.record.intent.UserTaskIntent.COMPLETE;
        record.setAction("complete");
        if (arg != null) record.setVariables(new org.agrona.concurrent.UnsafeBuffer(
            io.camunda.zeebe.protocol.impl.encoding.MsgPackConverter.convertToMsgPack(arg)));
      }
      case "assign" -> { intent = io.camunda.zeebe.protocol.record.intent.UserTaskIntent.ASSIGN; record.setAssignee(arg).setAction("assign"); }
      case "claim" -> { intent = io.camunda.zeebe.protocol.record.intent.UserTaskIntent.CLAIM; record.setAssignee(arg).setAction("claim"); }
      case "unassign" -> { intent = io.camunda.zeebe.protocol.record.intent.UserTaskIntent.ASSIGN; record.setAssignee("").setAction("unassign"); }
      case "update" -> {
        intent = io.camunda.zeebe.protocol.record.intent.UserTaskIntent.UPDATE;
        record.setAction("update");
        var changes = new com.fasterxml.jackson.databind.ObjectMapper().readTree(arg);
        if (changes.has("dueDate")) record.setDueDate(changes.get("dueDate").asText()).setDueDateChanged();
        if (changes.has("followUpDate")) record.setFollowUpDate(changes.get("followUpDate").asText()).setFollowUpDateChanged();
        if (changes.has("priority")) record.setPriority(changes.get("priority").asInt()).setPriorityChanged();
        if (changes.has("candidateGroups")) {
          var l = new java.util.ArrayList<String>(); changes.get("candidateGroups").forEach(n -> l.add(n.asText()));
          record.setCandidateGroupsList(l).setCandidateGroupsChanged();
        }
        if (changes.has("candidateUsers")) {
          var l = new java.util.ArrayList<String>(); changes.get("candidateUsers").forEach(n -> l.add(n.asText()));
          record.setCandidateUsersList(l).setCandidateUsersChanged();
        }
      }
      default -> throw new IllegalArgumentException("unknown user task op " + op);
    }
    writeCommand(engine, key, record, io.camunda.zeebe.protocol.record.ValueType.USER_TASK, intent);
  }

  // Completes an ad-hoc sub-process job with a result of type AD_HOC_SUB_PROCESS (see adhocjob).
  private static void adHocJobResult(ZeebeTestEngine engine, long key, String json) throws Exception {
    var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
    var spec = mapper.readTree(json);
    var result = new io.camunda.zeebe.protocol.impl.record.value.job.JobResult().setType(JobResultType.AD_HOC_SUB_PROCESS);
    if (spec.has("activate")) {
      for (var a : spec.get("activate")) {
        var e = new io.camunda.zeebe.protocol.impl.record.value.job.JobResultActivateElement().setElementId(a.get("elementId").asText());
        if (a.has("variables")) e.setVariables(new org.agrona.concurrent.UnsafeBuffer(
            io.camunda.zeebe.protocol.impl.encoding.MsgPackConverter.convertToMsgPack(a.get("variables").toString())));
        result.addActivateElement(e);
      }
    }
    result.setCompletionConditionFulfilled(spec.path("done").asBoolean(false));
    result.setCancelRemainingInstances(spec.path("cancel").asBoolean(false));
    var record = new io.camunda.zeebe.protocol.impl.record.value.job.JobRecord().setResult(result);
    if (spec.has("variables")) record.setVariables(new org.agrona.concurrent.UnsafeBuffer(
        io.camunda.zeebe.protocol.impl.encoding.MsgPackConverter.convertToMsgPack(spec.get("variables").toString())));
    writeCommand(engine, key, record, io.camunda.zeebe.protocol.record.ValueType.JOB,
        io.camunda.zeebe.protocol.record.intent.JobIntent.COMPLETE);
  }

  // Completes a task listener job with a result of type USER_TASK (see tljob): the corrected
  // attributes are the corrections given, as the gateway lists them.
  private static void taskListenerResult(ZeebeTestEngine engine, long key, String json) throws Exception {
    var spec = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json);
    var result = new io.camunda.zeebe.protocol.impl.record.value.job.JobResult().setType(JobResultType.USER_TASK);
    result.setDenied(spec.path("denied").asBoolean(false));
    if (spec.has("deniedReason")) result.setDeniedReason(spec.get("deniedReason").asText());
    var c = spec.path("corrections");
    var corrections = new io.camunda.zeebe.protocol.impl.record.value.job.JobResultCorrections();
    var corrected = new java.util.ArrayList<String>();
    if (c.has("assignee")) { corrections.setAssignee(c.get("assignee").asText()); corrected.add("assignee"); }
    if (c.has("dueDate")) { corrections.setDueDate(c.get("dueDate").asText()); corrected.add("dueDate"); }
    if (c.has("followUpDate")) { corrections.setFollowUpDate(c.get("followUpDate").asText()); corrected.add("followUpDate"); }
    if (c.has("candidateUsers")) {
      var l = new java.util.ArrayList<String>(); c.get("candidateUsers").forEach(n -> l.add(n.asText()));
      corrections.setCandidateUsersList(l); corrected.add("candidateUsersList");
    }
    if (c.has("candidateGroups")) {
      var l = new java.util.ArrayList<String>(); c.get("candidateGroups").forEach(n -> l.add(n.asText()));
      corrections.setCandidateGroupsList(l); corrected.add("candidateGroupsList");
    }
    if (c.has("priority")) { corrections.setPriority(c.get("priority").asInt()); corrected.add("priority"); }
    result.setCorrections(corrections).setCorrectedAttributes(corrected);
    var record = new io.camunda.zeebe.protocol.impl.record.value.job.JobRecord().setResult(result);
    if (spec.has("variables")) record.setVariables(new org.agrona.concurrent.UnsafeBuffer(
        io.camunda.zeebe.protocol.impl.encoding.MsgPackConverter.convertToMsgPack(spec.get("variables").toString())));
    writeCommand(engine, key, record, io.camunda.zeebe.protocol.record.ValueType.JOB,
        io.camunda.zeebe.protocol.record.intent.JobIntent.COMPLETE);
  }

  private static void writeCommand(ZeebeTestEngine engine, long key,
      io.camunda.zeebe.protocol.impl.record.UnifiedRecordValue record,
      io.camunda.zeebe.protocol.record.ValueType valueType,
      io.camunda.zeebe.protocol.record.intent.Intent intent) throws Exception {
    var metadata = new io.camunda.zeebe.protocol.impl.record.RecordMetadata()
        .recordType(RecordType.COMMAND)
        .valueType(valueType)
        .intent(intent);
    var gatewayField = engine.getClass().getDeclaredField("gateway");
    gatewayField.setAccessible(true);
    Object gateway = gatewayField.get(engine);
    var writerField = gateway.getClass().getDeclaredField("writer");
    writerField.setAccessible(true);
    Object writer = writerField.get(gateway);
    var write = writer.getClass().getDeclaredMethod("writeCommandWithKey", Long.class,
        io.camunda.zeebe.protocol.impl.record.UnifiedRecordValue.class,
        io.camunda.zeebe.protocol.impl.record.RecordMetadata.class);
    write.setAccessible(true);
    write.invoke(writer, key, record, metadata);
  }
}
