package zest.cpt;

import static io.camunda.process.test.api.CamundaAssert.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.camunda.client.CamundaClient;
import io.camunda.client.api.response.ProcessInstanceEvent;
import io.camunda.client.api.response.ProcessInstanceResult;
import io.camunda.process.test.api.CamundaProcessTestContext;
import io.camunda.process.test.api.CamundaProcessTestExtension;
import io.camunda.process.test.api.CamundaProcessTestRuntimeMode;
import io.camunda.process.test.api.assertions.UserTaskSelectors;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A user's process test with Camunda Process Test 8.8 in its remote-runtime mode, Zest as the
 * runtime (no container): the extension checks the runtime's topology, injects a client (the
 * client's defaults: REST preferred), the assertions read the REST searches, and the test's
 * clock moves on through the management port's {@code /actuator/clock}. The addresses come from
 * ZEEBE_ADDRESS (gRPC host:port), ZEEBE_REST_ADDRESS and ZEST_MANAGEMENT_ADDRESS (URLs or
 * host:port).
 */
class OrderProcessTest {

  static String url(String env) {
    String v = System.getenv(env);
    if (v == null || v.isBlank()) throw new IllegalStateException("set " + env);
    return v.startsWith("http") ? v : "http://" + v;
  }

  @RegisterExtension
  static final CamundaProcessTestExtension EXTENSION =
      new CamundaProcessTestExtension()
          .withRuntimeMode(CamundaProcessTestRuntimeMode.REMOTE)
          .withRemoteCamundaClientBuilderFactory(
              () ->
                  CamundaClient.newClientBuilder()
                      .grpcAddress(URI.create(url("ZEEBE_ADDRESS")))
                      .restAddress(URI.create(url("ZEEBE_REST_ADDRESS"))))
          .withRemoteCamundaMonitoringApiAddress(URI.create(url("ZEST_MANAGEMENT_ADDRESS")));

  // injected by the extension
  private CamundaClient client;
  private CamundaProcessTestContext processTestContext;

  @BeforeEach
  void deploy() {
    client
        .newDeployResourceCommand()
        .addResourceFromClasspath("cpt_order.bpmn")
        .addResourceFromClasspath("cpt_timer.bpmn")
        .send()
        .join();
  }

  ProcessInstanceEvent start(Map<String, Object> variables) {
    return client
        .newCreateInstanceCommand()
        .bpmnProcessId("cpt_order")
        .latestVersion()
        .variables(variables)
        .send()
        .join();
  }

  @Test
  void theTestsClockMovesAnInstancePastItsTimer() throws Exception {
    processTestContext.mockJobWorker("cpt-timer-check").thenComplete(Map.of("checked", true));
    CompletableFuture<ProcessInstanceResult> result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("cpt_timer")
            .latestVersion()
            .variables(Map.of("orderId", "t-1"))
            .withResult()
            .requestTimeout(Duration.ofSeconds(30))
            .send()
            .toCompletableFuture();
    Thread.sleep(1_500);
    assertFalse(result.isDone(), "the instance waits for its hour's timer");

    Instant before = processTestContext.getCurrentTime();
    processTestContext.increaseTime(Duration.ofHours(2));
    Instant after = processTestContext.getCurrentTime();
    assertFalse(
        after.isBefore(before.plus(Duration.ofHours(2))),
        "the clock moved on two hours: " + before + " -> " + after);

    ProcessInstanceResult done = result.get(20, TimeUnit.SECONDS);
    assertEquals(Map.of("orderId", "t-1", "checked", true), done.getVariablesAsMap());
  }

  @Test
  void anOrderWaitsForItsTimerUntilTheClockMovesOnAndCompletes() {
    processTestContext.mockJobWorker("cpt-check").thenComplete(Map.of("checked", true));
    ProcessInstanceEvent order = start(Map.of("orderId", "o-1"));

    assertThat(order)
        .isActive()
        .hasCompletedElements("start", "check")
        .hasActiveElements("cool_off")
        .hasVariable("checked", true);

    Instant before = processTestContext.getCurrentTime();
    processTestContext.increaseTime(Duration.ofHours(2));
    Instant after = processTestContext.getCurrentTime();
    assertTrue(
        !after.isBefore(before.plus(Duration.ofHours(2))),
        "the clock moved on two hours: " + before + " -> " + after);

    assertThat(order).hasCompletedElements("cool_off").hasActiveElements("approve");
    assertThat(UserTaskSelectors.byElementId("approve")).isCreated().hasName("Approve");
    processTestContext.completeUserTask("approve", Map.of("approved", true));

    assertThat(order)
        .isCompleted()
        .hasCompletedElementsInOrder("start", "check", "cool_off", "approve", "end")
        .hasNotActivatedElements("end_rejected")
        .hasVariables(Map.of("orderId", "o-1", "checked", true, "approved", true))
        .hasNoActiveIncidents();
  }

  @Test
  void aRejectedOrderEndsAtTheErrorBoundaryEvent() {
    ProcessInstanceEvent order = start(Map.of("orderId", "o-2"));
    processTestContext.throwBpmnErrorFromJob("cpt-check", "REJECTED", Map.of("reason", "stock"));

    assertThat(order)
        .isCompleted()
        .hasCompletedElements("rejected", "end_rejected")
        .hasTerminatedElements("check")
        .hasNotActivatedElements("cool_off", "approve")
        .hasVariable("reason", "stock");
  }

  @Test
  void aJobWithoutRetriesShowsAnIncidentUntilItIsResolved() {
    processTestContext
        .mockJobWorker("cpt-check")
        .withHandler(
            (jobs, job) ->
                jobs.newFailCommand(job).retries(0).errorMessage("no stock service").send().join());
    ProcessInstanceEvent order = start(Map.of("orderId", "o-3"));

    assertThat(order).isActive().hasActiveIncidents().hasActiveElements("check");
    var incident =
        client
            .newIncidentSearchRequest()
            .filter(f -> f.processInstanceKey(order.getProcessInstanceKey()))
            .send()
            .join()
            .singleItem();
    assertEquals("no stock service", incident.getErrorMessage());

    client.newCancelInstanceCommand(order.getProcessInstanceKey()).send().join();
    assertThat(order).isTerminated().hasTerminatedElements("check");
  }
}
