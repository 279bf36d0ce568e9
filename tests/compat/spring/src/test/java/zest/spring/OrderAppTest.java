package zest.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.camunda.client.CamundaClient;
import io.camunda.client.api.response.ProcessInstanceResult;
import io.camunda.client.api.search.response.ProcessDefinition;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application against Zest with the starter's defaults (REST preferred) but for the
 * addresses, which come from ZEEBE_ADDRESS (gRPC, host:port) and ZEEBE_REST_ADDRESS (a URL).
 * The context starting is the first assertion: the {@code @Deployment} at startup used to fail
 * against Zest ({@code POST /v2/deployments} 404).
 */
@SpringBootTest
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OrderAppTest {

  @DynamicPropertySource
  static void addresses(DynamicPropertyRegistry registry) {
    String grpc = System.getenv("ZEEBE_ADDRESS");
    String rest = System.getenv("ZEEBE_REST_ADDRESS");
    assertTrue(grpc != null && rest != null, "set ZEEBE_ADDRESS and ZEEBE_REST_ADDRESS");
    registry.add("camunda.client.grpc-address", () -> "http://" + grpc);
    registry.add(
        "camunda.client.rest-address", () -> rest.startsWith("http") ? rest : "http://" + rest);
  }

  @Autowired CamundaClient client;
  final ObjectMapper json = new ObjectMapper();
  final HttpClient http = HttpClient.newHttpClient();

  /** The items of a REST search with filter values as plain values. */
  JsonNode search(String resource, String filter) {
    try {
      HttpResponse<String> res =
          http.send(
              HttpRequest.newBuilder(
                      client.getConfiguration().getRestAddress().resolve("/v2/" + resource + "/search"))
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString("{\"filter\":" + filter + "}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, res.statusCode(), res.body());
      return json.readTree(res.body()).get("items");
    } catch (java.io.IOException | InterruptedException e) {
      throw new AssertionError(e);
    }
  }

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

  @Test
  void theAppStartsWithItsDefaultsAndItsProcessesAreDeployed() {
    assertTrue(client.getConfiguration().preferRestOverGrpc(), "REST is the starter's default");
    Set<String> ids =
        await(
                "the processes deployed at startup show up",
                () -> client.newProcessDefinitionSearchRequest().send().join(),
                r -> r.items().size() >= 2)
            .items()
            .stream()
            .map(ProcessDefinition::getProcessDefinitionId)
            .collect(Collectors.toSet());
    assertTrue(ids.containsAll(Set.of("spring_order", "spring_quick")), ids.toString());
  }

  @Test
  void anInstanceCreatedWithResultIsCompletedByAJobWorker() {
    ProcessInstanceResult r =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("spring_quick")
            .latestVersion()
            .variables(Map.of("x", 21))
            .withResult()
            .requestTimeout(Duration.ofSeconds(30))
            .send()
            .join();
    assertEquals(Map.of("x", 21, "doubled", 42), r.getVariablesAsMap());
  }

  @Test
  void anOrderIsChargedShippedApprovedAndFoundCompleted() {
    String orderId = "order-" + UUID.randomUUID();
    long key =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("spring_order")
            .latestVersion()
            .variables(Map.of("orderId", orderId, "amount", 30))
            .send()
            .join()
            .getProcessInstanceKey();
    await("the @JobWorker charged the order", () -> OrderApp.CHARGED.contains(orderId), c -> c);
    client
        .newPublishMessageCommand()
        .messageName("spring-shipped")
        .correlationKey(orderId)
        .send()
        .join();
    // the searches as plain REST (the client's own search requests send empty lists that Zest's
    // filters refuse today: see ../java's RestSearchRequestsTest)
    String byInstance = "{\"processInstanceKey\":\"" + key + "\"}";
    JsonNode task =
        await(
                "the user task is CREATED",
                () -> search("user-tasks", byInstance),
                r -> r.size() == 1 && "CREATED".equals(r.get(0).path("state").asText()))
            .get(0);
    assertEquals("approve", task.get("elementId").asText());
    long taskKey = task.get("userTaskKey").asLong();
    client.newAssignUserTaskCommand(taskKey).assignee("demo").send().join();
    client.newCompleteUserTaskCommand(taskKey).variables(Map.of("approved", true)).send().join();
    await(
        "the instance is COMPLETED",
        () -> search("process-instances", byInstance),
        r -> r.size() == 1 && "COMPLETED".equals(r.get(0).path("state").asText()));
    Map<String, String> vars = new java.util.HashMap<>();
    search("variables", byInstance).forEach(v -> vars.put(v.get("name").asText(), v.get("value").asText()));
    assertEquals("30", vars.get("charged"));
    assertEquals("true", vars.get("approved"));
  }
}
