package zest.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.camunda.zeebe.client.ZeebeClient;
import io.camunda.zeebe.client.api.command.ProblemException;
import io.camunda.zeebe.client.api.response.ProcessInstanceResult;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Camunda user tasks ({@code zeebe:userTask}) with the official Java client 8.6, which sends user
 * task commands over the REST API v2 at ZEEBE_REST_ADDRESS (a URL, as the client reads it) and everything else over
 * gRPC at ZEEBE_ADDRESS. The task keys come from the REST user task search. Skipped when no REST
 * address is given.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UserTaskRestTest {

  static final Duration CALL = Duration.ofSeconds(10);
  final ObjectMapper json = new ObjectMapper();
  final HttpClient http = HttpClient.newHttpClient();
  ZeebeClient client;
  String rest;

  @BeforeAll
  void connect() {
    rest = System.getenv("ZEEBE_REST_ADDRESS");
    assumeTrue(rest != null && !rest.isBlank(), "ZEEBE_REST_ADDRESS not set");
    if (!rest.startsWith("http")) rest = "http://" + rest;
    client =
        ZeebeClient.newClientBuilder()
            .gatewayAddress(System.getenv().getOrDefault("ZEEBE_ADDRESS", "127.0.0.1:26500"))
            .restAddress(URI.create(rest))
            .usePlaintext()
            .defaultRequestTimeout(CALL)
            .build();
  }

  @AfterAll
  void close() {
    if (client != null) client.close();
  }

  /** The key of the open user task of {@code elementId} in the instance, once the search shows it. */
  long findTask(long instance, String elementId) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      String body =
          "{\"filter\":{\"processInstanceKey\":\"" + instance + "\",\"elementId\":\"" + elementId + "\"}}";
      HttpResponse<String> res =
          http.send(
              HttpRequest.newBuilder(URI.create(rest + "/v2/user-tasks/search"))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, res.statusCode(), res.body());
      JsonNode items = json.readTree(res.body()).get("items");
      if (items.size() > 0) return Long.parseLong(items.get(0).get("userTaskKey").asText());
      assertTrue(System.nanoTime() < deadline, "user task " + elementId + " shows up");
      Thread.sleep(20);
    }
  }

  @Test
  void userTasksAreAssignedUpdatedAndCompletedWithTheJavaClient() throws Exception {
    client
        .newDeployResourceCommand()
        .addResourceFile(Path.of("../testdata/user_tasks.bpmn").toAbsolutePath().toString())
        .addResourceFile(Path.of("../testdata/review.form").toAbsolutePath().toString())
        .send()
        .join();
    CompletableFuture<ProcessInstanceResult> result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("user_tasks")
            .latestVersion()
            .variables(Map.of("owner", "demo"))
            .withResult()
            .requestTimeout(Duration.ofSeconds(50))
            .send()
            .toCompletableFuture();
    // the instance key: from the search of the review task assigned to the owner
    long review = -1;
    long instance = -1;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (review < 0) {
      HttpResponse<String> res =
          http.send(
              HttpRequest.newBuilder(URI.create(rest + "/v2/user-tasks/search"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"filter\":{\"elementId\":\"review\",\"assignee\":\"demo\",\"processDefinitionId\":\"user_tasks\"}}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      JsonNode items = json.readTree(res.body()).get("items");
      for (JsonNode t : items) {
        review = Long.parseLong(t.get("userTaskKey").asText());
        instance = Long.parseLong(t.get("processInstanceKey").asText());
      }
      assertTrue(System.nanoTime() < deadline, "the review task shows up");
      if (review < 0) Thread.sleep(20);
    }

    final long reviewKey = review;
    // a claim (allowOverride false) of a task someone else has is a conflict
    ProblemException conflict =
        assertThrows(
            ProblemException.class,
            () ->
                client
                    .newUserTaskAssignCommand(reviewKey)
                    .assignee("mary")
                    .allowOverride(false)
                    .send()
                    .join());
    assertEquals(409, conflict.details().getStatus());
    assertTrue(conflict.details().getDetail().contains("already been assigned"), conflict.details().getDetail());

    client.newUserTaskAssignCommand(reviewKey).assignee("john").send().join();
    client.newUserTaskUnassignCommand(reviewKey).send().join();
    client.newUserTaskAssignCommand(reviewKey).assignee("mary").allowOverride(false).send().join();
    client
        .newUserTaskUpdateCommand(reviewKey)
        .candidateUsers("mary", "zoe")
        .dueDate("2031-01-02T03:04:05Z")
        .priority(10)
        .send()
        .join();
    assertEquals(reviewKey, findTask(instance, "review"));
    client.newUserTaskCompleteCommand(reviewKey).variables(Map.of("approved", true)).send().join();

    ProblemException gone =
        assertThrows(
            ProblemException.class,
            () -> client.newUserTaskCompleteCommand(reviewKey).send().join());
    assertEquals(404, gone.details().getStatus());
    assertEquals(
        "Command 'COMPLETE' rejected with code 'NOT_FOUND': Expected to complete user task with key '"
            + reviewKey
            + "', but no such user task was found",
        gone.details().getDetail());

    long approve = findTask(instance, "approve");
    client.newUserTaskCompleteCommand(approve).variables(Map.of("done", "yes")).action("approve").send().join();

    ProcessInstanceResult done = result.get(20, TimeUnit.SECONDS);
    assertEquals(instance, done.getProcessInstanceKey());
    assertEquals(true, done.getVariablesAsMap().get("approved"));
    assertEquals("yes", done.getVariablesAsMap().get("done"));
  }
}
