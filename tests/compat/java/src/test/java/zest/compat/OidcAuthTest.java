package zest.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.camunda.client.CamundaClient;
import io.camunda.client.api.command.ClientException;
import io.camunda.client.api.command.ClientHttpException;
import io.camunda.client.api.command.ClientStatusException;
import io.camunda.client.impl.NoopCredentialsProvider;
import io.grpc.Status;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * Camunda's Java client 8.8 against a node with {@code --auth oidc} and a real Keycloak (run.sh's
 * {@code oidc} suite, tests/compat/oidc/run.sh, which sets the client's own OAuth variables
 * {@code CAMUNDA_CLIENT_ID}, {@code _SECRET}, {@code CAMUNDA_AUTHORIZATION_SERVER_URL} and
 * {@code CAMUNDA_TOKEN_AUDIENCE}): a client configured by them alone fetches a client-credentials
 * token and deploys, creates an instance and completes its job with a worker, over REST and over
 * gRPC; without a token REST answers 401 and gRPC UNAUTHENTICATED. Skipped in the other suites.
 */
@EnabledIfEnvironmentVariable(named = "CAMUNDA_CLIENT_ID", matches = ".+")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OidcAuthTest {

  final BasicAuthTest flows = new BasicAuthTest();

  @Test
  void theEnvironmentsClientCredentialsWorkOverRest() throws Exception {
    try (CamundaClient client = BasicAuthTest.fromEnvironment(true)) {
      flows.deployCreateComplete(client, "oidcrest");
    }
  }

  @Test
  void theEnvironmentsClientCredentialsWorkOverGrpc() throws Exception {
    try (CamundaClient client = BasicAuthTest.fromEnvironment(false)) {
      flows.deployCreateComplete(client, "oidcgrpc");
    }
  }

  @Test
  void withoutATokenRestAnswers401AndGrpcUnauthenticated() {
    try (CamundaClient client = BasicAuthTest.with(new NoopCredentialsProvider(), true)) {
      ClientException e =
          assertThrows(ClientException.class, () -> client.newTopologyRequest().useRest().send().join());
      assertEquals(401, BasicAuthTest.cause(e, ClientHttpException.class).code(), e.toString());
    }
    try (CamundaClient client = BasicAuthTest.with(new NoopCredentialsProvider(), false)) {
      ClientException e =
          assertThrows(ClientException.class, () -> client.newTopologyRequest().useGrpc().send().join());
      ClientStatusException status = BasicAuthTest.cause(e, ClientStatusException.class);
      assertEquals(Status.Code.UNAUTHENTICATED, status.getStatusCode(), e.toString());
      assertTrue(status.getMessage().contains("Expected credentials"), status.getMessage());
    }
  }
}
