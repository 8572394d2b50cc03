package io.countergateway.contract;

import io.countergateway.CounterClient;
import io.countergateway.CounterException;
import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.DeliveryContext;
import io.vertx.core.eventbus.ReplyException;
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
import java.util.Map;

import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract (src/DESIGN.md §5), run against each real database by a subclass. Every test uses counter ids of
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
    return fixture.http.post("/v1/counters/" + type + "/" + id + "/increments")
      .putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer(body));
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
    assertThat(Eventually.value(() -> await(fixture.sumInTable("likes", id)), 6L)).isEqualTo(6L);
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
      .add(new JsonObject().put("type", "likes").put("id", id).put("delta", 0.5));
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
    assertThat(refused.statusCode()).isEqualTo(404);
    assertThat(refused.bodyAsJsonObject().getString("error")).isEqualTo("unknown_namespace");

    assertThat(Eventually.value(() -> await(fixture.sumInTable("pageviews", id)), 3L)).isEqualTo(3L);
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

  /** A request that must be refused: method, path, body, expected status, error code and field. */
  record Refusal(String method, String path, String body, int status, String error, String field) {
    @Override
    public String toString() {
      return method + " " + path + " " + (body.length() > 40 ? body.substring(0, 40) + "…" : body) + " -> " + status + " " + error;
    }
  }

  java.util.stream.Stream<Refusal> refusals() {
    String big = "{\"delta\":1,\"pad\":\"" + "x".repeat(70_000) + "\"}";
    String longId = "a".repeat(256);
    return java.util.stream.Stream.of(
      new Refusal("POST", "/v1/counters/nosuch/x/increments", "", 404, "unknown_namespace", "type"),
      new Refusal("POST", "/v1/counters/downloads/" + longId + "/increments", "", 400, "invalid_id", "id"),
      new Refusal("POST", "/v1/counters/downloads/a%20b/increments", "", 400, "invalid_id", "id"),
      new Refusal("POST", "/v1/counters/downloads/%C3%A9t%C3%A9/increments", "", 400, "invalid_id", "id"),
      new Refusal("POST", "/v1/counters/downloads/bad-%22quote/increments", "", 400, "invalid_id", "id"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":0.5}", 400, "invalid_delta", "delta"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":1.5}", 400, "invalid_delta", "delta"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":\"3\"}", 400, "invalid_delta", "delta"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":true}", 400, "invalid_delta", "delta"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":null}", 400, "invalid_delta", "delta"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":1000001}", 400, "invalid_delta", "delta"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":-1000001}", 400, "invalid_delta", "delta"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":99999999999999999999999}", 400, "invalid_delta", "delta"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":1e400}", 400, "invalid_delta", "delta"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":", 400, "invalid_json", "body"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "[1]", 400, "invalid_json", "body"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", "{\"delta\":1,\"extra\":2}", 400, "unknown_field", "extra"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments?ack=maybe", "", 400, "invalid_ack", "ack"),
      new Refusal("POST", "/v1/counters/downloads/{id}/increments", big, 413, "body_too_large", "body"),
      new Refusal("POST", "/v1/increments", "", 400, "empty_batch", "body"),
      new Refusal("POST", "/v1/increments", "[", 400, "invalid_json", "body"),
      new Refusal("POST", "/v1/increments", "[1]", 400, "invalid_increment", "increments[0]"),
      new Refusal("POST", "/v1/increments", "[{\"type\":\"downloads\",\"id\":\"{id}\",\"delta\":1},{\"type\":\"nosuch\",\"id\":\"x\"}]",
        404, "unknown_namespace", "increments[1].type"),
      new Refusal("POST", "/v1/increments", "[{\"type\":\"downloads\",\"id\":\"{id}\"},{\"type\":\"downloads\",\"id\":5}]",
        400, "invalid_id", "increments[1].id"),
      new Refusal("POST", "/v1/increments", "{\"type\":\"downloads\",\"id\":\"{id}\"}\nnot json\n", 400, "invalid_json", "body"),
      new Refusal("POST", "/v1/increments", big, 413, "body_too_large", "body"),
      new Refusal("GET", "/v1/beacon/nosuch/x", "", 404, "unknown_namespace", "type"),
      new Refusal("GET", "/v1/beacon/downloads/{id}", "", 404, "unknown_namespace", "type"),
      new Refusal("GET", "/v1/counters/nosuch/x", "", 404, "unknown_namespace", "type"),
      new Refusal("GET", "/v1/counters/downloads/a%20b", "", 400, "invalid_id", "id"),
      new Refusal("GET", "/v1/counters/downloads", "", 400, "invalid_ids", "id"),
      new Refusal("DELETE", "/v1/counters/nosuch/x", "", 404, "unknown_namespace", "type"),
      new Refusal("PUT", "/v1/counters/downloads/{id}/increments", "", 405, "method_not_allowed", "method"),
      new Refusal("GET", "/v2/anything", "", 404, "not_found", "path"));
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.MethodSource("refusals")
  @DisplayName("bad input is refused with a 4xx and a JSON error naming the field and the rule, and writes nothing")
  void badInputIsRefused(Refusal refusal) {
    String id = unique("refused");
    long rowsBefore = await(fixture.rowsInTable());
    var request = fixture.http.request(io.vertx.core.http.HttpMethod.valueOf(refusal.method()), refusal.path().replace("{id}", id));
    if (!refusal.body().isEmpty()) {
      request.putHeader("Content-Type", "application/json");
    }
    HttpResponse<Buffer> response = await(request.sendBuffer(Buffer.buffer(refusal.body().replace("{id}", id))));
    assertThat(response.statusCode()).isEqualTo(refusal.status());
    assertThat(response.getHeader("Content-Type")).isEqualTo("application/json");
    JsonObject error = response.bodyAsJsonObject();
    assertThat(error.getString("error")).isEqualTo(refusal.error());
    assertThat(error.getString("message")).isNotBlank();
    assertThat(error.getString("field")).isEqualTo(refusal.field());
    assertThat(await(fixture.sumInTable("downloads", id))).isZero();
    assertThat(await(fixture.rowsInTable())).isEqualTo(rowsBefore);
  }

  @Test
  @DisplayName("an event-bus request is answered after its commit, a send is counted shortly after")
  void eventBusIncrements() throws InterruptedException {
    CounterClient client = new CounterClient(fixture.vertx);
    String id = unique("bus");
    for (int i = 1; i <= 10; i++) {
      await(client.increment("likes", id, 3));
      assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(3L * i);
    }
    for (int i = 0; i < 10; i++) {
      client.incrementAccepted("likes", id, 1);
    }
    assertThat(Eventually.value(() -> await(fixture.sumInTable("likes", id)), 40L)).isEqualTo(40L);
    assertThat(await(client.get("likes", id))).isEqualTo(40L);
    assertThat(await(client.get("likes", List.of(id, "never")))).containsEntry(id, 40L).containsEntry("never", 0L);
  }

  @Test
  @DisplayName("an event-bus increment waiting to be taken is answered before its commit, counted after, and refused like its HTTP twin")
  void eventBusTakenIncrements() {
    CounterClient client = new CounterClient(fixture.vertx);
    String id = unique("bustaken");
    Promise<List<Future<Void>>> sent = Promise.promise();
    fixture.vertx.runOnContext(v -> {
      // one turn of an event loop: the ten travel as one message, each answered once taken
      List<Future<Void>> taken = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        taken.add(client.incrementTaken("likes", id, 2));
      }
      sent.complete(taken);
    });
    await(Future.all(await(sent.future())));
    assertThat(Eventually.value(() -> await(fixture.sumInTable("likes", id)), 20L)).isEqualTo(20L);
    Throwable tooLarge = await(client.incrementTaken("likes", id, 2_000_000).transform(r -> Future.succeededFuture(r.cause())));
    assertThat(((CounterException) tooLarge).status()).isEqualTo(400);
    assertThat(((CounterException) tooLarge).code()).isEqualTo("invalid_delta");
  }

  @Test
  @DisplayName("a bad event-bus increment fails with the HTTP status and error code, and writes nothing")
  void badEventBusIncrement() {
    CounterClient client = new CounterClient(fixture.vertx);
    String id = unique("busbad");
    Throwable tooLarge = await(client.increment("likes", id, 2_000_000).transform(r -> Future.succeededFuture(r.cause())));
    assertThat(tooLarge).isInstanceOf(CounterException.class);
    assertThat(((CounterException) tooLarge).status()).isEqualTo(400);
    assertThat(((CounterException) tooLarge).code()).isEqualTo("invalid_delta");
    // a delta of 0 is taken and changes nothing, through this door as through HTTP
    await(client.increment("likes", id, 0));
    Throwable unknown = await(client.increment("nosuch", id, 1).transform(r -> Future.succeededFuture(r.cause())));
    assertThat(((CounterException) unknown).status()).isEqualTo(404);
    ReplyException raw = (ReplyException) await(fixture.vertx.eventBus().request("counters.increment", "not json")
      .transform(r -> Future.succeededFuture(r.cause())));
    assertThat(raw.failureCode()).isEqualTo(400);
    assertThat(new JsonObject(raw.getMessage()).getString("error")).isEqualTo("invalid_request");
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  @Test
  @DisplayName("increments a verticle sends in one turn travel as one message and are each answered as if sent alone: "
    + "the good ones committed, a bad one refused with its own status, two that are only too large summed both counted")
  void eventBusIncrementsOfOneTurn() {
    CounterClient client = new CounterClient(fixture.vertx);
    String prefix = unique("turn");
    int[] messages = new int[1];
    Handler<DeliveryContext<Object>> counting = delivery -> {
      if (delivery.message().address().equals("counters.increment")) {
        messages[0]++;
      }
      delivery.next();
    };
    fixture.vertx.eventBus().addOutboundInterceptor(counting);
    Promise<List<Future<Void>>> sent = Promise.promise();
    fixture.vertx.getOrCreateContext().runOnContext(v -> {
      List<Future<Void>> answers = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        answers.add(client.increment("likes", prefix + "-" + (i % 20), 1));
      }
      answers.add(client.increment("likes", prefix + "-bad", 2_000_000));
      answers.add(client.increment("likes", prefix + "-big", 600_000));
      answers.add(client.increment("likes", prefix + "-big", 600_000));
      sent.complete(answers);
    });
    List<Future<Void>> answers = await(sent.future());
    await(Future.join(answers).otherwiseEmpty());
    fixture.vertx.eventBus().removeOutboundInterceptor(counting);

    assertThat(answers.subList(0, 200)).allMatch(Future::succeeded);
    Throwable bad = answers.get(200).cause();
    assertThat(bad).isInstanceOf(CounterException.class);
    assertThat(((CounterException) bad).code()).isEqualTo("invalid_delta");
    assertThat(answers.subList(201, 203)).allMatch(Future::succeeded);
    for (int i = 0; i < 20; i++) {
      assertThat(await(fixture.sumInTable("likes", prefix + "-" + i))).isEqualTo(10L);
    }
    assertThat(await(fixture.sumInTable("likes", prefix + "-bad"))).isZero();
    assertThat(await(fixture.sumInTable("likes", prefix + "-big"))).isEqualTo(1_200_000L);
    // one message for the turn, then the summed pair asked again one by one
    assertThat(messages[0]).isEqualTo(3);
  }

  @Test
  @DisplayName("an event-bus batch is taken whole and answered after its commit; a bad item refuses all of it")
  void eventBusBatches() {
    CounterClient client = new CounterClient(fixture.vertx);
    String id = unique("busbatch");
    JsonArray batch = new JsonArray()
      .add(new JsonObject().put("type", "likes").put("id", id).put("delta", 2))
      .add(new JsonObject().put("type", "likes").put("id", id + "-b"))
      .add(new JsonObject().put("type", "likes").put("id", id).put("delta", 3));
    await(client.incrementAll(batch));
    assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(5L);
    assertThat(await(fixture.sumInTable("likes", id + "-b"))).isEqualTo(1L);

    JsonArray bad = batch.copy().add(new JsonObject().put("type", "likes").put("id", id).put("delta", 0.5));
    Throwable refused = await(client.incrementAll(bad).transform(r -> Future.succeededFuture(r.cause())));
    assertThat(((CounterException) refused).code()).isEqualTo("invalid_delta");
    assertThat(((CounterException) refused).field()).isEqualTo("increments[3].delta");
    assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(5L);
  }

  @Test
  @DisplayName("an increment published to the event bus is ignored, not counted once per verticle")
  void publishedIncrementsAreIgnored() {
    String id = unique("published");
    fixture.vertx.eventBus().publish("counters.increment", new JsonObject().put("type", "likes").put("id", id));
    await(new CounterClient(fixture.vertx).increment("likes", id + "-after", 1));
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  @Test
  @DisplayName("stopping the gateway flushes every accepted increment still pending")
  void shutdownFlushesPending() {
    JsonObject config = GatewayFixture.baseConfig(database(), fixture.table);
    // deltas would wait a minute for company: only the shutdown can flush them
    config.put("batching", new JsonObject().put("maxDelay", "1m").put("maxKeys", 10_000));
    GatewayFixture slow = GatewayFixture.start(config);
    String prefix = unique("shutdown");
    List<Future<?>> sent = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      sent.add(slow.http.post("/v1/counters/downloads/" + prefix + "-" + (i % 50) + "/increments?ack=accepted").send()
        .map(response -> {
          if (response.statusCode() != 202) {
            throw new IllegalStateException("status " + response.statusCode());
          }
          return null;
        }));
    }
    await(Future.all(sent));
    CounterClient bus = new CounterClient(slow.vertx);
    for (int i = 0; i < 100; i++) {
      bus.incrementAccepted("downloads", prefix + "-bus", 2);
    }
    await(slow.vertx.eventBus().request("counters.ping", new JsonObject())); // the sends above are delivered first
    assertThat(await(fixture.sumsInTable("downloads", prefix))).isEmpty();
    slow.close();
    Map<String, Long> sums = await(fixture.sumsInTable("downloads", prefix));
    assertThat(sums).hasSize(51);
    assertThat(sums.get(prefix + "-bus")).isEqualTo(200L);
    assertThat(sums.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(700L);
  }

  @Test
  @DisplayName("single increments, taken without the router, answer and count as the router's chain does")
  void hotIncrementRouteAnswersAsTheRouter() throws InterruptedException {
    String id = unique("hot-post");
    String path = "/v1/counters/likes/" + id + "/increments";
    HttpResponse<Buffer> accepted = await(fixture.http.post(path + "?ack=accepted").send());
    assertThat(accepted.statusCode()).isEqualTo(202);
    assertThat(accepted.bodyAsJsonObject().getString("ack")).isEqualTo("accepted");
    HttpResponse<Buffer> committed = await(fixture.http.post(path).sendJsonObject(new JsonObject().put("delta", 5)));
    assertThat(committed.statusCode()).isEqualTo(200);
    assertThat(committed.bodyAsJsonObject()).isEqualTo(new JsonObject().put("type", "likes").put("id", id)
      .put("delta", 5).put("ack", "commit"));
    assertThat(committed.getHeader("Content-Type")).isEqualTo("application/json");

    HttpResponse<Buffer> badJson = await(fixture.http.post(path).putHeader("Content-Type", "application/json")
      .sendBuffer(Buffer.buffer("{\"delta\":")));
    assertThat(badJson.statusCode()).isEqualTo(400);
    assertThat(badJson.bodyAsJsonObject().getString("field")).isEqualTo("body");
    HttpResponse<Buffer> unknown = await(fixture.http.post("/v1/counters/nosuch/" + id + "/increments").send());
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(unknown.bodyAsJsonObject().getString("error")).isEqualTo("unknown_namespace");
    // left to the router: a form body, a query it must decode
    HttpResponse<Buffer> form = await(fixture.http.post(path).putHeader("Content-Type", "multipart/form-data; boundary=x")
      .sendBuffer(Buffer.buffer("--x--")));
    assertThat(form.statusCode()).isEqualTo(415);
    HttpResponse<Buffer> badAck = await(fixture.http.post(path + "?ack=later").send());
    assertThat(badAck.statusCode()).isEqualTo(400);
    assertThat(badAck.bodyAsJsonObject().getString("field")).isEqualTo("ack");

    assertThat(Eventually.value(() -> await(fixture.sumInTable("likes", id)), 6L)).isEqualTo(6L);
  }
}
