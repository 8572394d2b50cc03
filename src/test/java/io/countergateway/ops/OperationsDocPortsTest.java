package io.countergateway.ops;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ports and port names docs/operations.md cites against the manifests of {@code k8s/}: every port number and port
 * name a row of its table of manifests gives is one the file declares, the port the text says the ServiceMonitor
 * scrapes is the one it scrapes, and a number the prose places "in" a manifest is there. A reader wiring a scrape, a
 * probe or a firewall from the page gets the manifests' ports.
 */
@DisplayName("The ports docs/operations.md cites against the k8s manifests")
class OperationsDocPortsTest {
  private static final Path PAGE = Path.of("docs/operations.md");
  private static final Pattern ROW = Pattern.compile("^\\| `(k8s/[^`]+\\.yaml)` \\| (.*) \\|$", Pattern.MULTILINE);
  /** "port 8080", "port 8081 `management`", "CG_MANAGEMENT_PORT=8081". */
  private static final Pattern PORT_NUMBER = Pattern.compile("\\bport (\\d{2,5})\\b|_PORT=(\\d{2,5})\\b");
  /** "port 8080 `http`", "port name `http`", "the Service's `management` port", "a port `management`". */
  private static final Pattern PORT_NAME = Pattern.compile(
    "\\bport \\d{2,5} `([a-z0-9-]+)`|port name `([a-z0-9-]+)`|`([a-z0-9-]+)` port\\b|\\ba port\\s+`([a-z0-9-]+)`");
  private static final Pattern SCRAPED = Pattern.compile(
    "`([a-z0-9-]+)` \\([^|)]*?which the ServiceMonitor scrapes|ServiceMonitor: scrapes the Service's `([a-z0-9-]+)` port"
      + "|the ServiceMonitor scrapes it \\(the Service has a port\\s+`([a-z0-9-]+)`");
  /** "(8081 in `k8s/base/statefulset.yaml`)". */
  private static final Pattern NUMBER_IN_FILE = Pattern.compile("\\b(\\d{2,5}) in `(k8s/[^`]+\\.yaml)`");
  private static final Path SERVICE = Path.of("k8s/base/service.yaml");

  private static String page;

  @BeforeAll
  static void read() throws IOException {
    page = Files.readString(PAGE);
  }

  @Test
  @DisplayName("each row of the manifests table cites only port numbers and port names its file declares")
  void rowsCiteTheManifestsPorts() {
    Matcher row = ROW.matcher(page);
    int rowsWithPorts = 0;
    while (row.find()) {
      Path file = Path.of(row.group(1));
      String text = row.group(2);
      Ports declared = Ports.of(file);
      List<Integer> numbers = all(PORT_NUMBER, text).stream().map(Integer::valueOf).toList();
      List<String> names = all(PORT_NAME, text);
      assertThat(declared.numbers()).as("%s: the port numbers its row cites", file).containsAll(numbers);
      assertThat(declared.names()).as("%s: the port names its row cites", file).containsAll(names);
      rowsWithPorts += numbers.isEmpty() && names.isEmpty() ? 0 : 1;
    }
    assertThat(rowsWithPorts).as("rows of the table that cite ports (the Service, the StatefulSet, the ServiceMonitor)")
      .isGreaterThanOrEqualTo(3);
  }

  @Test
  @DisplayName("the port the page says the ServiceMonitor scrapes is the Service's port it scrapes, the management one")
  void scrapedPortIsTheServiceMonitors() {
    List<String> said = all(SCRAPED, page);
    Set<String> scraped = Ports.of(MonitoringFiles.SERVICE_MONITOR).names();
    assertThat(said).as("what the page says is scraped").hasSizeGreaterThanOrEqualTo(3)
      .allSatisfy(name -> assertThat(scraped).containsExactly(name));
    assertThat(scraped).containsExactly("management");
    assertThat(Ports.of(SERVICE).names()).as("the Service's port names").containsAll(scraped);
  }

  @Test
  @DisplayName("a port number the prose places in a manifest is declared there")
  void numbersPlacedInAManifestAreThere() {
    Matcher placed = NUMBER_IN_FILE.matcher(page);
    int found = 0;
    while (placed.find()) {
      assertThat(Ports.of(Path.of(placed.group(2))).numbers()).as(placed.group()).contains(Integer.valueOf(placed.group(1)));
      found++;
    }
    assertThat(found).isPositive();
  }

  /** Every non-null group of every match of {@code pattern} in {@code text}. */
  private static List<String> all(Pattern pattern, String text) {
    List<String> found = new ArrayList<>();
    Matcher matcher = pattern.matcher(text);
    while (matcher.find()) {
      for (int group = 1; group <= matcher.groupCount(); group++) {
        if (matcher.group(group) != null) {
          found.add(matcher.group(group));
        }
      }
    }
    return found;
  }

  /**
   * The port numbers and names a manifest declares: {@code port}, {@code containerPort} and numeric {@code targetPort}
   * fields and {@code *_PORT} variables' values; the {@code name} of each entry of a {@code ports} list, named
   * {@code port}/{@code targetPort} references (a ServiceMonitor's endpoints, a probe's port, an Ingress backend's
   * {@code port.name}).
   */
  record Ports(Set<Integer> numbers, Set<String> names) {
    static Ports of(Path file) {
      Ports ports = new Ports(new TreeSet<>(), new TreeSet<>());
      try (var parser = Manifests.YAML.getFactory().createParser(file.toFile())) {
        for (JsonNode document : Manifests.YAML.readValues(parser, JsonNode.class).readAll()) {
          ports.walk(document, null);
        }
      } catch (IOException e) {
        throw new AssertionError(file + ": " + e.getMessage(), e);
      }
      return ports;
    }

    private void walk(JsonNode node, String field) {
      if (node == null) {
        return;
      }
      if (node.isObject()) {
        if (node.path("name").asText("").endsWith("_PORT") && node.path("value").asText("").matches("\\d+")) {
          numbers.add(Integer.valueOf(node.path("value").asText()));
        }
        if ("ports".equals(field) && node.path("name").isTextual()) {
          names.add(node.path("name").asText());
        }
        if ("port".equals(field) && node.path("name").isTextual()) {
          names.add(node.path("name").asText()); // an Ingress backend's service.port.name
        }
        if ("port".equals(field) && node.path("number").isInt()) {
          numbers.add(node.path("number").asInt());
        }
        Map<String, JsonNode> fields = new LinkedHashMap<>();
        node.fields().forEachRemaining(entry -> fields.put(entry.getKey(), entry.getValue()));
        fields.forEach((name, value) -> {
          if (Set.of("port", "containerPort", "targetPort").contains(name) && value.isInt()) {
            numbers.add(value.asInt());
          } else if (Set.of("port", "targetPort").contains(name) && value.isTextual()) {
            if (value.asText().matches("\\d+")) {
              numbers.add(Integer.valueOf(value.asText()));
            } else {
              names.add(value.asText());
            }
          } else {
            walk(value, name);
          }
        });
      } else if (node.isArray()) {
        node.forEach(item -> walk(item, field));
      }
    }
  }
}
