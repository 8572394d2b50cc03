package io.countergateway.internal.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.countergateway.config.GatewayConfig;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("The start event")
class StartEventTest {
  static ILoggingEvent startEvent(String host, JsonObject auth) {
    GatewayConfig config = GatewayConfig.fromJson(new JsonObject()
      .put("http", new JsonObject().put("host", host)).put("auth", auth)
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4))));
    Logger logger = new LoggerContext().getLogger("start-event-test");
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.start();
    logger.addAppender(events);
    ConfigSummary.logStart(logger, config, 8080, 2, "nio");
    assertThat(events.list).hasSize(1);
    return events.list.get(0);
  }

  @Test
  @DisplayName("warns, saying no authentication, when a network bind runs anonymous by auth.anonymous")
  void anonymousNetworkBindWarns() {
    ILoggingEvent event = startEvent("0.0.0.0", new JsonObject().put("anonymous", true));
    assertThat(event.getLevel()).isEqualTo(Level.WARN);
    assertThat(event.getFormattedMessage()).contains("WITHOUT AUTHENTICATION").contains("auth.anonymous");
    assertThat(event.getKeyValuePairs()).anySatisfy(pair -> {
      assertThat(pair.key).isEqualTo("auth");
      assertThat(pair.value).isEqualTo("anonymous");
    });
  }

  @Test
  @DisplayName("is plain information on loopback without tokens (the sidecar)")
  void loopbackIsInformation() {
    ILoggingEvent event = startEvent("127.0.0.1", new JsonObject());
    assertThat(event.getLevel()).isEqualTo(Level.INFO);
    assertThat(event.getFormattedMessage()).doesNotContain("WITHOUT AUTHENTICATION")
      .isEqualTo("counter-gateway listening on http://127.0.0.1:8080; dashboard at http://127.0.0.1:8080/ui/");
  }

  @Test
  @DisplayName("names the dashboard's address, on loopback when the gateway listens on every address")
  void namesTheDashboard() {
    ILoggingEvent event = startEvent("0.0.0.0", new JsonObject().put("tokens", new JsonArray().add("a-reader-token-0001:read")));
    assertThat(event.getFormattedMessage()).endsWith("; dashboard at http://127.0.0.1:8080/ui/");
    assertThat(event.getKeyValuePairs()).anySatisfy(pair -> {
      assertThat(pair.key).isEqualTo("dashboard");
      assertThat(pair.value).isEqualTo("http://127.0.0.1:8080/ui/");
    });
    assertThat(startEvent("::1", new JsonObject()).getFormattedMessage())
      .isEqualTo("counter-gateway listening on http://[::1]:8080; dashboard at http://[::1]:8080/ui/");
  }
}
