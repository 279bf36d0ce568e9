package zest.spring;

import io.camunda.client.annotation.Deployment;
import io.camunda.client.annotation.JobWorker;
import io.camunda.client.annotation.Variable;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring Boot application as Camunda's docs teach it: the starter's defaults, its processes
 * deployed at startup by {@code @Deployment}, its jobs done by {@code @JobWorker} methods
 * (auto-completed with what they return).
 */
@SpringBootApplication
@Deployment(resources = "classpath*:/bpmn/**")
public class OrderApp {

  /** The order ids charged, for the test to see that the worker ran. */
  public static final Set<String> CHARGED = ConcurrentHashMap.newKeySet();

  public static void main(String[] args) {
    SpringApplication.run(OrderApp.class, args);
  }

  @JobWorker(type = "spring-charge")
  public Map<String, Object> charge(@Variable String orderId, @Variable Integer amount) {
    CHARGED.add(orderId);
    return Map.of("charged", amount);
  }

  @JobWorker(type = "spring-double")
  public Map<String, Object> doubleIt(@Variable Integer x) {
    return Map.of("doubled", 2 * x);
  }
}
