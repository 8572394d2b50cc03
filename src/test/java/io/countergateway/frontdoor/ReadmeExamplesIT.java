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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

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
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README and every page of {@code docs/}, run as a reader would run them: every {@code curl} command of their shell
 * examples, in order, with curl itself, against a fresh gateway per page with the namespaces of
 * {@code conf/gateway.yaml} on the test PostgreSQL; each answer compared with the {@code # <status> <body>} line the
 * page shows under the command ({@code …} in the body stands for a value that varies).
 */
class ReadmeExamplesIT {
  private static final Path README = Path.of("README.md");
  private static final Path DOCS = Path.of("docs");
  private static final Path SHIPPED_CONFIG = Path.of("conf", "gateway.yaml");
  private static final String DOCUMENTED_ENDPOINT = "localhost:8080";
  private static final Pattern ANSWER = Pattern.compile("# (\\d{3})(?: (.*))?");
  private static final Pattern TRAILING_COMMENT = Pattern.compile("\\s{2,}#.*$");
  /** An ellipsis standing for a value: made a string the comparison takes as "anything". */
  private static final Pattern ELLIPSIS_VALUE = Pattern.compile("(?<=[:\\[,])…(?=[,\\]}])");
  private static final String ANY = "…";
  private static final ObjectMapper JSON = new ObjectMapper();
  /** How long a read's answer may take to show what was written just before it. */
  private static final long READ_AGAIN_NANOS = TimeUnit.SECONDS.toNanos(3);

  record Example(String command, int status, String body) {
  }

  /** The README and the pages of docs/ that hold curl examples. */
  static Stream<Path> pages() throws IOException {
    List<Path> pages = new ArrayList<>(List.of(README));
    try (Stream<Path> docs = Files.list(DOCS)) {
      docs.filter(page -> page.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    List<Path> withExamples = new ArrayList<>();
    for (Path page : pages) {
      if (!examples(Files.readString(page)).isEmpty()) {
        withExamples.add(page);
      }
    }
    return withExamples.stream();
  }

  @Test
  @DisplayName("the README and the API page hold curl examples, each with the answer it gets")
  void examplesAreFound() throws IOException {
    assertThat(examples(Files.readString(README))).as("README curl examples").hasSizeGreaterThan(4);
    assertThat(examples(Files.readString(DOCS.resolve("api.md")))).as("docs/api.md curl examples").hasSizeGreaterThan(15);
    assertThat(pages()).contains(README, DOCS.resolve("api.md"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pages")
  @DisplayName("every curl example of a page answers what the page shows")
  void examplesAnswerAsDocumented(Path page, @TempDir Path workDir) throws Exception {
    Path curl = Path.of("/usr/bin/curl");
    Assumptions.assumeTrue(Files.isExecutable(curl), "curl is not installed (apt-get install curl)");
    List<Example> examples = examples(Files.readString(page));

    try (GatewayFixture gateway = GatewayFixture.start(shippedConfigOnTestDatabase())) {
      String endpoint = "127.0.0.1:" + gateway.gateway.port();
      List<String> mismatches = new ArrayList<>();
      for (Example example : examples) {
        String command = example.command().replace(DOCUMENTED_ENDPOINT, endpoint);
        Answer answer = ask(command, example, workDir);
        // a read right after a beacon or an accepted increment (answered once journaled, written with the next flush)
        // may come before that flush: a read is asked again for a while, a write never
        long deadline = System.nanoTime() + READ_AGAIN_NANOS;
        while (answer.problem() != null && isRead(command) && System.nanoTime() < deadline) {
          Thread.sleep(100);
          answer = ask(command, example, workDir);
        }
        if (answer.problem() != null) {
          mismatches.add(example.command() + "\n  " + page + ": " + example.status() + " " + example.body()
            + "\n  got:    " + answer.status() + " " + answer.body() + "\n  (" + answer.problem() + ")");
        }
      }
      assertThat(mismatches).as("examples whose answer differs from " + page).isEmpty();
    }
  }

  /** What a command got, and how it differs from what the page shows (null: it does not). */
  record Answer(int status, String body, String problem) {
  }

  private static Answer ask(String command, Example example, Path workDir) throws IOException, InterruptedException {
    String[] answer = run(command + " -s -w '\\n%{http_code}'", workDir);
    int status = Integer.parseInt(answer[1]);
    return new Answer(status, answer[0], status != example.status() ? "status " + status
      : mismatch(example.body(), answer[0]));
  }

  /** A command that only reads: a GET of anything but a beacon (which counts). */
  private static boolean isRead(String command) {
    return !command.contains("-X ") && !command.contains(" -d ") && !command.contains("--data")
      && !command.contains("/v1/beacon/");
  }

  /** The shipped default configuration, on the test database instead of an embedded one of its own. */
  private static JsonObject shippedConfigOnTestDatabase() throws IOException {
    JsonObject config = new JsonObject(new ObjectMapper(new YAMLFactory()).readValue(SHIPPED_CONFIG.toFile(), Map.class));
    config.put("database", TestDatabases.postgres().put("table", "readme_" + System.nanoTime() % 1_000_000_000));
    config.getJsonObject("http").put("port", 0);
    config.getJsonObject("journal").put("dir", GatewayFixture.freshJournalDir());
    return config;
  }

  /** The shell commands of a page's {@code bash} blocks that run curl, with their answers. */
  static List<Example> examples(String page) {
    List<String> lines = new ArrayList<>();
    boolean inShell = false;
    for (String line : page.split("\n")) {
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

  /** Null when {@code actual} is what the page shows; a body that is no JSON on the page is not compared. */
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
