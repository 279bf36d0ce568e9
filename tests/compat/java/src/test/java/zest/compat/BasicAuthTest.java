package zest.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.camunda.client.CamundaClient;
import io.camunda.client.CredentialsProvider;
import io.camunda.client.api.command.ClientException;
import io.camunda.client.api.command.ClientHttpException;
import io.camunda.client.api.command.ClientStatusException;
import io.camunda.client.api.response.ProcessInstanceEvent;
import io.camunda.client.api.worker.JobWorker;
import io.camunda.client.impl.NoopCredentialsProvider;
import io.camunda.zeebe.model.bpmn.Bpmn;
import io.grpc.Status;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * Camunda's Java client 8.8 against a node with {@code --auth basic} (run.sh's {@code auth}
 * suite, which sets the client's own variables {@code CAMUNDA_BASIC_AUTH_USERNAME} and
 * {@code _PASSWORD}; the plain client reads no {@code CAMUNDA_AUTH_METHOD}, that is the Spring
 * starter's {@code camunda.client.auth.method}): a client configured by those variables alone,
 * and one built with {@code CredentialsProvider.newBasicAuthCredentialsProviderBuilder()}, deploy,
 * create an instance and complete its job with a worker, over REST and over gRPC; without
 * credentials or with a wrong password REST answers 401 and gRPC UNAUTHENTICATED. Skipped in the
 * other suites (their nodes have no authentication).
 */
@EnabledIfEnvironmentVariable(named = "CAMUNDA_BASIC_AUTH_USERNAME", matches = ".+")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BasicAuthTest {

  final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);

  static URI grpcAddress() {
    String a = System.getenv("ZEEBE_ADDRESS");
    if (a == null || a.isBlank()) fail("set ZEEBE_ADDRESS=host:port of the gRPC gateway");
    return URI.create(a.startsWith("http") ? a : "http://" + a);
  }

  static URI restAddress() {
    String a = System.getenv("ZEEBE_REST_ADDRESS");
    if (a == null || a.isBlank()) fail("set ZEEBE_REST_ADDRESS=http://host:port of the REST API");
    return URI.create(a.startsWith("http") ? a : "http://" + a);
  }

  /** A client configured by the environment (CAMUNDA_BASIC_AUTH_*), as a user's would be. */
  static CamundaClient fromEnvironment(boolean rest) {
    return CamundaClient.newClientBuilder()
        .grpcAddress(grpcAddress())
        .restAddress(restAddress())
        .preferRestOverGrpc(rest)
        .build();
  }

  /** A client with the given credentials and no environment overrides. */
  static CamundaClient with(CredentialsProvider credentials, boolean rest) {
    return CamundaClient.newClientBuilder()
        .applyEnvironmentVariableOverrides(false)
        .grpcAddress(grpcAddress())
        .restAddress(restAddress())
        .preferRestOverGrpc(rest)
        .credentialsProvider(credentials)
        .build();
  }

  /**
   * The builder's Basic credentials. Without {@code applyEnvironmentOverrides(false)} the
   * builder takes CAMUNDA_BASIC_AUTH_USERNAME/PASSWORD over the values it is given.
   */
  static CredentialsProvider basic(String user, String password) {
    return CredentialsProvider.newBasicAuthCredentialsProviderBuilder()
        .applyEnvironmentOverrides(false)
        .username(user)
        .password(password)
        .build();
  }

  /** Deploys a one-task process, creates an instance and lets a worker complete its job. */
  void deployCreateComplete(CamundaClient client, String via) throws Exception {
    String process = "auth_" + via + "_" + run;
    String type = "auth-" + via + "-" + run;
    client
        .newDeployResourceCommand()
        .addProcessModel(
            Bpmn.createExecutableProcess(process)
                .startEvent()
                .serviceTask("work", t -> t.zeebeJobType(type))
                .endEvent()
                .done(),
            process + ".bpmn")
        .send()
        .join();
    CompletableFuture<Long> completed = new CompletableFuture<>();
    try (JobWorker worker =
        client
            .newWorker()
            .jobType(type)
            .handler(
                (jobClient, job) -> {
                  jobClient.newCompleteCommand(job).send().join();
                  completed.complete(job.getProcessInstanceKey());
                })
            .pollInterval(Duration.ofMillis(100))
            .open()) {
      ProcessInstanceEvent created =
          client
              .newCreateInstanceCommand()
              .bpmnProcessId(process)
              .latestVersion()
              .send()
              .join();
      assertEquals(
          created.getProcessInstanceKey(),
          completed.get(30, TimeUnit.SECONDS),
          via + ": the worker completed the instance's job");
    }
  }

  @Test
  void theEnvironmentsCredentialsWorkOverRest() throws Exception {
    try (CamundaClient client = fromEnvironment(true)) {
      deployCreateComplete(client, "envrest");
    }
  }

  @Test
  void theEnvironmentsCredentialsWorkOverGrpc() throws Exception {
    try (CamundaClient client = fromEnvironment(false)) {
      deployCreateComplete(client, "envgrpc");
    }
  }

  @Test
  void theBuildersCredentialsWorkOnBoth() throws Exception {
    String user = System.getenv("CAMUNDA_BASIC_AUTH_USERNAME");
    String password = System.getenv("CAMUNDA_BASIC_AUTH_PASSWORD");
    try (CamundaClient client = with(basic(user, password), true)) {
      deployCreateComplete(client, "buildrest");
    }
    try (CamundaClient client = with(basic(user, password), false)) {
      deployCreateComplete(client, "buildgrpc");
    }
  }

  @Test
  void withoutOrWithWrongCredentialsRestAnswers401() {
    for (CredentialsProvider c : new CredentialsProvider[] {new NoopCredentialsProvider(), basic("demo", "wrong")}) {
      try (CamundaClient client = with(c, true)) {
        ClientException e =
            assertThrows(
                ClientException.class,
                () -> client.newTopologyRequest().useRest().send().join(),
                c.getClass().getSimpleName());
        ClientHttpException http = cause(e, ClientHttpException.class);
        assertEquals(401, http.code(), e.toString());
      }
    }
  }

  @Test
  void withoutOrWithWrongCredentialsGrpcAnswersUnauthenticated() {
    for (CredentialsProvider c : new CredentialsProvider[] {new NoopCredentialsProvider(), basic("demo", "wrong")}) {
      try (CamundaClient client = with(c, false)) {
        ClientException e =
            assertThrows(
                ClientException.class,
                () -> client.newTopologyRequest().useGrpc().send().join(),
                c.getClass().getSimpleName());
        ClientStatusException status = cause(e, ClientStatusException.class);
        assertEquals(Status.Code.UNAUTHENTICATED, status.getStatusCode(), e.toString());
        assertTrue(status.getMessage().contains("Expected"), status.getMessage());
      }
    }
  }

  static <T extends Throwable> T cause(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) return type.cast(t);
    }
    throw new AssertionError("expected a " + type.getSimpleName() + " in " + e, e);
  }
}
