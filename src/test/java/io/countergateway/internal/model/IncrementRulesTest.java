package io.countergateway.internal.model;

import io.countergateway.config.GatewayConfig;
import io.countergateway.testing.SettableClock;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The input rules every door applies before anything is taken: each refusal names its field and rule. */
@DisplayName("The input rules")
class IncrementRulesTest {
  private static final Instant NOW = Instant.parse("2026-11-22T10:30:00Z");
  private final IncrementRules rules = new IncrementRules(GatewayConfig.fromJson(new JsonObject()
    .put("limits", new JsonObject().put("maxIdLength", 16).put("minDelta", -100).put("maxDelta", 100))
    .put("namespaces", new JsonObject()
      .put("likes", new JsonObject())
      .put("views", new JsonObject().put("public", true)
        .put("window", new JsonObject().put("bucket", "hour").put("retention", "2d"))))), new SettableClock(NOW));

  private static void refused(Runnable call, int status, String code, String field) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(ApiError.class, e -> {
      assertThat(e.status()).isEqualTo(status);
      assertThat(e.code()).isEqualTo(code);
      assertThat(e.field()).isEqualTo(field);
    });
  }

  @Test
  @DisplayName("a valid increment keeps its namespace, id and delta; no delta means 1")
  void valid() {
    assertThat(rules.increment("likes", "post-1", 5)).isEqualTo(new Increment(new CounterKey("likes", "post-1"), 5));
    assertThat(rules.increment("likes", "post-1", null).delta()).isEqualTo(1);
    assertThat(rules.increment("likes", "post-1", new BigDecimal("7.00")).delta()).isEqualTo(7);
  }

  @Test
  @DisplayName("a beacon's id is a page id fitted to the column, within the namespace's own idPattern where it sets one")
  void pageIds() {
    IncrementRules site = new IncrementRules(GatewayConfig.fromJson(new JsonObject()
      .put("namespaces", new JsonObject()
        .put("pages", new JsonObject().put("public", true))
        .put("docs", new JsonObject().put("public", true).put("idPattern", "/docs/.*").put("maxIdLength", 40)))),
      new SettableClock(NOW));
    assertThat(site.pageId(site.namespace("pages"), "/a page (1);'x'")).isEqualTo("/a page (1);'x'");
    assertThat(site.pageId(site.namespace("pages"), "/a\nb")).isNull();
    assertThat(site.pageId(site.namespace("pages"), null)).isNull();
    assertThat(site.pageId(site.namespace("docs"), "/docs/u\u0308ber")).as("NFC, then the pattern").isEqualTo("/docs/über");
    assertThat(site.pageId(site.namespace("docs"), "/blog/über")).isNull();
    assertThat(site.pageId(site.namespace("docs"), "/docs/" + "x".repeat(100))).hasSize(40);
  }

  @Test
  @DisplayName("reads of a public namespace take page ids; other namespaces keep limits.idPattern")
  void readIds() {
    assertThat(rules.readId(rules.namespace("views"), "/docs/über")).isEqualTo("/docs/über");
    assertThat(rules.readId(rules.namespace("views"), "(invalid)")).isEqualTo("(invalid)");
    assertThat(rules.readId(rules.namespace("views"), "/" + "x".repeat(40))).hasSize(16);
    refused(() -> rules.readId(rules.namespace("views"), "/a\u0000b"), 400, "invalid_id", "id");
    refused(() -> rules.readId(rules.namespace("likes"), "/docs/über"), 400, "invalid_id", "id");
  }

  @Test
  @DisplayName("an undeclared namespace is 404 unknown_namespace")
  void unknownNamespace() {
    refused(() -> rules.increment("nosuch", "a", 1), 404, "unknown_namespace", "type");
  }

  @ParameterizedTest(name = "id \"{0}\"")
  @ValueSource(strings = {"", "seventeen-chars-x", "a b", "é", "a\u0000b"})
  @DisplayName("an id that is empty, too long or outside the charset is 400 invalid_id")
  void badIds(String id) {
    refused(() -> rules.increment("likes", id, 1), 400, "invalid_id", "id");
  }

  @Test
  @DisplayName("a delta that is fractional, not a number or out of range is 400 invalid_delta")
  void badDeltas() {
    for (Object delta : List.of(1.5, "3", 101, -101, new BigInteger("99999999999999999999"), Double.NaN,
      new BigDecimal("1e999999999"))) {
      refused(() -> rules.increment("likes", "a", delta), 400, "invalid_delta", "delta");
    }
  }

  @Test
  @DisplayName("a windowed increment lands in the bucket of its time; 'at' is refused outside the retention, ahead of the clock, or on a plain namespace")
  void windows() {
    assertThat(rules.increment("views", "home", 1).key().bucket()).isEqualTo(Instant.parse("2026-11-22T10:00:00Z").getEpochSecond());
    assertThat(rules.increment("views", "home", 1, "2026-11-21T23:59:59Z").key().bucket())
      .isEqualTo(Instant.parse("2026-11-21T23:00:00Z").getEpochSecond());
    refused(() -> rules.increment("views", "home", 1, "2026-11-10T00:00:00Z"), 400, "invalid_at", "at");
    refused(() -> rules.increment("views", "home", 1, "2026-11-23T10:30:00Z"), 400, "invalid_at", "at");
    refused(() -> rules.increment("views", "home", 1, "yesterday"), 400, "invalid_at", "at");
    refused(() -> rules.increment("likes", "home", 1, "2026-11-22T10:00:00Z"), 400, "invalid_at", "at");
  }

  @Test
  @DisplayName("a batch item's refusal names the item: increments[i].field")
  void batchItems() {
    refused(() -> IncrementBatch.of(List.of(new JsonObject().put("type", "likes").put("id", "a"),
      new JsonObject().put("type", "likes").put("id", "b").put("delta", 0.5)), rules, 10), 400, "invalid_delta",
      "increments[1].delta");
    refused(() -> rules.increment(new JsonObject().put("type", "likes").put("id", "a").put("extra", 1), 0), 400,
      "unknown_field", "increments[0].extra");
    refused(() -> IncrementBatch.of(List.of(), rules, 10), 400, "empty_batch", "body");
    refused(() -> IncrementBatch.of(new JsonArray().add(1).add(2).getList(), rules, 1), 413, "batch_too_large", "body");
  }

  @Test
  @DisplayName("a batch is summed per counter, and counters whose deltas cancel out are left out")
  void batchSums() {
    IncrementBatch batch = IncrementBatch.of(List.of(new JsonObject().put("type", "likes").put("id", "a").put("delta", 2),
      new JsonObject().put("type", "likes").put("id", "a").put("delta", 3),
      new JsonObject().put("type", "likes").put("id", "b").put("delta", 4),
      new JsonObject().put("type", "likes").put("id", "b").put("delta", -4)), rules, 10);

    assertThat(batch.perCounter()).containsExactly(new Increment(new CounterKey("likes", "a"), 5));
    assertThat(batch.increments()).isEqualTo(4);
    assertThat(batch.totalDelta()).isEqualTo(5);
  }

  @Test
  @DisplayName("add-and-get takes only return=value, and only with ack=commit")
  void returnsValue() {
    assertThat(rules.returnsValue(null, true)).isFalse();
    assertThat(rules.returnsValue("value", true)).isTrue();
    refused(() -> rules.returnsValue("count", true), 400, "invalid_return", "return");
    refused(() -> rules.returnsValue("value", false), 400, "invalid_return", "return");
  }
}
