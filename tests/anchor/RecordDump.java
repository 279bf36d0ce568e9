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
import io.camunda.zeebe.client.ZeebeClient;
import io.camunda.zeebe.process.test.api.ZeebeTestEngine;
import io.camunda.zeebe.process.test.engine.EngineFactory;
import io.camunda.zeebe.protocol.record.Record;
import io.camunda.zeebe.protocol.record.RecordType;
import io.camunda.zeebe.protocol.record.value.*;
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
        default -> throw new IllegalArgumentException("unknown step " + step);
      }
      engine.waitForIdleState(Duration.ofSeconds(10));
    }
    for (Record<?> r : engine.getRecordStreamSource().getRecords()) {
      String vt = r.getValueType().name();
      if (!java.util.Set.of("PROCESS_INSTANCE", "PROCESS_INSTANCE_CREATION", "JOB", "JOB_BATCH", "TIMER",
          "INCIDENT", "VARIABLE", "VARIABLE_DOCUMENT", "PROCESS_EVENT", "MESSAGE", "MESSAGE_BATCH",
          "MESSAGE_SUBSCRIPTION", "PROCESS_MESSAGE_SUBSCRIPTION", "MESSAGE_START_EVENT_SUBSCRIPTION",
          "SIGNAL", "SIGNAL_SUBSCRIPTION", "ERROR", "ESCALATION", "DECISION_EVALUATION",
          "PROCESS_INSTANCE_MODIFICATION", "USER_TASK", "COMPENSATION_SUBSCRIPTION").contains(vt)) continue;
      String kind = switch (r.getRecordType()) { case COMMAND -> "C"; case EVENT -> "E"; default -> "R"; };
      String detail = "";
      Object v = r.getValue();
      if (v instanceof ProcessInstanceRecordValue p) detail = p.getElementId() + " " + p.getBpmnElementType() + " " + p.getBpmnEventType();
      else if (v instanceof JobRecordValue j) detail = j.getElementId() + " " + j.getType();
      else if (v instanceof TimerRecordValue t) detail = t.getTargetElementId();
      else if (v instanceof IncidentRecordValue n) detail = n.getElementId() + " " + n.getErrorType() + " " + n.getErrorMessage();
      else if (v instanceof VariableRecordValue x) detail = x.getName() + "=" + x.getValue();
      else if (v instanceof ProcessEventRecordValue e) detail = e.getTargetElementId();
      else if (v instanceof ProcessMessageSubscriptionRecordValue s) detail = s.getElementId() + " " + s.getMessageName();
      else if (v instanceof MessageSubscriptionRecordValue s) detail = s.getMessageName();
      else if (v instanceof SignalSubscriptionRecordValue s) detail = s.getSignalName() + " " + s.getCatchEventId();
      else if (v instanceof ErrorRecordValue e) detail = e.getExceptionMessage();
      if (r.getRecordType() == RecordType.COMMAND_REJECTION) detail += " | " + r.getRejectionType() + ": " + r.getRejectionReason();
      System.out.printf("%s %s %s %s%n", kind, vt, r.getIntent().name(), detail);
    }
    client.close();
    engine.stop();
    System.exit(0);
  }

  private static boolean isStep(String s) {
    return switch (s) { case "deploy", "create", "complete", "fail", "throw", "publish", "signal", "time", "cancel" -> true; default -> false; };
  }
}
