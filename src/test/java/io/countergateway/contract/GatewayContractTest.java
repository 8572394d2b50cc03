package io.countergateway.contract;

import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract of DESIGN §5, run against each real database by a subclass. Every test uses counter ids of
 * its own, so tests do not see each other's increments.
 */
@ExtendWith(VertxExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class GatewayContractTest {
  GatewayFixture fixture;

  abstract JsonObject database();

  @BeforeAll
  void startGateway() {
    fixture = GatewayFixture.start(GatewayFixture.baseConfig(database(), "contract_" + getClass().getSimpleName().toLowerCase()));
  }

  @AfterAll
  void stopGateway() {
    fixture.close();
  }

  static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  Future<HttpResponse<Buffer>> increment(String type, String id, String body) {
    return fixture.http.post("/v1/counters/" + type + "/" + id + "/increments").sendBuffer(Buffer.buffer(body));
  }

  /** {@code clients} concurrent clients, each sending {@code perClient} increments one after another. */
  Future<Void> load(int clients, int perClient, java.util.function.IntFunction<String> idForRequest) {
    List<Future<Void>> all = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      int client = c;
      Future<Void> chain = Future.succeededFuture();
      for (int i = 0; i < perClient; i++) {
        int n = client * perClient + i;
        chain = chain.compose(v -> increment("downloads", idForRequest.apply(n), "{\"delta\":1}").map(response -> {
          if (response.statusCode() != 200) {
            throw new IllegalStateException("status " + response.statusCode() + " " + response.bodyAsString());
          }
          return null;
        }));
      }
      all.add(chain);
    }
    return Future.all(all).mapEmpty();
  }

  @Test
  @DisplayName("64 clients sending 200 increments each to one hot counter leave exactly 12,800 in the table")
  void hotCounterUnderConcurrency(VertxTestContext ctx) throws Throwable {
    String id = unique("hot");
    load(64, 200, n -> id)
      .compose(done -> fixture.sumInTable("downloads", id))
      .onComplete(ctx.succeeding(sum -> ctx.verify(() -> {
        assertThat(sum).isEqualTo(12_800L);
        ctx.completeNow();
      })));
    assertThat(ctx.awaitCompletion(120, TimeUnit.SECONDS)).isTrue();
    if (ctx.failed()) {
      throw ctx.causeOfFailure();
    }
  }

  @Test
  @DisplayName("64 clients spreading 12,800 increments over 1,000 counters leave each counter's exact SUM")
  void manyCountersUnderConcurrency(VertxTestContext ctx) throws Throwable {
    String prefix = unique("many");
    load(64, 200, n -> prefix + "-" + (n % 1000))
      .compose(done -> fixture.sumsInTable("downloads", prefix))
      .onComplete(ctx.succeeding(sums -> ctx.verify(() -> {
        assertThat(sums).hasSize(1000);
        assertThat(sums.values()).allMatch(sum -> sum == 12_800L / 1000 || sum == 12_800L / 1000 + 1);
        assertThat(sums.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(12_800L);
        ctx.completeNow();
      })));
    assertThat(ctx.awaitCompletion(120, TimeUnit.SECONDS)).isTrue();
    if (ctx.failed()) {
      throw ctx.causeOfFailure();
    }
  }

  @Test
  @DisplayName("a 200 for ack=commit is only sent once the increment is visible in the table")
  void commitAckMeansVisible() {
    String id = unique("visible");
    for (int i = 1; i <= 20; i++) {
      HttpResponse<Buffer> response = await(increment("likes", id, "{\"delta\": 2}"));
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.bodyAsJsonObject()).isEqualTo(new JsonObject()
        .put("type", "likes").put("id", id).put("delta", 2).put("ack", "commit"));
      assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(2L * i);
    }
  }

  @Test
  @DisplayName("an empty body counts 1, and ack=accepted answers 202 and lands shortly after")
  void acceptedAck() throws InterruptedException {
    String id = unique("accepted");
    assertThat(await(fixture.http.post("/v1/counters/likes/" + id + "/increments").send()).statusCode()).isEqualTo(200);
    HttpResponse<Buffer> accepted = await(fixture.http.post("/v1/counters/likes/" + id + "/increments?ack=accepted")
      .sendJsonObject(new JsonObject().put("delta", 5)));
    assertThat(accepted.statusCode()).isEqualTo(202);
    assertThat(accepted.bodyAsJsonObject().getString("ack")).isEqualTo("accepted");
    assertThat(eventually(() -> await(fixture.sumInTable("likes", id)), 6L)).isEqualTo(6L);
  }

  @Test
  @DisplayName("a batch as a JSON array and as NDJSON is counted whole and answered with its totals")
  void batches() {
    String a = unique("batch-a");
    String b = unique("batch-b");
    JsonArray array = new JsonArray()
      .add(new JsonObject().put("type", "likes").put("id", a).put("delta", 3))
      .add(new JsonObject().put("type", "likes").put("id", b))
      .add(new JsonObject().put("type", "likes").put("id", a).put("delta", -1));
    HttpResponse<Buffer> response = await(fixture.http.post("/v1/increments").sendJson(array));
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.bodyAsJsonObject()).isEqualTo(new JsonObject()
      .put("increments", 3).put("counters", 2).put("delta", 3).put("ack", "commit"));

    String ndjson = "{\"type\":\"likes\",\"id\":\"" + a + "\",\"delta\":10}\n\n{\"type\":\"pageviews\",\"id\":\"" + b + "\"}\n";
    HttpResponse<Buffer> second = await(fixture.http.post("/v1/increments")
      .putHeader("Content-Type", "application/x-ndjson").sendBuffer(Buffer.buffer(ndjson)));
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(second.bodyAsJsonObject().getInteger("increments")).isEqualTo(2);

    assertThat(await(fixture.sumInTable("likes", a))).isEqualTo(12L);
    assertThat(await(fixture.sumInTable("likes", b))).isEqualTo(1L);
    assertThat(await(fixture.sumInTable("pageviews", b))).isEqualTo(1L);
  }

  @Test
  @DisplayName("a batch with one bad increment is refused whole, naming the item and field, and writes nothing")
  void badBatchWritesNothing() {
    String id = unique("badbatch");
    JsonArray array = new JsonArray()
      .add(new JsonObject().put("type", "likes").put("id", id).put("delta", 3))
      .add(new JsonObject().put("type", "likes").put("id", id).put("delta", 0));
    HttpResponse<Buffer> response = await(fixture.http.post("/v1/increments").sendJson(array));
    assertThat(response.statusCode()).isEqualTo(400);
    assertThat(response.bodyAsJsonObject().getString("error")).isEqualTo("invalid_delta");
    assertThat(response.bodyAsJsonObject().getString("field")).isEqualTo("increments[1].delta");
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  @Test
  @DisplayName("beacons count 1 on public namespaces by GET and POST, with CORS, and are refused elsewhere")
  void beacons() throws InterruptedException {
    String id = unique("beacon");
    HttpResponse<Buffer> get = await(fixture.http.get("/v1/beacon/pageviews/" + id)
      .putHeader("Origin", "https://shop.example").send());
    assertThat(get.statusCode()).isEqualTo(204);
    assertThat(get.getHeader("Access-Control-Allow-Origin")).isNotNull();
    assertThat(await(fixture.http.post("/v1/beacon/pageviews/" + id).sendBuffer(Buffer.buffer("ignored"))).statusCode())
      .isEqualTo(204);
    HttpResponse<Buffer> gif = await(fixture.http.get("/v1/beacon/pageviews/" + id + "?format=gif").send());
    assertThat(gif.statusCode()).isEqualTo(200);
    assertThat(gif.getHeader("Content-Type")).isEqualTo("image/gif");

    HttpResponse<Buffer> refused = await(fixture.http.get("/v1/beacon/likes/" + id).send());
    assertThat(refused.statusCode()).isEqualTo(403);
    assertThat(refused.bodyAsJsonObject().getString("error")).isEqualTo("namespace_not_public");

    assertThat(eventually(() -> await(fixture.sumInTable("pageviews", id)), 3L)).isEqualTo(3L);
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  @Test
  @DisplayName("a counter reads back its value alone or among several, unknown ids reading 0")
  void reads() {
    String a = unique("read-a");
    String b = unique("read-b");
    await(increment("downloads", a, "{\"delta\":7}"));
    await(increment("downloads", b, "{\"delta\":2}"));
    HttpResponse<Buffer> one = await(fixture.http.get("/v1/counters/downloads/" + a).send());
    assertThat(one.statusCode()).isEqualTo(200);
    assertThat(one.bodyAsJsonObject()).isEqualTo(new JsonObject().put("type", "downloads").put("id", a).put("value", 7));

    HttpResponse<Buffer> many = await(fixture.http.get("/v1/counters/downloads?id=" + a + "&id=" + b + "&id=never").send());
    assertThat(many.statusCode()).isEqualTo(200);
    assertThat(many.bodyAsJsonObject().getJsonArray("counters")).containsExactly(
      new JsonObject().put("id", a).put("value", 7),
      new JsonObject().put("id", b).put("value", 2),
      new JsonObject().put("id", "never").put("value", 0));
  }

  @Test
  @DisplayName("ids with slashes and colons, sent percent-encoded, are counted under the decoded id")
  void encodedIds() {
    HttpResponse<Buffer> response = await(fixture.http.post("/v1/counters/pageviews/%2Fdocs%2Fstart/increments").send());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.bodyAsJsonObject().getString("id")).isEqualTo("/docs/start");
    assertThat(await(fixture.sumInTable("pageviews", "/docs/start"))).isGreaterThanOrEqualTo(1L);
    HttpResponse<Buffer> colon = await(fixture.http.post("/v1/counters/downloads/repo:42/increments").send());
    assertThat(colon.statusCode()).isEqualTo(200);
  }

  @Test
  @DisplayName("a reset deletes every slot of the counter")
  void reset() {
    String id = unique("reset");
    await(increment("downloads", id, "{\"delta\":4}"));
    assertThat(await(fixture.http.delete("/v1/counters/downloads/" + id).send()).statusCode()).isEqualTo(204);
    assertThat(await(fixture.sumInTable("downloads", id))).isZero();
  }

  @Test
  @DisplayName("liveness and readiness answer 200 while the database is reachable")
  void health() {
    assertThat(await(fixture.http.get("/health/live").send()).statusCode()).isEqualTo(200);
    HttpResponse<Buffer> ready = await(fixture.http.get("/health/ready").send());
    assertThat(ready.statusCode()).isEqualTo(200);
    assertThat(ready.bodyAsJsonObject().getString("status")).isEqualTo("ready");
  }

  static <T> T eventually(java.util.function.Supplier<T> probe, T expected) throws InterruptedException {
    T value = probe.get();
    for (int i = 0; i < 100 && !expected.equals(value); i++) {
      Thread.sleep(50);
      value = probe.get();
    }
    return value;
  }

}
