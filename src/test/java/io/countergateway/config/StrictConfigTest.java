package io.countergateway.config;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(VertxExtension.class)
class StrictConfigTest {

  @Test
  @DisplayName("a mistyped key in the YAML file stops start-up naming it and the nearest known key")
  void mistypedYamlKey(Vertx vertx, @TempDir Path dir) throws Exception {
    Path file = dir.resolve("gateway.yaml");
    Files.writeString(file, """
      batching:
        maxDelayMz: 2
      namespaces:
        likes: { slots: 4 }
      """);
    assertThatThrownBy(() -> await(ConfigLoader.load(vertx, file.toString())))
      .hasRootCauseInstanceOf(ConfigException.class)
      .rootCause().hasMessage("batching.maxDelayMz: unknown key (did you mean batching.maxDelay?)");
  }

  @Test
  @DisplayName("a mistyped CG_ variable stops start-up naming it and the nearest known variable")
  void mistypedVariable() {
    assertThatThrownBy(() -> ConfigLoader.applyEnvironment(minimal(), Map.of("CG_HTTP_PORTT", "9090")))
      .isInstanceOf(ConfigException.class)
      .hasMessage("CG_HTTP_PORTT: unknown variable (did you mean CG_HTTP_PORT?)");
  }

  @Test
  @DisplayName("java -jar with a mistyped variable or key exits with status 2 and the one line naming it")
  void startUpRefuses(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("gateway.yaml");
    Files.writeString(file, "batching:\n  maxDelayMz: 2\nnamespaces:\n  likes: {}\n");
    assertThat(runMain(Map.of("CG_HTTP_PORTT", "9090"), "--config", "conf/gateway.yaml"))
      .isEqualTo("2 configuration error: CG_HTTP_PORTT: unknown variable (did you mean CG_HTTP_PORT?)");
    assertThat(runMain(Map.of(), "--config", file.toString()))
      .isEqualTo("2 configuration error: batching.maxDelayMz: unknown key (did you mean batching.maxDelay?)");
  }

  @Test
  @DisplayName("CG_NAMESPACES declares namespaces besides the file's, whose keys are then variables too")
  void namespacesFromTheEnvironment() {
    JsonObject merged = ConfigLoader.applyEnvironment(minimal(), Map.of(
      "CG_NAMESPACES", "visits, page-views",
      "CG_NAMESPACES_VISITS_PUBLIC", "true",
      "CG_NAMESPACES_VISITS_WINDOW_BUCKET", "day",
      "CG_NAMESPACES_PAGE_VIEWS_SLOTS", "32"));
    GatewayConfig config = GatewayConfig.fromJson(merged);

    // the windowed one brings its companions, right after it
    assertThat(config.getNamespaces().keySet()).containsExactly("likes", "visits", "visits~site", "visits~sources",
      "visits~campaigns", "visits~browsers", "visits~os", "visits~devices", "visits~minutes", "page-views");
    assertThat(config.namespace("visits").isPublic()).isTrue();
    assertThat(config.namespace("visits").getWindow().getBucket()).isEqualTo(WindowOptions.Bucket.DAY);
    assertThat(config.namespace("visits").getSlots()).isEqualTo(NamespaceOptions.SLOTS.defaultValue());
    assertThat(config.namespace("page-views").getSlots()).isEqualTo(32);
    assertThat(config.namespace("page-views").isWindowed()).isFalse();
    assertThat(config.namespace("likes").getSlots()).as("the file's own").isEqualTo(4);
  }

  @Test
  @DisplayName("a variable of a namespace nobody declared says where namespaces are declared, and does not suggest another namespace's")
  void undeclaredNamespaceVariable() {
    assertThatThrownBy(() -> ConfigLoader.applyEnvironment(minimal(), Map.of("CG_NAMESPACES_VISITS_SLOTS", "16"),
      "conf/container.yaml"))
      .isInstanceOf(ConfigException.class)
      .hasMessage("CG_NAMESPACES_VISITS_SLOTS: names a key of namespace visits, which is not declared: "
        + "declare it under namespaces: in conf/container.yaml, or in CG_NAMESPACES (CG_NAMESPACES=visits)");
    assertThatThrownBy(() -> ConfigLoader.applyEnvironment(minimal(), Map.of("CG_NAMESPACES_LIKSE_SLOTS", "16")))
      .hasMessageEndingWith("(CG_NAMESPACES=likse) (did you mean CG_NAMESPACES_LIKES_SLOTS?)");
    assertThatThrownBy(() -> ConfigLoader.applyEnvironment(minimal(), Map.of("CG_NAMESPACES", "Visits!")))
      .hasMessageStartingWith("CG_NAMESPACES: 'Visits!' is not a namespace name: a namespace name must be 1-64 of");
    assertThatThrownBy(() -> ConfigLoader.applyEnvironment(minimal(), Map.of("CG_NAMESPACES_LIKES_SLOTZ", "16")))
      .hasMessage("CG_NAMESPACES_LIKES_SLOTZ: unknown variable (did you mean CG_NAMESPACES_LIKES_SLOTS?)");
  }

  @Test
  @DisplayName("a duration key under its former name is refused in one line naming the new key and the value to write")
  void formerDurationKey(Vertx vertx, @TempDir Path dir) throws Exception {
    Path file = dir.resolve("gateway.yaml");
    Files.writeString(file, """
      batching:
        maxDelayMs: 5
      namespaces:
        likes: { slots: 4, window: { bucket: hour, expiryIntervalSeconds: 120 } }
      """);
    assertThatThrownBy(() -> await(ConfigLoader.load(vertx, file.toString())))
      .rootCause().hasMessage("batching.maxDelayMs: is now batching.maxDelay, a duration such as 5ms");
    JsonObject windowed = minimal();
    windowed.getJsonObject("namespaces").getJsonObject("likes").put("window", new JsonObject().put("bucket", "hour")
      .put("expiryIntervalSeconds", 120));
    assertThatThrownBy(() -> GatewayConfig.fromJson(windowed)).hasMessage(
      "namespaces.likes.window.expiryIntervalSeconds: is now namespaces.likes.window.expiryInterval, a duration such as 2m");
    JsonObject rollup = minimal().put("rollups", new io.vertx.core.json.JsonArray().add(new JsonObject()
      .put("namespace", "likes").put("table", "t").put("keyColumn", "k").put("valueColumn", "v").put("intervalSeconds", "soon")));
    assertThatThrownBy(() -> GatewayConfig.fromJson(rollup))
      .hasMessage("rollups[0].intervalSeconds: is now rollups[0].interval, a duration such as 10s");
  }

  @Test
  @DisplayName("a CG_ variable under a duration key's former name is refused naming the new variable and the value")
  void formerDurationVariable() {
    assertThatThrownBy(() -> ConfigLoader.applyEnvironment(minimal(), Map.of("CG_BATCHING_MAX_DELAY_MS", "5")))
      .isInstanceOf(ConfigException.class)
      .hasMessage("CG_BATCHING_MAX_DELAY_MS: is now CG_BATCHING_MAX_DELAY (batching.maxDelay), a duration such as 5ms");
    assertThatThrownBy(() -> ConfigLoader.applyEnvironment(minimal(), Map.of("CG_SHUTDOWN_TIMEOUT_MS", "20000")))
      .hasMessage("CG_SHUTDOWN_TIMEOUT_MS: is now CG_SHUTDOWN_TIMEOUT (shutdown.timeout), a duration such as 20s");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"lanes.enabled", "batching.exactlyOnce"})
  @DisplayName("a key that is no more is refused saying what took its place, in the file and as a variable")
  void retiredKeys(String key) {
    JsonObject raw = minimal();
    ConfigLoader.put(raw, key, "false");
    assertThatThrownBy(() -> GatewayConfig.fromJson(raw)).isInstanceOf(ConfigException.class)
      .hasMessageStartingWith(key + ": is no longer a key: ");
    String variable = ConfigLoader.envName(key);
    assertThatThrownBy(() -> ConfigLoader.applyEnvironment(minimal(), Map.of(variable, "false")))
      .hasMessageStartingWith(variable + ": is no longer a variable (" + key + "): ");
  }

  /**
   * The exit status and the message of the error lines of {@code Main} run in its own JVM, as an operator starts it
   * (its log on standard output and error together, as a container's log has them).
   */
  private static String runMain(Map<String, String> env, String... args) throws Exception {
    // C1 only and the serial collector: a JVM that refuses its configuration lives a second, and starts sooner so
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
      "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
      "io.countergateway.Main"));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().keySet().removeIf(name -> name.startsWith(ConfigLoader.ENV_PREFIX));
    builder.environment().putAll(env);
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String errors = output.lines().filter(line -> line.contains(" ERROR "))
      .map(line -> line.substring(line.indexOf(" - ") + 3).replace(" event=\"start_failed\"", "").strip())
      .collect(java.util.stream.Collectors.joining("\n"));
    return process.exitValue() + " " + errors;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"htp.port", "namespaces.likes.slot", "database.passwordfile", "logging.formt"})
  @DisplayName("unknown keys anywhere in the tree are refused, namespace keys checked against the namespace options")
  void unknownKeysAnywhere(String key) {
    JsonObject raw = minimal();
    ConfigLoader.put(raw, key, "1");
    assertThatThrownBy(() -> GatewayConfig.fromJson(raw)).isInstanceOf(ConfigException.class)
      .hasMessageStartingWith(key + ": unknown key (did you mean ");
  }

  @Test
  @DisplayName("the nearest suggestion of a namespace key is that namespace's own key")
  void namespaceSuggestion() {
    JsonObject raw = minimal();
    raw.getJsonObject("namespaces").getJsonObject("likes").put("slotz", 3);
    assertThatThrownBy(() -> GatewayConfig.fromJson(raw))
      .hasMessage("namespaces.likes.slotz: unknown key (did you mean namespaces.likes.slots?)");
  }

  @Test
  @DisplayName("an empty section nobody reads is refused too")
  void unknownEmptySection() {
    JsonObject raw = minimal().put("batchin", new JsonObject());
    assertThatThrownBy(() -> GatewayConfig.fromJson(raw)).hasMessageStartingWith("batchin: unknown key");
  }

  @Test
  @DisplayName("namespace names stay free-form and every key an option reads is overridable")
  void freeFormNamespacesAndKnownVariables() {
    JsonObject raw = new JsonObject().put("namespaces", new JsonObject().put("repo-stars", new JsonObject()));
    JsonObject merged = ConfigLoader.applyEnvironment(raw, Map.of(
      "CG_NAMESPACES_REPO_STARS_SLOTS", "8",
      "CG_LOGGING_FORMAT", "json",
      "CG_LIMITS_IDLE_TIMEOUT", "30s",
      "CG_CONFIG", "conf/other.yaml",
      "HOME", "/root"));
    GatewayConfig config = GatewayConfig.fromJson(merged);
    assertThat(config.namespace("repo-stars").getSlots()).isEqualTo(8);
    assertThat(config.getLogging().getFormat()).isEqualTo(LoggingOptions.Format.JSON);
    assertThat(config.getLimits().getIdleTimeoutSeconds()).isEqualTo(30);
  }

  @Test
  @DisplayName("the known keys are the ones the option classes read, defaults included")
  void knownKeysComeFromTheCode() {
    assertThat(ConfigLoader.knownKeys(minimal()))
      .contains("http.port", "batching.maxDelay", "database.passwordFile", "auth.tokensFile", "shutdown.timeout",
        "logging.format", "namespaces.likes.slots", "namespaces.likes.public")
      .doesNotContain("namespaces.likes");
  }

  private static JsonObject minimal() {
    return new JsonObject().put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4)));
  }
}
