package zest.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.camunda.client.CamundaClient;
import io.camunda.client.api.command.ClientStatusException;
import io.camunda.client.api.command.ProblemException;
import io.camunda.client.api.response.ActivatedJob;
import io.camunda.client.api.response.ProcessInstanceResult;
import io.camunda.client.api.search.enums.JobKind;
import io.camunda.client.api.search.response.ElementInstance;
import io.grpc.Status;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Ad-hoc sub-processes with the official Camunda Java client 8.8 (io.camunda:camunda-client-java,
 * the client that has job results): the job of an ad-hoc sub-process with a job worker
 * implementation (Camunda's AI agent pattern) is completed over gRPC with an ad-hoc sub-process
 * result that activates elements with variables, a new job follows each finished element with
 * the collected outputs, and a result with the completion condition fulfilled completes the
 * sub-process; a result naming an element that does not exist is NOT_FOUND. The elements of an
 * ad-hoc sub-process without one are activated with the REST API (found with the element
 * instance search). Process ids and job types carry a run id.
 *
 * <p>Not checked against the anchor: the gRPC gateway of zeebe-process-test-engine (what
 * shared/anchors/zeebe runs) drops job results and leaves the job kind unset, so the engine's
 * side of these results is checked by the anchor scenarios adhoc_job* (written to the log
 * directly), and the kind as Zeebe's own gateway maps it (AD_HOC_SUB_PROCESS).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AdHocSubProcessTest {

  static final Duration CALL = Duration.ofSeconds(10);
  final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  CamundaClient client;
  boolean rest;

  @BeforeAll
  void connect() throws Exception {
    String address = System.getenv("ZEEBE_ADDRESS");
    if (address == null || address.isBlank()) {
      fail("set ZEEBE_ADDRESS=host:port of a Zeebe gateway (plaintext gRPC)");
    }
    String restAddress = System.getenv("ZEEBE_REST_ADDRESS");
    rest = restAddress != null && !restAddress.isBlank();
    if (rest && !restAddress.startsWith("http")) restAddress = "http://" + restAddress;
    var builder =
        CamundaClient.newClientBuilder()
            .applyEnvironmentVariableOverrides(false)
            .grpcAddress(URI.create("http://" + address))
            // gRPC for everything the gRPC API has (the plain http scheme means no TLS)
            .preferRestOverGrpc(false)
            .defaultRequestTimeout(CALL);
    if (rest) builder = builder.restAddress(URI.create(restAddress));
    client = builder.build();
    String xml =
        Files.readString(Path.of("../testdata/adhoc_agent.bpmn"))
            .replace("id=\"adhoc_", "id=\"adhoc_" + run + "_")
            .replace("type=\"ah-", "type=\"ah-" + run + "-");
    client
        .newDeployResourceCommand()
        .addResourceStringUtf8(xml, "adhoc_agent.bpmn")
        .send()
        .join();
  }

  @AfterAll
  void close() {
    if (client != null) client.close();
  }

  ActivatedJob one(String type) {
    for (int i = 0; i < 50; i++) {
      List<ActivatedJob> jobs =
          client
              .newActivateJobsCommand()
              .jobType("ah-" + run + "-" + type)
              .maxJobsToActivate(1)
              .requestTimeout(Duration.ofSeconds(1))
              .send()
              .join()
              .getJobs();
      if (!jobs.isEmpty()) return jobs.get(0);
    }
    throw new AssertionError("no job of type " + type + " was activated");
  }

  CompletableFuture<ProcessInstanceResult> start(String process) {
    return client
        .newCreateInstanceCommand()
        .bpmnProcessId("adhoc_" + run + "_" + process)
        .latestVersion()
        .variables(Map.of("prompt", "hi"))
        .withResult()
        .requestTimeout(Duration.ofSeconds(50))
        .send()
        .toCompletableFuture();
  }

  @Test
  void anAgentJobActivatesElementsWithItsResultAndCompletesTheSubProcess() throws Exception {
    var instance = start("agent");
    ActivatedJob agent = one("agent");
    assertEquals(JobKind.AD_HOC_SUB_PROCESS, agent.getKind());
    // the job sees the elements it may activate, with their names and documentation
    @SuppressWarnings("unchecked")
    var elements = (List<Map<String, Object>>) agent.getVariablesAsMap().get("adHocSubProcessElements");
    assertEquals(
        List.of(
            Map.of("elementId", "A", "elementName", "Tool A", "documentation", "Looks things up"),
            Map.of("elementId", "B", "elementName", "Tool B")),
        elements);

    // an element that is not in the sub-process: NOT_FOUND, and the job stays
    var wrong =
        assertThrows(
            ClientStatusException.class,
            () ->
                client
                    .newCompleteCommand(agent)
                    .withResult(r -> r.forAdHocSubProcess().activateElement("nope"))
                    .send()
                    .join());
    assertEquals(Status.Code.NOT_FOUND, wrong.getStatusCode());
    assertTrue(wrong.getMessage().contains("[nope]"), wrong.getMessage());

    client
        .newCompleteCommand(agent)
        .variables(Map.of("turn", 1))
        .withResult(
            r ->
                r.forAdHocSubProcess()
                    .activateElement("A")
                    .variables(Map.of("toolId", "a1"))
                    .activateElement("B")
                    .variables(Map.of("toolId", "b1")))
        .send()
        .join();
    ActivatedJob a = one("tool-a");
    assertEquals("a1", a.getVariablesAsMap().get("toolId"));
    client.newCompleteCommand(a).variables(Map.of("out", "fromA")).send().join();
    ActivatedJob b = one("tool-b");
    assertEquals("b1", b.getVariablesAsMap().get("toolId"));
    client.newCompleteCommand(b).variables(Map.of("out", "fromB")).send().join();

    // each finished element gave the agent a new job; the open one sees both outputs
    ActivatedJob next = one("agent");
    assertEquals(
        List.of(Map.of("id", "a1", "out", "fromA"), Map.of("id", "b1", "out", "fromB")),
        next.getVariablesAsMap().get("toolCallResults"));
    client
        .newCompleteCommand(next)
        .variables(Map.of("answer", 42))
        .withResult(r -> r.forAdHocSubProcess().completionConditionFulfilled(true))
        .send()
        .join();
    var done = instance.get(30, TimeUnit.SECONDS).getVariablesAsMap();
    assertEquals(42, done.get("answer"));
    assertEquals(2, ((List<?>) done.get("toolCallResults")).size());
  }

  @Test
  void theRestApiActivatesTheElementsOfAnAdHocSubProcess() throws Exception {
    assumeTrue(rest, "ZEEBE_REST_ADDRESS not set");
    var instance = start("manual");
    ElementInstance manual = null;
    for (int i = 0; i < 50 && manual == null; i++) {
      var items =
          client
              .newElementInstanceSearchRequest()
              .filter(f -> f.processDefinitionId("adhoc_" + run + "_manual").elementId("manual"))
              .send()
              .join()
              .items();
      if (!items.isEmpty()) manual = items.get(0);
      else Thread.sleep(100);
    }
    assertTrue(manual != null, "the ad-hoc sub-process is not found by the element search");
    String key = String.valueOf(manual.getElementInstanceKey());

    var unknown =
        assertThrows(
            ProblemException.class,
            () ->
                client
                    .newActivateAdHocSubProcessActivitiesCommand(key)
                    .activateElement("nope")
                    .send()
                    .join());
    assertEquals(404, unknown.code(), unknown.getMessage());

    client
        .newActivateAdHocSubProcessActivitiesCommand(key)
        .activateElement("C", Map.of("step", 1))
        .send()
        .join();
    ActivatedJob c = one("tool-c");
    assertEquals(1, c.getVariablesAsMap().get("step"));
    // the completion condition holds once C is done
    client.newCompleteCommand(c).variables(Map.of("done", true)).send().join();
    assertEquals(true, instance.get(30, TimeUnit.SECONDS).getVariablesAsMap().get("done"));
  }
}
