package zest.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.camunda.client.CamundaClient;
import io.camunda.client.api.command.ProblemException;
import io.camunda.client.api.response.ActivatedJob;
import io.camunda.client.api.response.DeploymentEvent;
import io.camunda.client.api.response.ProcessInstanceEvent;
import io.camunda.client.api.response.ProcessInstanceResult;
import io.camunda.client.api.worker.JobClient;
import io.camunda.client.api.worker.JobWorker;
import io.camunda.zeebe.model.bpmn.Bpmn;
import io.camunda.zeebe.model.bpmn.BpmnModelInstance;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Camunda's Java client 8.8 with its DEFAULT settings, as a new user builds it: only the two
 * addresses are set, so the client prefers REST ({@code preferRestOverGrpc} is true in 8.8) and
 * sends every command that the REST API v2 has over REST (deployments as multipart, creation
 * with and without result, job activation by the worker's polling, completion, failure, errors,
 * messages, signals, user tasks, variables, incidents, cancellation, decisions); what a user
 * checks is read from the REST searches, sent as plain JSON with plain filter values (the
 * client's own search requests are RestSearchRequestsTest's). A second client, with a gRPC
 * address where nothing listens, proves that these commands do not touch gRPC. Process ids and job types carry a run
 * id, so the class can run again against the same server.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestDefaultsTest {

  final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  final String order = "rest_order_" + run;
  final String oneTask = "rest_one_" + run;
  final String chargeType = "rest-charge-" + run;
  final String workType = "rest-work-" + run;
  final String shipped = "rest-shipped-" + run;
  final String signal = "rest-go-" + run;
  final ObjectMapper json = new ObjectMapper();
  final HttpClient http = HttpClient.newHttpClient();
  CamundaClient client;
  JobWorker charge;
  JobWorker work;

  static String restAddress() {
    String rest = System.getenv("ZEEBE_REST_ADDRESS");
    if (rest == null || rest.isBlank()) fail("set ZEEBE_REST_ADDRESS=http://host:port of the REST API");
    return rest.startsWith("http") ? rest : "http://" + rest;
  }

  static CamundaClient defaults(String grpc) {
    // the defaults but for the addresses (and the environment, which must not override them)
    return CamundaClient.newClientBuilder()
        .applyEnvironmentVariableOverrides(false)
        .grpcAddress(URI.create(grpc))
        .restAddress(URI.create(restAddress()))
        .build();
  }

  @BeforeAll
  void connect() {
    String address = System.getenv("ZEEBE_ADDRESS");
    if (address == null || address.isBlank()) fail("set ZEEBE_ADDRESS=host:port of the gRPC API");
    client = defaults("http://" + address);
    assertTrue(client.getConfiguration().preferRestOverGrpc(), "REST is the 8.8 default");
  }

  @AfterAll
  void close() {
    if (charge != null) charge.close();
    if (work != null) work.close();
    if (client != null) client.close();
  }

  /** Start, a service task that can end in an error boundary, a message, a user task, end. */
  BpmnModelInstance orderModel() {
    return Bpmn.createExecutableProcess(order)
        .name("REST order")
        .startEvent("start")
        .serviceTask("charge", t -> t.zeebeJobType(chargeType))
        .boundaryEvent("declined", b -> b.error("DECLINED"))
        .endEvent("end_declined")
        .moveToActivity("charge")
        .receiveTask("ship")
        .message(m -> m.name(shipped).zeebeCorrelationKeyExpression("orderId"))
        .userTask("approve", u -> u.zeebeUserTask().name("Approve"))
        .endEvent("end")
        .done();
  }

  BpmnModelInstance oneTaskModel() {
    return Bpmn.createExecutableProcess(oneTask)
        .startEvent("start")
        .intermediateCatchEvent("wait", c -> c.signal(signal))
        .serviceTask("work", t -> t.zeebeJobType(workType))
        .endEvent("end")
        .done();
  }

  /** The charge worker: what it does depends on the instance's variable {@code case}. */
  void chargeHandler(JobClient jobs, ActivatedJob job) {
    Map<String, Object> vars = job.getVariablesAsMap();
    switch (String.valueOf(vars.get("case"))) {
      case "decline" ->
          jobs.newThrowErrorCommand(job)
              .errorCode("DECLINED")
              .errorMessage("card declined")
              .variables(Map.of("reason", "card"))
              .send()
              .join();
      case "fail" -> {
        if (Boolean.TRUE.equals(vars.get("fixed"))) {
          jobs.newCompleteCommand(job).variables(Map.of("charged", true)).send().join();
        } else {
          jobs.newFailCommand(job).retries(0).errorMessage("card reader down").send().join();
        }
      }
      default -> jobs.newCompleteCommand(job).variables(Map.of("charged", true)).send().join();
    }
  }

  /** Polls {@code get} until {@code done} holds (searches read the history, which may lag). */
  static <T> T await(String what, Supplier<T> get, Predicate<T> done) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    T last = null;
    while (System.nanoTime() < deadline) {
      last = get.get();
      if (done.test(last)) return last;
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
    throw new AssertionError(what + " (last seen: " + last + ")");
  }

  /**
   * A search through the REST API with filters as plain values (what Zest's search accepts
   * today; the client's own search requests are RestSearchRequestsTest's).
   */
  JsonNode search(String resource, String filter, String sort) {
    String body = "{\"filter\":" + filter + (sort == null ? "" : ",\"sort\":" + sort) + "}";
    try {
      HttpResponse<String> res =
          http.send(
              HttpRequest.newBuilder(URI.create(restAddress() + "/v2/" + resource + "/search"))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, res.statusCode(), resource + " search " + body + ": " + res.body());
      return json.readTree(res.body()).get("items");
    } catch (java.io.IOException | InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** The one item of the search once it shows up and {@code done} holds for it. */
  JsonNode awaitOne(String resource, String filter, Predicate<JsonNode> done) {
    return await(
            resource + " " + filter,
            () -> search(resource, filter, null),
            items -> items.size() == 1 && done.test(items.get(0)))
        .get(0);
  }

  static Predicate<JsonNode> state(String state) {
    return item -> state.equals(item.path("state").asText());
  }

  JsonNode awaitState(long key, String state) {
    return awaitOne("process-instances", "{\"processInstanceKey\":\"" + key + "\"}", state(state));
  }

  ProcessInstanceEvent start(Map<String, Object> variables) {
    return client
        .newCreateInstanceCommand()
        .bpmnProcessId(order)
        .latestVersion()
        .variables(variables)
        .send()
        .join();
  }

  long awaitTask(long instance) {
    return awaitOne(
            "user-tasks",
            "{\"processInstanceKey\":\"" + instance + "\",\"elementId\":\"approve\"}",
            state("CREATED"))
        .get("userTaskKey")
        .asLong();
  }

  @Test
  @Order(1)
  void deploysBpmnDmnAndAFormInOneMultipartRequest() throws Exception {
    DeploymentEvent d =
        client
            .newDeployResourceCommand()
            .addProcessModel(orderModel(), order + ".bpmn")
            .addResourceBytes(Files.readAllBytes(Path.of("../testdata/pricing.dmn")), "pricing.dmn")
            .addResourceFile(Path.of("../testdata/review.form").toAbsolutePath().toString())
            .send()
            .join();
    assertTrue(d.getKey() > 0);
    assertEquals(1, d.getProcesses().size());
    assertEquals(order, d.getProcesses().get(0).getBpmnProcessId());
    assertEquals(1, d.getProcesses().get(0).getVersion());
    assertEquals(order + ".bpmn", d.getProcesses().get(0).getResourceName());
    assertEquals(
        Set.of("discount", "price", "labels", "score"),
        d.getDecisions().stream().map(x -> x.getDmnDecisionId()).collect(Collectors.toSet()));
    assertEquals(1, d.getDecisionRequirements().size());
    assertEquals("pricing", d.getDecisionRequirements().get(0).getDmnDecisionRequirementsId());
    assertEquals(1, d.getForm().size());
    assertEquals("review-form", d.getForm().get(0).getFormId());

    client.newDeployResourceCommand().addProcessModel(oneTaskModel(), oneTask + ".bpmn").send().join();
    charge = client.newWorker().jobType(chargeType).handler(this::chargeHandler).open();
    work =
        client
            .newWorker()
            .jobType(workType)
            .handler(
                (jobs, job) ->
                    jobs.newCompleteCommand(job)
                        .variables(Map.of("doubled", 2 * (int) job.getVariablesAsMap().get("x")))
                        .send()
                        .join())
            .open();

    // the definition search finds it, with its name and version, and its XML
    JsonNode def = awaitOne("process-definitions", "{\"processDefinitionId\":\"" + order + "\"}", d1 -> true);
    long defKey = def.get("processDefinitionKey").asLong();
    assertEquals(d.getProcesses().get(0).getProcessDefinitionKey(), defKey);
    assertEquals("REST order", def.get("name").asText());
    assertEquals(1, def.get("version").asInt());
    String xml = client.newProcessDefinitionGetXmlRequest(defKey).send().join();
    assertTrue(xml.contains("id=\"" + order + "\""), xml);
  }

  @Test
  @Order(2)
  void createsWithResultWhileTheWorkerPollsOverRest() {
    CompletableFuture<ProcessInstanceResult> result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId(oneTask)
            .latestVersion()
            .variables(Map.of("x", 21))
            .withResult()
            .requestTimeout(Duration.ofSeconds(30))
            .send()
            .toCompletableFuture();
    client.newBroadcastSignalCommand().signalName(signal).send().join();
    // a signal broadcast before the instance waits is lost: broadcast until the result comes
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!result.isDone() && System.nanoTime() < deadline) {
      try {
        result.get(200, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        client.newBroadcastSignalCommand().signalName(signal).send().join();
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    }
    ProcessInstanceResult r = result.join();
    assertEquals(oneTask, r.getBpmnProcessId());
    assertEquals(Map.of("x", 21, "doubled", 42), r.getVariablesAsMap());
    awaitState(r.getProcessInstanceKey(), "COMPLETED");
  }

  @Test
  @Order(3)
  void anOrderGoesThroughItsJobMessageAndUserTaskAndIsFoundCompleted() {
    String orderId = "o-" + run;
    long key = start(Map.of("case", "ok", "orderId", orderId)).getProcessInstanceKey();
    String byInstance = "{\"processInstanceKey\":\"" + key + "\"}";
    // the worker completes the charge; the instance then waits for the message
    awaitOne("jobs", byInstance, state("COMPLETED"));
    client
        .newPublishMessageCommand()
        .messageName(shipped)
        .correlationKey(orderId)
        .variables(Map.of("carrier", "post"))
        .timeToLive(Duration.ofMinutes(1))
        .send()
        .join();
    long task = awaitTask(key);
    client.newAssignUserTaskCommand(task).assignee("demo").send().join();
    awaitOne(
        "user-tasks",
        "{\"userTaskKey\":\"" + task + "\"}",
        t -> "demo".equals(t.path("assignee").asText()));
    client.newCompleteUserTaskCommand(task).variables(Map.of("approved", true)).send().join();

    JsonNode done = awaitState(key, "COMPLETED");
    assertEquals(order, done.get("processDefinitionId").asText());
    assertTrue(done.hasNonNull("endDate"), done.toString());
    assertFalse(done.get("hasIncident").asBoolean());

    // the path it took, from the element instance search, sorted by key
    JsonNode elements =
        search("element-instances", byInstance, "[{\"field\":\"elementInstanceKey\",\"order\":\"ASC\"}]");
    List<String> path = new java.util.ArrayList<>();
    elements.forEach(e -> path.add(e.get("elementId").asText()));
    assertEquals(List.of("start", "charge", "ship", "approve", "end"), path);
    elements.forEach(e -> assertEquals("COMPLETED", e.get("state").asText(), e.toString()));

    // its variables, by name, as JSON
    Map<String, String> vars = new java.util.HashMap<>();
    search("variables", byInstance, null).forEach(v -> vars.put(v.get("name").asText(), v.get("value").asText()));
    assertEquals("\"" + orderId + "\"", vars.get("orderId"));
    assertEquals("true", vars.get("charged"));
    assertEquals("\"post\"", vars.get("carrier"));
    assertEquals("true", vars.get("approved"));
  }

  @Test
  @Order(4)
  void aThrownErrorEndsAtTheBoundaryEvent() {
    long key = start(Map.of("case", "decline", "orderId", "d-" + run)).getProcessInstanceKey();
    String byInstance = "{\"processInstanceKey\":\"" + key + "\"}";
    awaitState(key, "COMPLETED");
    List<String> ended = new java.util.ArrayList<>();
    search("element-instances", byInstance, null)
        .forEach(e -> { if ("COMPLETED".equals(e.get("state").asText())) ended.add(e.get("elementId").asText()); });
    assertTrue(ended.contains("end_declined"), ended.toString());
    assertFalse(ended.contains("ship"), ended.toString());
    JsonNode job = awaitOne("jobs", byInstance, state("ERROR_THROWN"));
    assertEquals("DECLINED", job.get("errorCode").asText());
    assertEquals("card declined", job.get("errorMessage").asText());
  }

  @Test
  @Order(5)
  void aFailedJobRaisesAnIncidentThatIsResolvedAfterNewVariablesAndRetries() {
    long key = start(Map.of("case", "fail", "orderId", "f-" + run)).getProcessInstanceKey();
    String byInstance = "{\"processInstanceKey\":\"" + key + "\"}";
    JsonNode incident = awaitOne("incidents", byInstance, state("ACTIVE"));
    assertEquals("card reader down", incident.get("errorMessage").asText());
    assertEquals("JOB_NO_RETRIES", incident.get("errorType").asText());
    assertEquals("charge", incident.get("elementId").asText());
    assertTrue(awaitState(key, "ACTIVE").get("hasIncident").asBoolean());

    client.newSetVariablesCommand(key).variables(Map.of("fixed", true)).send().join();
    client.newUpdateRetriesCommand(incident.get("jobKey").asLong()).retries(1).send().join();
    client.newResolveIncidentCommand(incident.get("incidentKey").asLong()).send().join();
    // the worker gets the job again, completes it, and the instance waits for its message
    awaitOne("jobs", byInstance, state("COMPLETED"));
    awaitOne("incidents", "{\"incidentKey\":\"" + incident.get("incidentKey").asText() + "\"}", state("RESOLVED"));

    // correlate (not publish): the answer names the instance it reached
    var correlated =
        client
            .newCorrelateMessageCommand()
            .messageName(shipped)
            .correlationKey("f-" + run)
            .send()
            .join();
    assertEquals(key, correlated.getProcessInstanceKey());
    awaitTask(key);
    client.newCancelInstanceCommand(key).send().join();
    JsonNode canceled = awaitState(key, "TERMINATED");
    assertTrue(canceled.hasNonNull("endDate"), canceled.toString());
    ProblemException again =
        assertThrows(ProblemException.class, () -> client.newCancelInstanceCommand(key).send().join());
    assertEquals(404, again.code());
  }

  @Test
  @Order(7)
  void evaluatesADecision() {
    var r =
        client
            .newEvaluateDecisionCommand()
            .decisionId("discount")
            .variables(Map.of("customer", "gold", "amount", 150))
            .send()
            .join();
    assertEquals("discount", r.getDecisionId());
    assertEquals("0.2", r.getDecisionOutput());
    assertTrue(r.getDecisionKey() > 0);
  }

  @Test
  @Order(8)
  void theseCommandsNeedNoGrpc() {
    // the same defaults with a gRPC address where nothing listens: REST carries it all
    try (CamundaClient restOnly = defaults("http://127.0.0.1:1")) {
      assertFalse(restOnly.newTopologyRequest().send().join().getBrokers().isEmpty());
      long key =
          restOnly
              .newCreateInstanceCommand()
              .bpmnProcessId(order)
              .latestVersion()
              .variables(Map.of("case", "ok", "orderId", "g-" + run))
              .send()
              .join()
              .getProcessInstanceKey();
      restOnly.newPublishMessageCommand().messageName(shipped).correlationKey("g-" + run).send().join();
      long task = awaitTask(key);
      restOnly.newCompleteUserTaskCommand(task).send().join();
      awaitState(key, "COMPLETED");
    }
  }
}
