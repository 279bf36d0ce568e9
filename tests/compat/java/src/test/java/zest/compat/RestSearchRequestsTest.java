package zest.compat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.camunda.client.CamundaClient;
import io.camunda.client.api.response.ActivatedJob;
import io.camunda.client.api.search.enums.ElementInstanceState;
import io.camunda.client.api.search.enums.IncidentErrorType;
import io.camunda.client.api.search.enums.JobState;
import io.camunda.client.api.search.enums.ProcessInstanceState;
import io.camunda.client.api.search.enums.UserTaskState;
import io.camunda.client.api.search.response.ElementInstance;
import io.camunda.client.api.search.response.Incident;
import io.camunda.client.api.search.response.ProcessDefinition;
import io.camunda.client.api.search.response.ProcessInstance;
import io.camunda.client.api.search.response.SearchResponse;
import io.camunda.client.api.search.response.UserTask;
import io.camunda.client.api.search.response.Variable;
import io.camunda.zeebe.model.bpmn.Bpmn;
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
 * The search requests of Camunda's Java client 8.8 with its defaults, as a user writes them:
 * a filter built with the client's lambdas, sorts and pages, asserting what the user checks.
 * Setup: three instances of a process (a job, then a user task): the first completed, the
 * second held at an incident (its job failed without retries), the third waiting at its job.
 *
 * <p>The client's filters carry empty lists for every condition that is not set ({@code
 * "$in":[]}, {@code "$notIn":[]}, {@code "tags":[]}, {@code "variables":[]}, {@code "$or":[]},
 * {@code "processInstanceVariables":[]}, {@code "localVariables":[]}), which Camunda reads as
 * no condition and Zest's filter compiler refuses (400): the tests that meet that are disabled
 * with the request, until the history search (crates/zest-history/src/filter.rs, the user task
 * search) takes them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestSearchRequestsTest {

  final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  final String process = "rest_search_" + run;
  final String type = "rest-search-" + run;
  CamundaClient client;
  long completed;
  long failed;
  long waiting;

  @BeforeAll
  void setUp() {
    String address = System.getenv("ZEEBE_ADDRESS");
    client = RestDefaultsTest.defaults("http://" + address);
    client
        .newDeployResourceCommand()
        .addProcessModel(
            Bpmn.createExecutableProcess(process)
                .name("REST search")
                .startEvent("start")
                .serviceTask("work", t -> t.zeebeJobType(type))
                .userTask("approve", u -> u.zeebeUserTask())
                .endEvent("end")
                .done(),
            process + ".bpmn")
        .send()
        .join();
    completed = create(1);
    failed = create(2);
    waiting = create(3);
    for (ActivatedJob job : jobs(2)) {
      long instance = job.getProcessInstanceKey();
      if (instance == completed) {
        client.newCompleteCommand(job).variables(Map.of("worked", "yes")).send().join();
      } else {
        client.newFailCommand(job).retries(0).errorMessage("no service").send().join();
      }
    }
  }

  @AfterAll
  void close() {
    if (client != null) client.close();
  }

  long create(int n) {
    return client
        .newCreateInstanceCommand()
        .bpmnProcessId(process)
        .latestVersion()
        .variables(Map.of("n", n))
        .send()
        .join()
        .getProcessInstanceKey();
  }

  /** The jobs of the first two instances (the third's stays unactivated). */
  List<ActivatedJob> jobs(int count) {
    List<ActivatedJob> got = new java.util.ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (got.size() < count && System.nanoTime() < deadline) {
      for (ActivatedJob j :
          client
              .newActivateJobsCommand()
              .jobType(type)
              .maxJobsToActivate(1)
              .requestTimeout(Duration.ofSeconds(1))
              .send()
              .join()
              .getJobs()) {
        if (j.getProcessInstanceKey() == waiting) {
          client.newFailCommand(j).retries(3).retryBackoff(Duration.ofMinutes(10)).send().join();
        } else {
          got.add(j);
        }
      }
    }
    assertEquals(count, got.size());
    return got;
  }

  @Test
  void incidentsByInstance() {
    SearchResponse<Incident> r =
        RestDefaultsTest.await(
            "the incident shows up",
            () ->
                client
                    .newIncidentSearchRequest()
                    .filter(f -> f.processInstanceKey(failed))
                    .send()
                    .join(),
            x -> x.items().size() == 1);
    Incident i = r.singleItem();
    assertEquals("no service", i.getErrorMessage());
    assertEquals(IncidentErrorType.JOB_NO_RETRIES, i.getErrorType());
    assertEquals("work", i.getElementId());
    assertEquals(process, i.getProcessDefinitionId());
  }

  @Test
  void processInstancesByDefinitionAndStateSortedAndPaged() {
    SearchResponse<ProcessInstance> first =
        RestDefaultsTest.await(
            "three instances",
            () ->
                client
                    .newProcessInstanceSearchRequest()
                    .filter(f -> f.processDefinitionId(process).state(ProcessInstanceState.ACTIVE))
                    .sort(s -> s.processInstanceKey().desc())
                    .page(p -> p.limit(2))
                    .send()
                    .join(),
            r -> r.page().totalItems() == 3);
    // keys in descending order (over several partitions a key's partition is in its high bits,
    // so the order of keys is not the order of creation)
    List<Long> byKey =
        java.util.stream.Stream.of(completed, failed, waiting)
            .sorted(java.util.Comparator.reverseOrder())
            .toList();
    assertEquals(byKey.subList(0, 2), first.items().stream().map(ProcessInstance::getProcessInstanceKey).toList());
    SearchResponse<ProcessInstance> second =
        client
            .newProcessInstanceSearchRequest()
            .filter(f -> f.processDefinitionId(process).state(ProcessInstanceState.ACTIVE))
            .sort(s -> s.processInstanceKey().desc())
            .page(p -> p.limit(2).after(first.page().endCursor()))
            .send()
            .join();
    assertEquals(byKey.subList(2, 3), second.items().stream().map(ProcessInstance::getProcessInstanceKey).toList());
    ProcessInstance withIncident =
        client
            .newProcessInstanceSearchRequest()
            .filter(f -> f.processInstanceKey(failed))
            .send()
            .join()
            .singleItem();
    assertTrue(withIncident.getHasIncident());
    assertEquals("REST search", withIncident.getProcessDefinitionName());
  }

  @Test
  void processDefinitionsById() {
    ProcessDefinition d =
        client
            .newProcessDefinitionSearchRequest()
            .filter(f -> f.processDefinitionId(process))
            .send()
            .join()
            .singleItem();
    assertEquals(1, d.getVersion());
    assertEquals("REST search", d.getName());
  }

  @Test
  void elementInstancesOfAnInstanceSortedByKey() {
    List<ElementInstance> items =
        RestDefaultsTest.await(
                "the user task's element is active",
                () ->
                    client
                        .newElementInstanceSearchRequest()
                        .filter(f -> f.processInstanceKey(completed))
                        .sort(s -> s.elementInstanceKey().asc())
                        .send()
                        .join(),
                r -> r.items().size() == 3)
            .items();
    assertEquals(List.of("start", "work", "approve"), items.stream().map(ElementInstance::getElementId).toList());
    assertEquals(ElementInstanceState.COMPLETED, items.get(1).getState());
    assertEquals(ElementInstanceState.ACTIVE, items.get(2).getState());
  }

  @Test
  void variablesOfAnInstanceByName() {
    Variable v =
        RestDefaultsTest.await(
                "the job's variable shows up",
                () ->
                    client
                        .newVariableSearchRequest()
                        .filter(f -> f.processInstanceKey(completed).name("worked"))
                        .send()
                        .join(),
                r -> r.items().size() == 1)
            .singleItem();
    assertEquals("\"yes\"", v.getValue());
    assertEquals(completed, v.getScopeKey());
    assertFalse(v.isTruncated());
  }

  @Test
  void userTasksOfAnInstance() {
    UserTask t =
        RestDefaultsTest.await(
                "the user task shows up",
                () ->
                    client
                        .newUserTaskSearchRequest()
                        .filter(f -> f.processInstanceKey(completed))
                        .send()
                        .join(),
                r -> r.items().size() == 1)
            .singleItem();
    assertEquals(UserTaskState.CREATED, t.getState());
    assertEquals("approve", t.getElementId());
    assertNotNull(t.getCreationDate());
  }

  @Test
  void jobsOfTheProcessByStateSortedByKey() {
    var jobs =
        client
            .newJobSearchRequest()
            .filter(f -> f.processDefinitionId(process))
            .sort(s -> s.jobKey().asc())
            .send()
            .join()
            .items();
    assertEquals(3, jobs.size(), jobs.toString());
    assertEquals(
        List.of(JobState.COMPLETED, JobState.FAILED),
        jobs.stream()
            .filter(j -> j.getProcessInstanceKey() != waiting)
            .map(j -> j.getState())
            .sorted()
            .toList());
  }
}
