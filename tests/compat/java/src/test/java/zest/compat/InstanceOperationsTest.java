package zest.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.camunda.zeebe.client.ZeebeClient;
import io.camunda.zeebe.client.api.command.ClientStatusException;
import io.camunda.zeebe.client.api.response.ActivatedJob;
import io.camunda.zeebe.client.api.response.DeploymentEvent;
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
 * Instance operations with the official Java client 8.6 over gRPC: ModifyProcessInstance
 * (terminate a task, activate the next one with variables, activate an element inside a
 * sub-process that is not active; an unknown element is INVALID_ARGUMENT; a finished instance
 * is NOT_FOUND) and DeleteResource (refused while an instance runs, then the process is gone; a
 * second deletion is NOT_FOUND; a form version, after which the one before it is the latest) and
 * MigrateProcessInstance (an unmapped active element is
 * INVALID_STATE; mapped, the instance and its job move to the new version and run on there).
 * Process ids and job types carry a run id, so the test can run against a server
 * that keeps earlier runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InstanceOperationsTest {

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

  /** modify.bpmn with its process id and job types made unique to this run. */
  String model() throws Exception {
    return Files.readString(Path.of("../testdata/modify.bpmn"))
        .replace("id=\"modify\"", "id=\"modify_" + run + "\"")
        .replace("type=\"mod-", "type=\"mod-" + run + "-");
  }

  ActivatedJob one(String type) {
    for (int i = 0; i < 50; i++) {
      List<ActivatedJob> jobs =
          client
              .newActivateJobsCommand()
              .jobType("mod-" + run + "-" + type)
              .maxJobsToActivate(1)
              .requestTimeout(Duration.ofSeconds(1))
              .send()
              .join()
              .getJobs();
      if (!jobs.isEmpty()) return jobs.get(0);
    }
    throw new AssertionError("no job of type " + type);
  }

  @Test
  void modifyAProcessInstance() throws Exception {
    DeploymentEvent d =
        client.newDeployResourceCommand().addResourceStringUtf8(model(), "modify.bpmn").send().join();
    assertEquals(1, d.getProcesses().size());
    long pik =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("modify_" + run)
            .latestVersion()
            .variables(Map.of("x", 1))
            .send()
            .join()
            .getProcessInstanceKey();
    ActivatedJob a = one("a");

    // terminate task a, activate task b with a variable for the whole instance
    client
        .newModifyProcessInstanceCommand(pik)
        .activateElement("b")
        .withVariables(Map.of("y", 2))
        .and()
        .terminateElement(a.getElementInstanceKey())
        .send()
        .join();
    ActivatedJob b = one("b");
    assertEquals(Map.of("x", 1, "y", 2), b.getVariablesAsMap());
    // a's job is gone with its element
    ClientStatusException gone =
        assertThrows(
            ClientStatusException.class, () -> client.newCompleteCommand(a.getKey()).send().join());
    assertEquals(Status.Code.NOT_FOUND, gone.getStatusCode());

    // an element inside a sub-process that is not active: the sub-process is created for it
    client.newModifyProcessInstanceCommand(pik).activateElement("inner").send().join();
    ActivatedJob inner = one("inner");

    // an unknown element is rejected, naming it
    ClientStatusException unknown =
        assertThrows(
            ClientStatusException.class,
            () ->
                client.newModifyProcessInstanceCommand(pik).activateElement("nope").send().join());
    assertEquals(Status.Code.INVALID_ARGUMENT, unknown.getStatusCode());
    assertTrue(
        unknown.getMessage().contains("could not be found: 'nope'"), unknown.getMessage());

    // the sub-process completes and the flow goes on to the end; terminating b, the last
    // element, ends the instance
    client.newCompleteCommand(inner.getKey()).send().join();
    client
        .newModifyProcessInstanceCommand(pik)
        .terminateElement(b.getElementInstanceKey())
        .send()
        .join();
    ClientStatusException ended =
        assertThrows(
            ClientStatusException.class,
            () -> client.newModifyProcessInstanceCommand(pik).activateElement("b").send().join());
    assertEquals(Status.Code.NOT_FOUND, ended.getStatusCode());
  }

  /** A migrate_v*.bpmn with its process id and job types made unique to this run. */
  String migrationModel(String file) throws Exception {
    return Files.readString(Path.of("../testdata/" + file))
        .replace("id=\"migrate\"", "id=\"migrate_" + run + "\"")
        .replace("type=\"mig-", "type=\"mod-" + run + "-");
  }

  @Test
  void migrateAProcessInstance() throws Exception {
    client
        .newDeployResourceCommand()
        .addResourceStringUtf8(migrationModel("migrate_v1.bpmn"), "migrate_v1.bpmn")
        .send()
        .join();
    long pik =
        client
            .newCreateInstanceCommand()
            .bpmnProcessId("migrate_" + run)
            .latestVersion()
            .variables(Map.of("x", 1))
            .send()
            .join()
            .getProcessInstanceKey();
    DeploymentEvent v2 =
        client
            .newDeployResourceCommand()
            .addResourceStringUtf8(migrationModel("migrate_v2.bpmn"), "migrate_v2.bpmn")
            .send()
            .join();
    long target = v2.getProcesses().get(0).getProcessDefinitionKey();
    assertEquals(2, v2.getProcesses().get(0).getVersion());

    // the sub-process is active too and needs a mapping
    ClientStatusException unmapped =
        assertThrows(
            ClientStatusException.class,
            () ->
                client
                    .newMigrateProcessInstanceCommand(pik)
                    .migrationPlan(target)
                    .addMappingInstruction("a", "b")
                    .send()
                    .join());
    assertEquals(Status.Code.FAILED_PRECONDITION, unmapped.getStatusCode());
    assertTrue(
        unmapped.getMessage().contains("no mapping instruction defined for active element with id 'sub'"),
        unmapped.getMessage());

    client
        .newMigrateProcessInstanceCommand(pik)
        .migrationPlan(target)
        .addMappingInstruction("sub", "sub2")
        .addMappingInstruction("a", "b")
        .send()
        .join();
    // the job keeps its type and now belongs to element b of version 2
    ActivatedJob moved = one("a");
    assertEquals(pik, moved.getProcessInstanceKey());
    assertEquals("b", moved.getElementId());
    assertEquals(target, moved.getProcessDefinitionKey());
    assertEquals(2, moved.getProcessDefinitionVersion());
    client.newCompleteCommand(moved.getKey()).send().join();
    // version 2 goes on to task c, which version 1 does not have
    ActivatedJob c = one("c");
    assertEquals(pik, c.getProcessInstanceKey());
    assertEquals(Map.of("x", 1), c.getVariablesAsMap());
    client.newCompleteCommand(c.getKey()).send().join();
  }

  @Test
  void deleteAProcess() throws Exception {
    String model = model().replace("modify_" + run, "deletable_" + run);
    DeploymentEvent d =
        client.newDeployResourceCommand().addResourceStringUtf8(model, "deletable.bpmn").send().join();
    long key = d.getProcesses().get(0).getProcessDefinitionKey();
    long pik = createDeletable().getProcessInstanceKey();
    // keys carry their partition (key >> 51); resources live on partition 1, which refuses to
    // delete a version one of its instances runs. Another partition's instance runs to its end
    // and the version goes with it there (Zeebe's pending deletion).
    if ((pik >> 51) == 1) {
      ClientStatusException running =
          assertThrows(
              ClientStatusException.class, () -> client.newDeleteResourceCommand(key).send().join());
      assertEquals(Status.Code.FAILED_PRECONDITION, running.getStatusCode());
      assertTrue(running.getMessage().contains("still running instances"), running.getMessage());
      client.newCancelInstanceCommand(pik).send().join();
      client.newDeleteResourceCommand(key).send().join();
    } else {
      client.newDeleteResourceCommand(key).send().join();
      client.newCancelInstanceCommand(pik).send().join();
    }
    // the deletion reaches the other partitions by command distribution, so a creation routed
    // to one of them may still find the version for a moment; then none does
    int refusedInARow = 0;
    for (int attempt = 0; attempt < 100 && refusedInARow < 6; attempt++) {
      try {
        client.newCancelInstanceCommand(createDeletable().getProcessInstanceKey()).send().join();
        refusedInARow = 0;
        Thread.sleep(50);
      } catch (ClientStatusException gone) {
        assertEquals(Status.Code.NOT_FOUND, gone.getStatusCode());
        refusedInARow++;
      }
    }
    assertEquals(6, refusedInARow, "every partition refuses to create a deleted version");
    ClientStatusException again =
        assertThrows(
            ClientStatusException.class, () -> client.newDeleteResourceCommand(key).send().join());
    assertEquals(Status.Code.NOT_FOUND, again.getStatusCode());
  }

  private io.camunda.zeebe.client.api.response.ProcessInstanceEvent createDeletable() {
    return client
        .newCreateInstanceCommand()
        .bpmnProcessId("deletable_" + run)
        .latestVersion()
        .send()
        .join();
  }

  @Test
  void deleteAFormVersion() throws Exception {
    String form =
        Files.readString(Path.of("../testdata/review.form"))
            .replace("\"review-form\"", "\"review-form-" + run + "\"");
    DeploymentEvent v1 =
        client.newDeployResourceCommand().addResourceStringUtf8(form, "review.form").send().join();
    DeploymentEvent v2 =
        client
            .newDeployResourceCommand()
            .addResourceStringUtf8(form.replace("\"OK\"", "\"Done\""), "review.form")
            .send()
            .join();
    assertEquals(2, v2.getForm().get(0).getVersion());
    long key = v2.getForm().get(0).getFormKey();
    client.newDeleteResourceCommand(key).send().join();
    ClientStatusException again =
        assertThrows(
            ClientStatusException.class, () -> client.newDeleteResourceCommand(key).send().join());
    assertEquals(Status.Code.NOT_FOUND, again.getStatusCode());
    // version 1 is the latest again: deploying it unchanged is a duplicate of it
    DeploymentEvent same =
        client.newDeployResourceCommand().addResourceStringUtf8(form, "review.form").send().join();
    assertEquals(v1.getForm().get(0).getFormKey(), same.getForm().get(0).getFormKey());
  }
}
