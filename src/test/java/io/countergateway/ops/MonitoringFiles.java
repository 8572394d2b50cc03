package io.countergateway.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The Grafana dashboard and the alert rules under {@code k8s/monitoring/}, and the PromQL they hold. */
final class MonitoringFiles {
  static final Path DIR = Path.of("k8s/monitoring");
  static final Path ALERTS = DIR.resolve("alerts.yaml");
  static final Path ALERT_TESTS = DIR.resolve("alerts-test.yaml");
  static final Path DASHBOARD = DIR.resolve("counter-gateway-dashboard.json");
  static final Path SERVICE_MONITOR = DIR.resolve("servicemonitor.yaml");
  static final Path PROMETHEUS_RULE = DIR.resolve("prometheusrule.yaml");
  static final Path ADAPTER_RULES = DIR.resolve("prometheus-adapter-rules.yaml");
  private static final Pattern METRIC = Pattern.compile("\\b(?:gateway|vertx|jvm|process)_[a-z0-9_]+");

  private MonitoringFiles() {
  }

  static JsonNode dashboard() {
    return read(new ObjectMapper(), DASHBOARD);
  }

  static JsonNode alertRules() {
    return read(Manifests.YAML, ALERTS);
  }

  /** Every panel query, with Grafana's {@code $__rate_interval} as a plain range. */
  static List<String> dashboardQueries() {
    List<String> queries = new ArrayList<>();
    dashboard().path("panels").forEach(panel -> panel.path("targets")
      .forEach(target -> queries.add(target.path("expr").asText().replace("$__rate_interval", "5m"))));
    return queries;
  }

  static List<String> alertExpressions() {
    List<String> expressions = new ArrayList<>();
    alertRules().path("groups").forEach(group -> group.path("rules")
      .forEach(rule -> expressions.add(rule.path("expr").asText())));
    return expressions;
  }

  /** The metric names the dashboard and the alerts query. */
  static Set<String> metricNames() {
    Set<String> names = new TreeSet<>();
    List<String> all = new ArrayList<>(dashboardQueries());
    all.addAll(alertExpressions());
    for (String expression : all) {
      Matcher matcher = METRIC.matcher(expression);
      while (matcher.find()) {
        names.add(matcher.group());
      }
    }
    return names;
  }

  /**
   * The PrometheusRule for prometheus-operator: the groups of alerts.yaml, the one source of the rules, under the
   * object's header and {@code labels}.
   */
  static String prometheusRule(Map<String, String> labels) {
    ObjectNode rule = Manifests.YAML.createObjectNode();
    rule.put("apiVersion", "monitoring.coreos.com/v1");
    rule.put("kind", "PrometheusRule");
    ObjectNode metadata = rule.putObject("metadata");
    metadata.put("name", "counter-gateway");
    ObjectNode labelNode = metadata.putObject("labels");
    new TreeMap<>(labels).forEach(labelNode::put);
    rule.putObject("spec").set("groups", alertRules().path("groups"));
    YAMLMapper writer = YAMLMapper.builder()
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
      .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
      .enable(YAMLGenerator.Feature.LITERAL_BLOCK_STYLE)
      .disable(YAMLGenerator.Feature.SPLIT_LINES)
      .build();
    try {
      return "# Generated from alerts.yaml, the one source of the rules: do not edit. Write it anew after changing them:\n"
        + "#   mvn -o -q test -Dtest=KubernetesManifestsTest -Dmonitoring.write=true\n"
        + "# prometheus-operator picks it up where its ruleSelector matches these labels (add yours, e.g. release).\n"
        + writer.writeValueAsString(rule);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode read(ObjectMapper mapper, Path file) {
    try {
      return mapper.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
