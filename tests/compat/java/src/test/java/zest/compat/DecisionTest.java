package zest.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.camunda.zeebe.client.ZeebeClient;
import io.camunda.zeebe.client.api.command.ClientStatusException;
import io.camunda.zeebe.client.api.response.Decision;
import io.camunda.zeebe.client.api.response.DecisionRequirements;
import io.camunda.zeebe.client.api.response.DeploymentEvent;
import io.camunda.zeebe.client.api.response.EvaluateDecisionResponse;
import io.camunda.zeebe.client.api.response.EvaluatedDecision;
import io.camunda.zeebe.client.api.response.MatchedDecisionRule;
import io.camunda.zeebe.client.api.response.ProcessInstanceResult;
import io.grpc.Status;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * DMN with the official Java client 8.6 over gRPC: DeployResource of a decision requirements graph
 * (the answer lists the graph and its decisions), EvaluateDecision by id and by key (evaluated
 * decisions, inputs, matched rules, outputs; a failure answered with the failed decision and
 * message; an unknown id is NOT_FOUND), and a business rule task writing the decision's result.
 * Decision and process ids carry a run id, so the test can run against a server that keeps
 * earlier runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DecisionTest {

  static final Duration CALL = Duration.ofSeconds(10);
  final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  ZeebeClient client;

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
  }

  @AfterAll
  void close() {
    if (client != null) client.close();
  }

  /** A test resource with every decision and process id made unique to this run. */
  String resource(String name) throws Exception {
    String text = Files.readString(Path.of("../testdata/" + name));
    for (String id :
        List.of("pricing", "discount", "price", "labels", "score", "pricing_process")) {
      text = text.replace("\"" + id + "\"", "\"" + id + "_" + run + "\"");
      text = text.replace("\"#" + id + "\"", "\"#" + id + "_" + run + "\"");
      text = text.replace(" * (1 - " + id + ")", " * (1 - " + id + "_" + run + ")");
    }
    return text;
  }

  @Test
  void deployEvaluateAndCallDecisions() throws Exception {
    DeploymentEvent d =
        client
            .newDeployResourceCommand()
            .addResourceStringUtf8(resource("pricing.dmn"), "pricing.dmn")
            .addResourceStringUtf8(resource("pricing.bpmn"), "pricing.bpmn")
            .send()
            .join();
    assertEquals(1, d.getDecisionRequirements().size(), "graphs " + d.getDecisionRequirements());
    DecisionRequirements drg = d.getDecisionRequirements().get(0);
    assertEquals("pricing_" + run, drg.getDmnDecisionRequirementsId());
    assertEquals("Pricing", drg.getDmnDecisionRequirementsName());
    assertEquals(1, drg.getVersion());
    assertEquals(4, d.getDecisions().size(), "decisions " + d.getDecisions());
    Decision price =
        d.getDecisions().stream()
            .filter(x -> x.getDmnDecisionId().equals("price_" + run))
            .findFirst()
            .orElseThrow();
    assertEquals("Price", price.getDmnDecisionName());
    assertEquals(drg.getDecisionRequirementsKey(), price.getDecisionRequirementsKey());
    assertEquals(1, d.getProcesses().size());

    // by id: a literal expression that requires a decision table
    EvaluateDecisionResponse r =
        client
            .newEvaluateDecisionCommand()
            .decisionId("price_" + run)
            .variables(Map.of("customer", "gold", "amount", 150))
            .send()
            .join();
    assertEquals("120", r.getDecisionOutput());
    assertEquals(price.getDecisionKey(), r.getDecisionKey());
    assertEquals("", r.getFailedDecisionId());
    List<EvaluatedDecision> evaluated = r.getEvaluatedDecisions();
    assertEquals(2, evaluated.size(), "evaluated " + evaluated);
    EvaluatedDecision table = evaluated.get(0);
    assertEquals("discount_" + run, table.getDecisionId());
    assertEquals("DECISION_TABLE", table.getDecisionType());
    assertEquals("0.2", table.getDecisionOutput());
    assertEquals("Customer", table.getEvaluatedInputs().get(0).getInputName());
    assertEquals("\"gold\"", table.getEvaluatedInputs().get(0).getInputValue());
    MatchedDecisionRule rule = table.getMatchedRules().get(0);
    assertEquals("gold_big", rule.getRuleId());
    assertEquals(1, rule.getRuleIndex());
    assertEquals("0.2", rule.getEvaluatedOutputs().get(0).getOutputValue());
    assertEquals("LITERAL_EXPRESSION", evaluated.get(1).getDecisionType());

    // by key: a COLLECT table with two outputs
    Decision labels =
        d.getDecisions().stream()
            .filter(x -> x.getDmnDecisionId().equals("labels_" + run))
            .findFirst()
            .orElseThrow();
    r =
        client
            .newEvaluateDecisionCommand()
            .decisionKey(labels.getDecisionKey())
            .variables(Map.of("amount", 50))
            .send()
            .join();
    assertEquals("[{\"label\":\"big\",\"weight\":2},{\"label\":\"any\",\"weight\":1}]", r.getDecisionOutput());
    assertEquals(2, r.getEvaluatedDecisions().get(0).getMatchedRules().size());

    // an unknown decision id
    ClientStatusException e =
        assertThrows(
            ClientStatusException.class,
            () -> client.newEvaluateDecisionCommand().decisionId("nope_" + run).send().join());
    assertEquals(Status.Code.NOT_FOUND, e.getStatusCode(), () -> "status: " + e.getStatus());
    assertTrue(e.getMessage().contains("no decision found for id 'nope_" + run + "'"), e.getMessage());

    // a business rule task: the decision's result in the result variable
    ProcessInstanceResult result =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("pricing_process_" + run)
            .latestVersion()
            .variables(Map.of("customer", "gold", "amount", 50))
            .withResult()
            .send()
            .join();
    assertEquals(45, ((Number) result.getVariablesAsMap().get("result")).intValue());
  }
}
