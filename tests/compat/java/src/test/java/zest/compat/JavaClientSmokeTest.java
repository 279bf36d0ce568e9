package zest.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.camunda.zeebe.client.ZeebeClient;
import io.camunda.zeebe.client.api.command.ClientStatusException;
import io.camunda.zeebe.client.api.response.ActivateJobsResponse;
import io.camunda.zeebe.client.api.response.ActivatedJob;
import io.camunda.zeebe.client.api.response.DeploymentEvent;
import io.camunda.zeebe.client.api.response.PartitionBrokerRole;
import io.camunda.zeebe.client.api.response.PartitionInfo;
import io.camunda.zeebe.client.api.response.Process;
import io.camunda.zeebe.client.api.response.ProcessInstanceEvent;
import io.camunda.zeebe.client.api.response.ProcessInstanceResult;
import io.camunda.zeebe.client.api.response.Topology;
import io.camunda.zeebe.client.api.worker.JobClient;
import io.camunda.zeebe.client.api.worker.JobWorker;
import io.grpc.Status;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * Smoke test of a Zeebe gateway (Zest) with the official Zeebe Java client 8.6, over gRPC in
 * plaintext, at ZEEBE_ADDRESS (host:port). Steps run in order and share one deployment and one
 * polling JobWorker; every call is bounded (the whole class takes a few seconds).
 *
 * <p>The job handler dispatches on the instance variable {@code case}: "ok" completes with
 * variables, "fail" fails with retries 0 (or completes once {@code fail} was set to false), "hold"
 * only records the job (for the cancel step). Jobs of other processes (a persistent server may hold
 * some from earlier runs) are left alone.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class JavaClientSmokeTest {

  static final String JOB_TYPE = "java-smoke";
  static final Duration CALL = Duration.ofSeconds(10);
  /** A key nobody handed out: partition 1, counter 999,999,999. */
  static final long UNKNOWN_KEY = (1L << 51) + 999_999_999L;

  final String runId = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  final String processId = "java_smoke_" + runId;

  ZeebeClient client;
  JobWorker worker;

  final List<Throwable> handlerErrors = Collections.synchronizedList(new ArrayList<>());
  final CompletableFuture<ActivatedJob> okJob = new CompletableFuture<>();
  final CompletableFuture<ActivatedJob> failedJob = new CompletableFuture<>();
  final CompletableFuture<ActivatedJob> recoveredJob = new CompletableFuture<>();
  final CompletableFuture<ActivatedJob> heldJob = new CompletableFuture<>();

  long deployedDefinitionKey;

  @BeforeAll
  void connect() {
    String address = System.getenv("ZEEBE_ADDRESS");
    if (address == null || address.isBlank()) {
      fail("set ZEEBE_ADDRESS=host:port of a Zeebe gateway (plaintext gRPC)");
    }
    client =
        ZeebeClient.newClientBuilder()
            .applyEnvironmentVariableOverrides(false)
            .grpcAddress(URI.create("http://" + address))
            .usePlaintext()
            .defaultRequestTimeout(CALL)
            .build();
    // Default worker settings (polling ActivateJobs, no job streaming), only type + handler + name.
    worker =
        client
            .newWorker()
            .jobType(JOB_TYPE)
            .handler(this::handle)
            .name("java-smoke-worker")
            .open();
  }

  @AfterAll
  void close() {
    if (worker != null) worker.close();
    if (client != null) client.close();
  }

  void handle(JobClient jobClient, ActivatedJob job) {
    if (!processId.equals(job.getBpmnProcessId())) {
      return; // a job of another run: not ours
    }
    try {
      Map<String, Object> vars = job.getVariablesAsMap();
      String c = String.valueOf(vars.get("case"));
      switch (c) {
        case "ok" -> {
          int x = ((Number) vars.get("x")).intValue();
          jobClient
              .newCompleteCommand(job)
              .variables(Map.of("doubled", x * 2, "note", "done by java"))
              .send()
              .join(10, TimeUnit.SECONDS);
          okJob.complete(job);
        }
        case "fail" -> {
          if (Boolean.TRUE.equals(vars.get("fail"))) {
            jobClient
                .newFailCommand(job)
                .retries(0)
                .errorMessage("boom")
                .send()
                .join(10, TimeUnit.SECONDS);
            failedJob.complete(job);
          } else {
            jobClient
                .newCompleteCommand(job)
                .variables(Map.of("doubled", -1))
                .send()
                .join(10, TimeUnit.SECONDS);
            recoveredJob.complete(job);
          }
        }
        case "hold" -> heldJob.complete(job);
        default -> throw new IllegalStateException("unexpected case " + c + " in " + job);
      }
    } catch (Throwable t) {
      handlerErrors.add(t);
      okJob.completeExceptionally(t);
      failedJob.completeExceptionally(t);
      recoveredJob.completeExceptionally(t);
      heldJob.completeExceptionally(t);
      throw t;
    }
  }

  static String model(String processId) {
    return model(processId, JOB_TYPE);
  }

  static String model(String processId, String jobType) {
    return """
        <?xml version="1.0" encoding="UTF-8"?>
        <bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
            xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"
            id="defs_PID" targetNamespace="http://zest.example/java-smoke">
          <bpmn:process id="PID" name="Java smoke" isExecutable="true">
            <bpmn:startEvent id="start">
              <bpmn:outgoing>to_task</bpmn:outgoing>
            </bpmn:startEvent>
            <bpmn:sequenceFlow id="to_task" sourceRef="start" targetRef="task" />
            <bpmn:serviceTask id="task" name="Java smoke task">
              <bpmn:extensionElements>
                <zeebe:taskDefinition type="JOB_TYPE" retries="3" />
                <zeebe:ioMapping>
                  <zeebe:output source="=doubled" target="result" />
                </zeebe:ioMapping>
              </bpmn:extensionElements>
              <bpmn:incoming>to_task</bpmn:incoming>
              <bpmn:outgoing>to_end</bpmn:outgoing>
            </bpmn:serviceTask>
            <bpmn:sequenceFlow id="to_end" sourceRef="task" targetRef="end" />
            <bpmn:endEvent id="end">
              <bpmn:incoming>to_end</bpmn:incoming>
            </bpmn:endEvent>
          </bpmn:process>
        </bpmn:definitions>
        """
        .replace("PID", processId)
        .replace("JOB_TYPE", jobType);
  }

  static <T> T await(CompletableFuture<T> f, String what) throws Exception {
    try {
      return f.get(10, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("timed out after 10 s waiting for " + what, e);
    }
  }

  static void assertStatus(Status.Code expected, Executable call) {
    ClientStatusException e = assertThrows(ClientStatusException.class, call);
    assertEquals(expected, e.getStatusCode(), () -> "status: " + e.getStatus());
  }

  /** Polls until the supplier returns non-null, for up to 5 s. */
  static <T> T eventually(String what, Supplier<T> probe) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (true) {
      T v = probe.get();
      if (v != null) return v;
      if (System.nanoTime() > end) throw new AssertionError("gave up after 5 s: " + what);
      Thread.sleep(100);
    }
  }

  ProcessInstanceEvent create(Map<String, Object> vars) {
    return client
        .newCreateInstanceCommand()
        .bpmnProcessId(processId)
        .latestVersion()
        .variables(vars)
        .send()
        .join();
  }

  // ------------------------------------------------------------------------------------------

  @Test
  @Order(1)
  void topology() {
    Topology t = client.newTopologyRequest().send().join();
    assertFalse(t.getBrokers().isEmpty(), "no brokers in " + t);
    assertTrue(t.getClusterSize() >= 1, "cluster size " + t.getClusterSize());
    assertTrue(t.getPartitionsCount() >= 1, "partitions " + t.getPartitionsCount());
    assertTrue(t.getReplicationFactor() >= 1, "replication factor " + t.getReplicationFactor());
    assertNotNull(t.getGatewayVersion());
    Set<Integer> leaders = new HashSet<>();
    t.getBrokers()
        .forEach(
            b -> {
              assertTrue(b.getPort() > 0, "broker port " + b);
              for (PartitionInfo p : b.getPartitions()) {
                if (p.getRole() == PartitionBrokerRole.LEADER) leaders.add(p.getPartitionId());
              }
            });
    for (int p = 1; p <= t.getPartitionsCount(); p++) {
      assertTrue(leaders.contains(p), "partition " + p + " has no leader in " + t);
    }
  }

  @Test
  @Order(2)
  void deploy() {
    String resource = processId + ".bpmn";
    DeploymentEvent d =
        client
            .newDeployResourceCommand()
            .addResourceStringUtf8(model(processId), resource)
            .send()
            .join();
    assertTrue(d.getKey() > 0, "deployment key " + d.getKey());
    assertEquals(1, d.getProcesses().size(), "processes " + d.getProcesses());
    Process p = d.getProcesses().get(0);
    assertEquals(processId, p.getBpmnProcessId());
    assertEquals(1, p.getVersion());
    assertEquals(resource, p.getResourceName());
    assertTrue(p.getProcessDefinitionKey() > 0);
    deployedDefinitionKey = p.getProcessDefinitionKey();
  }

  @Test
  @Order(3)
  void createWithResultWhileWorkerCompletes() throws Exception {
    ProcessInstanceResult r =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId(processId)
            .latestVersion()
            .variables(Map.of("case", "ok", "x", 21, "runId", runId))
            .withResult()
            .requestTimeout(Duration.ofSeconds(15))
            .send()
            .join();
    assertEquals(processId, r.getBpmnProcessId());
    assertEquals(1, r.getVersion());
    assertEquals(deployedDefinitionKey, r.getProcessDefinitionKey());
    assertTrue(r.getProcessInstanceKey() > 0);
    // creation variables + the output mapping's `result`; the job's own completion variables
    // (doubled, note) stay local to the task because the task has output mappings.
    assertEquals(
        Map.of("case", "ok", "x", 21, "runId", runId, "result", 42), r.getVariablesAsMap());

    ActivatedJob job = await(okJob, "the worker's job");
    assertEquals(JOB_TYPE, job.getType());
    assertEquals("task", job.getElementId());
    assertEquals(r.getProcessInstanceKey(), job.getProcessInstanceKey());
    assertEquals(3, job.getRetries());
    assertEquals("java-smoke-worker", job.getWorker());
    assertTrue(handlerErrors.isEmpty(), "handler errors: " + handlerErrors);
  }

  @Test
  @Order(4)
  void failedJobIncidentSetVariablesUpdateRetriesResolve() throws Exception {
    ProcessInstanceEvent inst = create(Map.of("case", "fail", "fail", true));
    ActivatedJob job = await(failedJob, "the worker failing the job");
    assertEquals(inst.getProcessInstanceKey(), job.getProcessInstanceKey());
    assertTrue(handlerErrors.isEmpty(), "handler errors: " + handlerErrors);

    // Path 1: the failed job (retries 0) is not activatable.
    ActivateJobsResponse none =
        client
            .newActivateJobsCommand()
            .jobType(JOB_TYPE)
            .maxJobsToActivate(10)
            .timeout(Duration.ofSeconds(1))
            .requestTimeout(Duration.ofMillis(500))
            .send()
            .join();
    assertTrue(
        none.getJobs().stream().noneMatch(j -> j.getKey() == job.getKey()),
        "failed job with 0 retries was activated again: " + none.getJobs());

    // Path 2: the gRPC API cannot list incidents, so probe ResolveIncident on the keys handed out
    // just after the job's: a non-incident key is NOT_FOUND, the incident is FAILED_PRECONDITION
    // while its job has no retries (Zeebe: incident key = job key + 2).
    assertStatus(
        Status.Code.NOT_FOUND,
        () -> client.newResolveIncidentCommand(UNKNOWN_KEY).send().join());
    long incidentKey =
        eventually(
            "an incident (FAILED_PRECONDITION) among the 20 keys after job " + job.getKey(),
            () -> {
              for (long k = job.getKey() + 1; k <= job.getKey() + 20; k++) {
                try {
                  client.newResolveIncidentCommand(k).send().join();
                  throw new AssertionError("resolving key " + k + " succeeded with 0 retries");
                } catch (ClientStatusException e) {
                  if (e.getStatusCode() == Status.Code.FAILED_PRECONDITION) return k;
                  if (e.getStatusCode() != Status.Code.NOT_FOUND) throw e;
                }
              }
              return null;
            });
    System.out.printf(
        "java-smoke: job %d -> incident %d (+%d)%n",
        job.getKey(), incidentKey, incidentKey - job.getKey());

    // Fix the data, give the job a retry, resolve: the worker gets it again and completes it.
    var setVars =
        client
            .newSetVariablesCommand(inst.getProcessInstanceKey())
            .variables(Map.of("fail", false, "fixedBy", "java"))
            .send()
            .join();
    assertTrue(setVars.getKey() > 0, "set variables key " + setVars.getKey());
    client.newUpdateRetriesCommand(job.getKey()).retries(1).send().join();
    client.newResolveIncidentCommand(incidentKey).send().join();

    ActivatedJob again = await(recoveredJob, "the job after resolving the incident");
    assertEquals(job.getKey(), again.getKey());
    assertEquals(1, again.getRetries());
    assertEquals("java", again.getVariablesAsMap().get("fixedBy"));
    // The instance has completed: cancelling it is NOT_FOUND.
    assertStatus(
        Status.Code.NOT_FOUND,
        () -> client.newCancelInstanceCommand(inst.getProcessInstanceKey()).send().join());
    assertTrue(handlerErrors.isEmpty(), "handler errors: " + handlerErrors);
  }

  @Test
  @Order(5)
  void cancelInstance() throws Exception {
    ProcessInstanceEvent inst = create(Map.of("case", "hold"));
    ActivatedJob job = await(heldJob, "the held job");
    assertEquals(inst.getProcessInstanceKey(), job.getProcessInstanceKey());

    client.newCancelInstanceCommand(inst.getProcessInstanceKey()).send().join();
    assertStatus(
        Status.Code.NOT_FOUND,
        () -> client.newCancelInstanceCommand(inst.getProcessInstanceKey()).send().join());
    assertStatus(
        Status.Code.NOT_FOUND, () -> client.newCompleteCommand(job.getKey()).send().join());
    assertStatus(
        Status.Code.NOT_FOUND,
        () ->
            client
                .newSetVariablesCommand(inst.getProcessInstanceKey())
                .variables(Map.of("a", 1))
                .send()
                .join());
  }

  @Test
  @Order(6)
  void unknownKeysAreNotFound() {
    assertStatus(
        Status.Code.NOT_FOUND,
        () -> client.newResolveIncidentCommand(UNKNOWN_KEY).send().join());
    assertStatus(
        Status.Code.NOT_FOUND,
        () -> client.newUpdateRetriesCommand(UNKNOWN_KEY).retries(3).send().join());
    assertStatus(
        Status.Code.NOT_FOUND,
        () ->
            client
                .newSetVariablesCommand(UNKNOWN_KEY)
                .variables(Map.of("a", 1))
                .send()
                .join());
    assertStatus(
        Status.Code.NOT_FOUND, () -> client.newCancelInstanceCommand(UNKNOWN_KEY).send().join());
    assertStatus(
        Status.Code.NOT_FOUND,
        () ->
            client
                .newCreateInstanceCommand()
                .bpmnProcessId(processId + "_nope")
                .latestVersion()
                .send()
                .join());
    assertTrue(handlerErrors.isEmpty(), "handler errors: " + handlerErrors);
  }

  /**
   * Job streaming (StreamActivatedJobs): a worker with streamEnabled gets jobs pushed. Its polls
   * return at once (request timeout 100 ms) and the next one is ten minutes away, so jobs that
   * arrive within seconds came through the stream.
   */
  @Test
  @Order(7)
  void streamingWorkerGetsJobsPushed() throws Exception {
    String streamProcess = processId + "_stream";
    String streamType = "java-stream-" + runId;
    client
        .newDeployResourceCommand()
        .addResourceStringUtf8(model(streamProcess, streamType), streamProcess + ".bpmn")
        .send()
        .join();
    List<ActivatedJob> pushed = Collections.synchronizedList(new ArrayList<>());
    JobWorker streamer =
        client
            .newWorker()
            .jobType(streamType)
            .handler(
                (jobClient, job) -> {
                  pushed.add(job);
                  jobClient
                      .newCompleteCommand(job)
                      .variables(Map.of("doubled", 7))
                      .send()
                      .join(10, TimeUnit.SECONDS);
                })
            .name("java-stream-worker")
            .streamEnabled(true)
            .requestTimeout(Duration.ofMillis(100))
            .pollInterval(Duration.ofMinutes(10))
            .open();
    try {
      // let the first (empty) poll finish and the stream open
      Thread.sleep(1500);
      List<CompletableFuture<ProcessInstanceResult>> results = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        results.add(
            client
                .newCreateInstanceCommand()
                .bpmnProcessId(streamProcess)
                .latestVersion()
                .variables(Map.of("i", i))
                .withResult()
                .requestTimeout(Duration.ofSeconds(15))
                .send()
                .toCompletableFuture());
      }
      for (CompletableFuture<ProcessInstanceResult> r : results) {
        ProcessInstanceResult done = await(r, "an instance completed by the streaming worker");
        assertEquals(7, ((Number) done.getVariablesAsMap().get("result")).intValue());
      }
      assertEquals(5, pushed.size(), "jobs pushed: " + pushed);
      for (ActivatedJob job : pushed) {
        assertEquals(streamType, job.getType());
        assertEquals("java-stream-worker", job.getWorker());
        assertEquals(streamProcess, job.getBpmnProcessId());
      }
    } finally {
      streamer.close();
    }
  }

  static String messageModels(String catchId, String startId, String name, String jobType) {
    return """
        <?xml version="1.0" encoding="UTF-8"?>
        <bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
            xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"
            id="defs_CATCH" targetNamespace="http://zest.example/java-smoke">
          <bpmn:process id="CATCH" isExecutable="true">
            <bpmn:startEvent id="start" />
            <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait" />
            <bpmn:intermediateCatchEvent id="wait">
              <bpmn:messageEventDefinition messageRef="paid" />
            </bpmn:intermediateCatchEvent>
            <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end" />
            <bpmn:endEvent id="end" />
          </bpmn:process>
          <bpmn:process id="START" isExecutable="true">
            <bpmn:startEvent id="by_message">
              <bpmn:messageEventDefinition messageRef="placed" />
            </bpmn:startEvent>
            <bpmn:sequenceFlow id="g1" sourceRef="by_message" targetRef="task" />
            <bpmn:serviceTask id="task">
              <bpmn:extensionElements><zeebe:taskDefinition type="JOB_TYPE" /></bpmn:extensionElements>
            </bpmn:serviceTask>
            <bpmn:sequenceFlow id="g2" sourceRef="task" targetRef="done" />
            <bpmn:endEvent id="done" />
          </bpmn:process>
          <bpmn:message id="paid" name="NAME-paid">
            <bpmn:extensionElements><zeebe:subscription correlationKey="=orderId" /></bpmn:extensionElements>
          </bpmn:message>
          <bpmn:message id="placed" name="NAME-placed" />
        </bpmn:definitions>
        """
        .replace("CATCH", catchId)
        .replace("START", startId)
        .replace("NAME", name)
        .replace("JOB_TYPE", jobType);
  }

  /**
   * PublishMessage: a buffered message completes a catch event of an instance created after it,
   * with the message's variables; a message id is unique while its message is buffered; a message
   * start event starts an instance; a tenant other than the default is refused.
   */
  @Test
  @Order(8)
  void publishMessageCorrelatesAndStartsInstances() throws Exception {
    String catchId = processId + "_catch";
    String startId = processId + "_msgstart";
    String name = "java-" + runId;
    String jobType = "java-msg-" + runId;
    DeploymentEvent d =
        client
            .newDeployResourceCommand()
            .addResourceStringUtf8(
                messageModels(catchId, startId, name, jobType), catchId + ".bpmn")
            .send()
            .join();
    assertEquals(2, d.getProcesses().size());

    // published first, buffered for 30 s: the instance created next takes it at once
    var published =
        client
            .newPublishMessageCommand()
            .messageName(name + "-paid")
            .correlationKey("order-" + runId)
            .timeToLive(Duration.ofSeconds(30))
            .messageId("pay-" + runId)
            .variables(Map.of("amount", 42))
            .send()
            .join();
    assertTrue(published.getMessageKey() > 0, "message key " + published.getMessageKey());
    assertEquals("<default>", published.getTenantId());
    ProcessInstanceResult r =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId(catchId)
            .latestVersion()
            .variables(Map.of("orderId", "order-" + runId))
            .withResult()
            .requestTimeout(Duration.ofSeconds(15))
            .send()
            .join();
    assertEquals(Map.of("orderId", "order-" + runId, "amount", 42), r.getVariablesAsMap());

    // the same id again while the first is buffered
    assertStatus(
        Status.Code.ALREADY_EXISTS,
        () ->
            client
                .newPublishMessageCommand()
                .messageName(name + "-paid")
                .correlationKey("order-" + runId)
                .timeToLive(Duration.ofSeconds(30))
                .messageId("pay-" + runId)
                .send()
                .join());

    // a message start event: the message's variables are the new instance's variables
    client
        .newPublishMessageCommand()
        .messageName(name + "-placed")
        .correlationKey("")
        .variables(Map.of("who", "java"))
        .send()
        .join();
    ActivatedJob job = oneJob("the job of the instance started by a message", jobType);
    assertEquals(startId, job.getBpmnProcessId());
    assertEquals("java", job.getVariablesAsMap().get("who"));
    client.newCompleteCommand(job).send().join();

    assertStatus(
        Status.Code.INVALID_ARGUMENT,
        () ->
            client
                .newPublishMessageCommand()
                .messageName(name + "-paid")
                .correlationKey("x")
                .tenantId("another-tenant")
                .send()
                .join());
  }

  static String signalModels(String catchId, String startId, String name, String jobType) {
    return """
        <?xml version="1.0" encoding="UTF-8"?>
        <bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
            xmlns:zeebe="http://camunda.org/schema/zeebe/1.0"
            id="defs_CATCH" targetNamespace="http://zest.example/java-smoke">
          <bpmn:process id="CATCH" isExecutable="true">
            <bpmn:startEvent id="start" />
            <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait" />
            <bpmn:intermediateCatchEvent id="wait">
              <bpmn:signalEventDefinition signalRef="go" />
            </bpmn:intermediateCatchEvent>
            <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="after" />
            <bpmn:serviceTask id="after">
              <bpmn:extensionElements><zeebe:taskDefinition type="JOB_TYPE-after" /></bpmn:extensionElements>
            </bpmn:serviceTask>
            <bpmn:sequenceFlow id="f3" sourceRef="after" targetRef="end" />
            <bpmn:endEvent id="end" />
          </bpmn:process>
          <bpmn:process id="START" isExecutable="true">
            <bpmn:startEvent id="by_signal">
              <bpmn:signalEventDefinition signalRef="begin" />
            </bpmn:startEvent>
            <bpmn:sequenceFlow id="g1" sourceRef="by_signal" targetRef="task" />
            <bpmn:serviceTask id="task">
              <bpmn:extensionElements><zeebe:taskDefinition type="JOB_TYPE" /></bpmn:extensionElements>
            </bpmn:serviceTask>
            <bpmn:sequenceFlow id="g2" sourceRef="task" targetRef="done" />
            <bpmn:endEvent id="done" />
          </bpmn:process>
          <bpmn:signal id="go" name="NAME-go" />
          <bpmn:signal id="begin" name="NAME-begin" />
        </bpmn:definitions>
        """
        .replace("CATCH", catchId)
        .replace("START", startId)
        .replace("NAME", name)
        .replace("JOB_TYPE", jobType);
  }

  ActivatedJob oneJob(String what, String jobType) throws Exception {
    return eventually(
        what,
        () -> {
          ActivateJobsResponse resp =
              client
                  .newActivateJobsCommand()
                  .jobType(jobType)
                  .maxJobsToActivate(1)
                  .requestTimeout(Duration.ofSeconds(1))
                  .send()
                  .join();
          return resp.getJobs().isEmpty() ? null : resp.getJobs().get(0);
        });
  }

  /**
   * BroadcastSignal: a waiting signal catch event gets the signal's variables; a signal start
   * event starts an instance with them; a tenant other than the default one is refused.
   */
  @Test
  @Order(9)
  void broadcastSignalTriggersCatchAndStartEvents() throws Exception {
    String catchId = processId + "_sigcatch";
    String startId = processId + "_sigstart";
    String name = "java-sig-" + runId;
    String jobType = "java-sig-" + runId;
    DeploymentEvent d =
        client
            .newDeployResourceCommand()
            .addResourceStringUtf8(signalModels(catchId, startId, name, jobType), catchId + ".bpmn")
            .send()
            .join();
    assertEquals(2, d.getProcesses().size());

    long instance =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId(catchId)
            .latestVersion()
            .variables(Map.of("orderId", "o-" + runId))
            .send()
            .join()
            .getProcessInstanceKey();
    var broadcast =
        client
            .newBroadcastSignalCommand()
            .signalName(name + "-go")
            .variables(Map.of("approved", true))
            .send()
            .join();
    assertTrue(broadcast.getKey() > 0, "signal key " + broadcast.getKey());
    assertEquals("<default>", broadcast.getTenantId());
    ActivatedJob after = oneJob("the job after the signal catch event", jobType + "-after");
    assertEquals(instance, after.getProcessInstanceKey());
    assertEquals(true, after.getVariablesAsMap().get("approved"));
    client.newCompleteCommand(after).send().join();

    client
        .newBroadcastSignalCommand()
        .signalName(name + "-begin")
        .variables(Map.of("who", "java"))
        .send()
        .join();
    ActivatedJob started = oneJob("the job of the instance started by a signal", jobType);
    assertEquals(startId, started.getBpmnProcessId());
    assertEquals("java", started.getVariablesAsMap().get("who"));
    client.newCompleteCommand(started).send().join();

    assertStatus(
        Status.Code.INVALID_ARGUMENT,
        () ->
            client
                .newBroadcastSignalCommand()
                .signalName(name + "-go")
                .tenantId("another-tenant")
                .send()
                .join());
  }
}
