package io.countergateway.frontdoor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's API section, run as a reader would run it: every {@code curl} command of its shell examples, in order,
 * with curl itself, against a gateway with the namespaces of {@code conf/gateway.yaml} on the test PostgreSQL; each
 * answer compared with the {@code # <status> <body>} line the README shows under the command ({@code …} in the body
 * stands for a value that varies).
 */
class ReadmeExamplesIT {
  private static final Path README = Path.of("README.md");
  private static final Path SHIPPED_CONFIG = Path.of("conf", "gateway.yaml");
  private static final String DOCUMENTED_ENDPOINT = "localhost:8080";
  private static final Pattern ANSWER = Pattern.compile("# (\\d{3})(?: (.*))?");
  private static final Pattern TRAILING_COMMENT = Pattern.compile("\\s{2,}#.*$");
  /** An ellipsis standing for a value: made a string the comparison takes as "anything". */
  private static final Pattern ELLIPSIS_VALUE = Pattern.compile("(?<=[:\\[,])…(?=[,\\]}])");
  private static final String ANY = "…";
  private static final ObjectMapper JSON = new ObjectMapper();

  record Example(String command, int status, String body) {
  }

  @Test
  @DisplayName("every curl example of the README's API section answers what the README shows")
  void examplesAnswerAsDocumented(@TempDir Path workDir) throws Exception {
    Path curl = Path.of("/usr/bin/curl");
    Assumptions.assumeTrue(Files.isExecutable(curl), "curl is not installed (apt-get install curl)");
    List<Example> examples = examples(Files.readString(README));
    assertThat(examples).as("curl examples with their answers").hasSizeGreaterThan(15);

    try (GatewayFixture gateway = GatewayFixture.start(shippedConfigOnTestDatabase())) {
      String endpoint = "127.0.0.1:" + gateway.gateway.port();
      List<String> mismatches = new ArrayList<>();
      for (Example example : examples) {
        String command = example.command().replace(DOCUMENTED_ENDPOINT, endpoint);
        String[] answer = run(command + " -s -w '\\n%{http_code}'", workDir);
        int status = Integer.parseInt(answer[1]);
        String problem = status != example.status() ? "status " + status
          : mismatch(example.body(), answer[0]);
        if (problem != null) {
          mismatches.add(example.command() + "\n  README: " + example.status() + " " + example.body()
            + "\n  got:    " + status + " " + answer[0] + "\n  (" + problem + ")");
        }
      }
      assertThat(mismatches).as("examples whose answer differs from the README").isEmpty();
    }
  }

  /** The shipped default configuration, on the test database instead of an embedded one of its own. */
  private static JsonObject shippedConfigOnTestDatabase() throws IOException {
    JsonObject config = new JsonObject(new ObjectMapper(new YAMLFactory()).readValue(SHIPPED_CONFIG.toFile(), Map.class));
    config.put("database", TestDatabases.postgres().put("table", "readme_" + System.nanoTime() % 1_000_000_000));
    config.getJsonObject("http").put("port", 0);
    config.getJsonObject("journal").put("dir", GatewayFixture.freshJournalDir());
    return config;
  }

  /** The shell commands of the section {@code ## The API} (up to the next section) that run curl, with their answers. */
  static List<Example> examples(String readme) {
    int start = readme.indexOf("\n## The API\n");
    int end = readme.indexOf("\n## ", start + 1);
    assertThat(start).as("README has ## The API").isPositive();
    List<String> lines = new ArrayList<>();
    boolean inShell = false;
    for (String line : readme.substring(start, end).split("\n")) {
      if (line.startsWith("```")) {
        inShell = line.equals("```bash");
        continue;
      }
      if (inShell) {
        lines.add(line);
      }
    }
    List<Example> examples = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      StringBuilder command = new StringBuilder(lines.get(i));
      // a command continues after a trailing backslash or pipe
      while ((command.toString().endsWith("\\") || command.toString().endsWith("|")) && i + 1 < lines.size()) {
        if (command.charAt(command.length() - 1) == '\\') {
          command.setLength(command.length() - 1);
        }
        command.append(' ').append(lines.get(++i).strip());
      }
      String text = TRAILING_COMMENT.matcher(command).replaceFirst("").strip();
      if (text.startsWith("#") || !text.contains("curl ")) {
        continue;
      }
      Matcher answer = i + 1 < lines.size() ? ANSWER.matcher(lines.get(i + 1)) : null;
      assertThat(answer != null && answer.matches()).as("a '# <status> <body>' line under: " + text).isTrue();
      examples.add(new Example(text, Integer.parseInt(answer.group(1)), answer.group(2)));
    }
    return examples;
  }

  /** The body written out and the status, by bash as a reader's shell would run the command. */
  private static String[] run(String command, Path workDir) throws IOException, InterruptedException {
    Process process = new ProcessBuilder("bash", "-c", command).directory(workDir.toFile())
      .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).as(command).isTrue();
    int lastLine = output.lastIndexOf('\n');
    return new String[] {output.substring(0, lastLine), output.substring(lastLine + 1).strip()};
  }

  /** Null when {@code actual} is what the README shows; a body that is no JSON in the README is not compared. */
  private static String mismatch(String documented, String actual) throws IOException {
    if (documented == null || !(documented.startsWith("{") || documented.startsWith("["))) {
      return null;
    }
    JsonNode expected = JSON.readTree(ELLIPSIS_VALUE.matcher(documented).replaceAll("\"" + ANY + "\""));
    JsonNode got;
    try {
      got = JSON.readTree(actual);
    } catch (IOException notJson) {
      return "not JSON";
    }
    return differs(expected, got, "$");
  }

  private static String differs(JsonNode expected, JsonNode actual, String where) {
    if (expected.isTextual() && expected.asText().equals(ANY)) {
      return null;
    }
    if (expected.isObject()) {
      if (!actual.isObject()) {
        return where + " is not an object";
      }
      List<String> expectedNames = new ArrayList<>();
      expected.fieldNames().forEachRemaining(expectedNames::add);
      List<String> actualNames = new ArrayList<>();
      actual.fieldNames().forEachRemaining(actualNames::add);
      if (!expectedNames.equals(actualNames)) {
        return where + " has fields " + actualNames;
      }
      for (Iterator<String> names = expected.fieldNames(); names.hasNext(); ) {
        String name = names.next();
        String problem = differs(expected.get(name), actual.get(name), where + "." + name);
        if (problem != null) {
          return problem;
        }
      }
      return null;
    }
    if (expected.isArray()) {
      if (!actual.isArray() || actual.size() != expected.size()) {
        return where + " is not an array of " + expected.size();
      }
      for (int i = 0; i < expected.size(); i++) {
        String problem = differs(expected.get(i), actual.get(i), where + "[" + i + "]");
        if (problem != null) {
          return problem;
        }
      }
      return null;
    }
    return expected.asText().equals(actual.asText()) && expected.isNumber() == actual.isNumber() ? null
      : where + " is " + actual;
  }
}
