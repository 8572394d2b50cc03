package io.countergateway.ops;

import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.config.LoggingOptions;
import io.countergateway.internal.logging.LogSetup;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

class StructuredLogIT {
  private static final String TOKEN = "tok-do-not-log-9c2d7a41";
  private static final String COUNTER_ID = "counter-id-0d9e";

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  @AfterEach
  void backToStandardOutput() {
    LogSetup.apply(LoggingOptions.fromJson(new JsonObject()));
  }

  @Test
  @DisplayName("logging.format json writes one JSON object per line with the event's fields")
  void jsonLines() {
    logJson();
    GatewayState state = new GatewayState();
    state.writerShedding(true);
    state.writerShedding(false);
    List<JsonObject> lines = lines();
    assertThat(lines).extracting(line -> line.getString("event")).containsExactly("shedding_start", "shedding_end");
    assertThat(lines.get(0).getString("level")).isEqualTo("WARN");
    assertThat(lines.get(0).getString("logger_name")).isEqualTo(GatewayState.class.getName());
    assertThat(lines.get(0).getString("@timestamp")).isNotBlank();
    assertThat(lines.get(1).getLong("duration_ms")).isNotNegative();
  }

  @Test
  @DisplayName("an outage or a shed across many coalescers is one start event and one end event")
  void oneEventPerGatewayWideTransition() {
    logJson();
    GatewayState state = new GatewayState();
    state.writerFailing(true);
    state.writerFailing(true);
    state.writerShedding(true);
    state.writerFailing(false);
    state.writerShedding(false);
    state.writerFailing(false);
    assertThat(lines()).extracting(line -> line.getString("event"))
      .containsExactly("database_outage_start", "shedding_start", "shedding_end", "database_outage_end");
  }

  @Test
  @DisplayName("text format keeps the event's fields as key=value pairs")
  void textLines() {
    LogSetup.apply(LoggingOptions.fromJson(new JsonObject()), out);
    new GatewayState().writerFailing(true);
    assertThat(text()).contains(" WARN ").contains("database outage").contains("event=\"database_outage_start\"");
  }

  @Test
  @DisplayName("start and drain are logged with their figures; secrets and counter ids never appear at INFO")
  void startAndDrainWithoutSecrets() {
    logJson();
    JsonObject raw = GatewayFixture.baseConfig(TestDatabases.postgres(), "log_events");
    // the embedded test database's own password, made at its first start: the one secret the gateway must not log
    String password = raw.getJsonObject("database").getString("password");
    assertThat(password).isNotEmpty();
    raw.put("auth", new JsonObject().put("tokens", new JsonArray().add(TOKEN + ":write+admin")));
    try (GatewayFixture fixture = GatewayFixture.start(raw)) {
      for (int i = 0; i < 5; i++) {
        await(fixture.http.post("/v1/counters/likes/" + COUNTER_ID + "-" + i + "/increments?ack=accepted")
          .bearerTokenAuthentication(TOKEN).send());
      }
      await(fixture.http.post("/v1/counters/likes/" + COUNTER_ID + "/increments").bearerTokenAuthentication("wrong-token-0000000000").send());
    }
    List<JsonObject> lines = lines();
    JsonObject start = event(lines, "start");
    assertThat(start.getString("message")).startsWith("counter-gateway listening on http://127.0.0.1:");
    assertThat(start.getString("auth")).isEqualTo("tokens");
    assertThat(start.getString("database")).contains("log_events");
    assertThat(start.getString("namespaces")).contains("pageviews(slots=8,public)");
    JsonObject drain = event(lines, "drain");
    assertThat(drain.getLong("counters_not_flushed")).isZero();
    assertThat(drain.getLong("duration_ms")).isNotNegative();
    assertThat(text()).doesNotContain(password).doesNotContain(TOKEN);
    assertThat(lines).filteredOn(line -> line.getString("level").equals("INFO"))
      .noneMatch(line -> line.encode().contains(COUNTER_ID));
  }

  private void logJson() {
    LogSetup.apply(LoggingOptions.fromJson(new JsonObject().put("format", "json")), out);
  }

  private static JsonObject event(List<JsonObject> lines, String name) {
    return lines.stream().filter(line -> name.equals(line.getString("event"))).findFirst()
      .orElseThrow(() -> new AssertionError("no " + name + " event in " + lines));
  }

  private List<JsonObject> lines() {
    return text().lines().map(JsonObject::new).toList();
  }

  private String text() {
    return out.toString(StandardCharsets.UTF_8);
  }
}
