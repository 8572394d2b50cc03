package io.countergateway.ops;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The alert rules and the dashboard under {@code k8s/monitoring/}, checked by Prometheus's own promtool. */
class MonitoringTest {
  private static final Path RUNBOOKS = Path.of("docs", "operations.md");

  @Test
  @DisplayName("the alert rules are valid and their unit tests pass under promtool")
  void alertRulesPassTheirTests() throws Exception {
    Promtool.assumeInstalled();
    Promtool.Result check = Promtool.run(null, "check", "rules", MonitoringFiles.ALERTS.toString());
    assertThat(check.exitCode()).as(check.output()).isZero();
    Promtool.Result test = Promtool.run(null, "test", "rules", MonitoringFiles.ALERT_TESTS.toString());
    assertThat(test.exitCode()).as(test.output()).isZero();
    assertThat(test.output()).contains("SUCCESS");
  }

  @Test
  @DisplayName("alerts exist for shedding, failing flushes, flush lag, 5xx rate, journal backlog age and size, not ready "
    + "and a high flush p99, each with its test")
  void alertsCoverTheIssue() throws Exception {
    List<String> names = new ArrayList<>();
    MonitoringFiles.alertRules().path("groups").forEach(group -> group.path("rules")
      .forEach(rule -> names.add(rule.path("alert").asText())));
    assertThat(names).containsExactlyInAnyOrder("CounterGatewayShedding", "CounterGatewayFlushesFailing",
      "CounterGatewayNotReady", "CounterGatewayFlushP99High", "CounterGatewayHigh5xxRate", "CounterGatewayFlushLag",
      "CounterGatewayJournalBacklogOld", "CounterGatewayJournalBacklogLarge");
    String tests = Files.readString(MonitoringFiles.ALERT_TESTS);
    assertThat(names).allSatisfy(name -> assertThat(tests).contains("alertname: " + name));
  }

  @Test
  @DisplayName("every alert's runbook_url points at its runbook, a section of docs/operations.md named after the alert")
  void everyAlertHasARunbookInTheOperationsDocs() throws Exception {
    Set<String> anchors = new HashSet<>();
    for (String line : Files.readAllLines(RUNBOOKS)) {
      if (line.startsWith("#")) {
        // GitHub's anchors: lower case, spaces to hyphens, punctuation other than hyphens dropped
        anchors.add(line.replaceFirst("^#+\\s*", "").strip().toLowerCase(Locale.ROOT)
          .replaceAll("[^a-z0-9 _-]", "").replace(' ', '-'));
      }
    }
    MonitoringFiles.alertRules().path("groups").forEach(group -> group.path("rules").forEach(rule -> {
      String name = rule.path("alert").asText();
      String url = rule.path("annotations").path("runbook_url").asText();
      assertThat(url).as(name + " runbook_url").endsWith("/docs/operations.md#" + name.toLowerCase(Locale.ROOT));
      assertThat(anchors).as(RUNBOOKS + " headings").contains(url.substring(url.indexOf('#') + 1));
    }));
  }

  @Test
  @DisplayName("the dashboard shows requests, batching factor, flush p99, pending, waiting, retries, shedding and readiness")
  void dashboardPanels() {
    JsonNode dashboard = MonitoringFiles.dashboard();
    List<String> titles = new ArrayList<>();
    dashboard.path("panels").forEach(panel -> {
      titles.add(panel.path("title").asText());
      assertThat(panel.path("description").asText()).as(panel.path("title").asText()).isNotBlank();
      assertThat(panel.path("targets")).as(panel.path("title").asText()).isNotEmpty();
    });
    assertThat(titles).contains("Requests by status", "Batching factor (increments per row written)",
      "Flush duration p99", "Pending counters", "Waiting requests", "Flush retries", "Shedding and failing coalescers",
      "Readiness");
  }

  @Test
  @DisplayName("every dashboard query is valid PromQL (promtool reads them as recording rules)")
  void dashboardQueriesParse(@TempDir Path dir) throws Exception {
    Promtool.assumeInstalled();
    StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
    List<String> queries = MonitoringFiles.dashboardQueries();
    for (int i = 0; i < queries.size(); i++) {
      rules.append("      - record: dashboard:query_").append(i).append("\n        expr: '")
        .append(queries.get(i).replace("'", "''")).append("'\n");
    }
    Path file = dir.resolve("dashboard-rules.yaml");
    Files.writeString(file, rules);
    Promtool.Result check = Promtool.run(null, "check", "rules", file.toString());
    assertThat(check.exitCode()).as(check.output()).isZero();
  }
}
