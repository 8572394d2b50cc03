package io.countergateway.fuzz;

import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A seeded fuzz test of the HTTP API, run against each real database by a subclass: a stream of generated bad
 * requests ({@link BadRequests}) over the web client and over raw TCP, each of which must be answered with a 4xx and
 * a JSON error body {@code {"error","message"[,"field"]}}, in time, without a single write (the table's rows and sums
 * are compared before and after). Only two answers that Vert.x core gives before any gateway code runs are tolerated,
 * for the raw cases that provoke them ({@link FuzzCase.Allowance}); {@link #vertxCoreAnswers()} pins them down.
 *
 * <p>The seed is printed; {@code -Dfuzz.seed=} replays a run, {@code -Dfuzz.case=} replays one case of it (and prints
 * it whole), {@code -Dfuzz.cases=} sets the number of cases. All failures go to {@code target/fuzz/}. After the fuzz
 * come targeted tests for each class of input that found a bug.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class HttpFuzzTest {
  static final int IN_FLIGHT = Integer.getInteger("fuzz.inFlight", 24);
  static final long TIMEOUT_MS = Long.getLong("fuzz.timeoutMs", 8_000);
  static final int SHOWN_FAILURES = 40;

  GatewayFixture fixture;
  Vertx clients;
  WebClient web;
  RawHttp raw;

  abstract JsonObject database();

  /** How many cases this database's run sends, unless {@code -Dfuzz.cases} says otherwise. */
  abstract int defaultCases();

  @BeforeAll
  void startGateway() {
    JsonObject config = GatewayFixture.baseConfig(database(), "fuzz_" + getClass().getSimpleName().toLowerCase());
    config.put("auth", new JsonObject().put("tokens", new JsonArray()
      .add(BadRequests.WRITE_TOKEN + ":write").add(BadRequests.BEACON_TOKEN + ":beacon").add(BadRequests.ADMIN_TOKEN + ":admin")));
    config.getJsonObject("http").put("corsOrigins", new JsonArray().add(BadRequests.ORIGIN));
    fixture = GatewayFixture.start(config);
    clients = Vertx.vertx();
    web = WebClient.create(clients, GatewayFixture.clientOptions().setDefaultHost("127.0.0.1")
      .setDefaultPort(fixture.gateway.port()).setMaxHeaderSize(64 * 1024), new PoolOptions().setHttp1MaxSize(IN_FLIGHT));
    NetClient net = clients.createNetClient(new NetClientOptions().setConnectTimeout((int) TIMEOUT_MS));
    raw = new RawHttp(clients, net, fixture.gateway.port());
    // some rows to protect: the fuzz must leave them exactly as they are
    for (int i = 0; i < 5; i++) {
      for (String type : BadRequests.NAMESPACES) {
        HttpResponse<Buffer> response = await(web.post("/v1/counters/" + type + "/fuzz-existing-" + i + "/increments")
          .putHeader("Authorization", "Bearer " + BadRequests.WRITE_TOKEN).sendJsonObject(new JsonObject().put("delta", i + 1)));
        assertThat(response.statusCode()).isEqualTo(200);
      }
    }
  }

  @AfterAll
  void stopGateway() {
    if (clients != null) {
      await(clients.close());
    }
    if (fixture != null) {
      fixture.close();
    }
  }

  @Test
  @DisplayName("a seeded stream of at least 10,000 bad requests is answered with 4xx JSON errors, none hangs, nothing is written")
  void fuzz() throws InterruptedException {
    long seed = Long.getLong("fuzz.seed", System.nanoTime() ^ System.currentTimeMillis());
    Integer only = Integer.getInteger("fuzz.case");
    int cases = only != null ? 1 : Integer.getInteger("fuzz.cases", defaultCases());
    String name = getClass().getSimpleName();
    System.out.printf("[%s] fuzz seed %d (replay: -Dfuzz.seed=%d), %d cases, %d in flight, %d ms per request%n",
      name, seed, seed, cases, IN_FLIGHT, TIMEOUT_MS);
    BadRequests generator = new BadRequests(seed);
    TableState before = tableState();
    double takenBefore = fixture.incrementsTaken();

    long started = System.nanoTime();
    Stats stats = only != null ? run(List.of(only), generator) : run(indices(cases), generator);
    long elapsedMs = (System.nanoTime() - started) / 1_000_000;

    // what is refused is refused before it is taken: with nothing taken, no later flush can change the table
    double taken = fixture.incrementsTaken() - takenBefore;
    TableState after = tableState();
    HttpResponse<Buffer> ready = await(web.get("/health/ready").send());

    System.out.printf("[%s] %d cases in %d ms (seed %d)%n", name, stats.total.sum(), elapsedMs, seed);
    System.out.printf("[%s] by status: %s%n", name, stats.byStatus);
    System.out.printf("[%s] by error: %s%n", name, stats.byError);
    System.out.printf("[%s] by category: %s%n", name, stats.byCategory);
    System.out.printf("[%s] tolerated Vert.x-core answers: %s%n", name, stats.tolerated);
    stats.byCategoryAndError.forEach((category, errors) -> System.out.printf("[%s]   %-22s %s%n", name, category, errors));
    System.out.printf("[%s] table before: %s; after: %s%n", name, before.summary(), after.summary());
    List<String> failures = stats.failures();
    writeReport(only != null ? name + "-case-" + only : name, seed, failures);
    failures.stream().limit(SHOWN_FAILURES).forEach(failure -> System.out.println("[" + name + "] FAILED " + failure));

    assertThat(failures).as("%d of %d cases failed (seed %d, replay one with -Dfuzz.seed=%d -Dfuzz.case=N); first ones:%n%s",
        failures.size(), cases, seed, seed, failures.stream().limit(SHOWN_FAILURES).collect(Collectors.joining("\n")))
      .isEmpty();
    assertThat(stats.total.sum()).isEqualTo(cases);
    assertThat(taken).as("increments taken by the fuzz (seed %d)", seed).isZero();
    assertThat(after).as("rows and sums in the table after the fuzz (seed %d)", seed).isEqualTo(before);
    assertThat(ready.statusCode()).as("readiness after the fuzz").isEqualTo(200);
  }

  // ---------------------------------------------------------------- targeted tests for the classes of input the fuzz caught

  static String unique(String prefix) {
    return prefix + "-" + java.util.UUID.randomUUID().toString().substring(0, 8);
  }

  HttpResponse<Buffer> post(String path, String contentType, String body) {
    HttpRequest<Buffer> request = web.post(path).putHeader("Authorization", "Bearer " + BadRequests.WRITE_TOKEN);
    // null: the JSON a well-behaved client declares
    request.putHeader("Content-Type", contentType == null ? "application/json" : contentType);
    return await(request.sendBuffer(Buffer.buffer(body)));
  }

  static void assertRefused(HttpResponse<Buffer> response, int status, String error, String field) {
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(status);
    assertThat(response.getHeader("Content-Type")).isEqualTo("application/json");
    JsonObject json = response.bodyAsJsonObject();
    assertThat(json.getString("error")).isEqualTo(error);
    assertThat(json.getString("message")).isNotBlank();
    assertThat(json.getString("field")).isEqualTo(field);
  }

  @Test
  @DisplayName("a fraction a double would round to a whole number is refused, alone and in batches, and writes nothing")
  void fractionsThatRoundToWholeNumbers() {
    String id = unique("fraction");
    for (String delta : List.of("1.0000000000000001", "0.99999999999999999", "999999.99999999999", "100.000000000000000000001",
      "-0.99999999999999999999", "1.00000000000000000000001e0", "1e-999999999")) {
      assertRefused(post("/v1/counters/likes/" + id + "/increments", null, "{\"delta\":" + delta + "}"), 400, "invalid_delta", "delta");
      String item = "{\"type\":\"likes\",\"id\":\"" + id + "\",\"delta\":" + delta + "}";
      assertRefused(post("/v1/increments", null, "[" + item + "]"), 400, "invalid_delta", "increments[0].delta");
      assertRefused(post("/v1/increments", "application/x-ndjson", item + "\n"), 400, "invalid_delta", "increments[0].delta");
    }
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  @Test
  @DisplayName("a delta with a huge exponent is refused at once, not expanded into a huge integer")
  void hugeExponents() {
    String id = unique("exponent");
    long started = System.nanoTime();
    for (String delta : List.of("1e999999999", "-1e999999999", "1.5e999999999", "1e2147483647", "1E-2147483649", "1e2147483648")) {
      HttpResponse<Buffer> response = post("/v1/counters/likes/" + id + "/increments", null, "{\"delta\":" + delta + "}");
      assertThat(response.statusCode()).as(delta + " " + response.bodyAsString()).isEqualTo(400);
      assertThat(response.bodyAsJsonObject().getString("error")).isIn("invalid_delta", "invalid_json");
    }
    assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(5_000);
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  @Test
  @DisplayName("whole numbers written with a fraction or an exponent are still counted, exactly")
  void wholeDecimalsStillCount() {
    String id = unique("whole");
    for (String delta : List.of("2.0", "3.000", "4e0", "5E+0", "0.6e1", "700e-2")) {
      HttpResponse<Buffer> response = post("/v1/counters/likes/" + id + "/increments", null, "{\"delta\":" + delta + "}");
      assertThat(response.statusCode()).as(delta + " " + response.bodyAsString()).isEqualTo(200);
    }
    assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(2 + 3 + 4 + 5 + 6 + 7L);
  }

  @Test
  @DisplayName("a body that names a field twice is refused, whichever of the values is valid, and writes nothing")
  void duplicateFields() {
    String id = unique("duplicate");
    for (String body : List.of("{\"delta\":0.5,\"delta\":5}", "{\"delta\":5,\"delta\":0.5}", "{\"delta\":5,\"delta\":5}")) {
      assertRefused(post("/v1/counters/likes/" + id + "/increments", null, body), 400, "invalid_json", "body");
    }
    assertRefused(post("/v1/increments", null, "[{\"type\":\"likes\",\"id\":\"" + id + "\",\"delta\":1000001,\"delta\":1}]"),
      400, "invalid_json", "body");
    assertRefused(post("/v1/increments", null, "{\"type\":\"nosuch\",\"type\":\"likes\",\"id\":\"" + id + "\"}\n"),
      400, "invalid_json", "body");
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  @Test
  @DisplayName("an explicit null delta is refused in a batch and on the event bus, as on the single route")
  void nullDeltaInBatches() {
    String id = unique("null");
    String item = "{\"type\":\"likes\",\"id\":\"" + id + "\",\"delta\":null}";
    assertRefused(post("/v1/counters/likes/" + id + "/increments", null, "{\"delta\":null}"), 400, "invalid_delta", "delta");
    assertRefused(post("/v1/increments", null, "[" + item + "]"), 400, "invalid_delta", "increments[0].delta");
    assertRefused(post("/v1/increments", null, item), 400, "invalid_delta", "increments[0].delta");
    Throwable bus = await(fixture.vertx.eventBus().request("counters.increment",
        new JsonObject().put("type", "likes").put("id", id).putNull("delta"))
      .transform(result -> Future.succeededFuture(result.cause())));
    assertThat(bus).isInstanceOf(io.vertx.core.eventbus.ReplyException.class);
    assertThat(((io.vertx.core.eventbus.ReplyException) bus).failureCode()).isEqualTo(400);
    assertThat(new JsonObject(bus.getMessage()).getString("error")).isEqualTo("invalid_delta");
    // a missing delta still means 1
    assertThat(post("/v1/increments", null, "[{\"type\":\"likes\",\"id\":\"" + id + "\"}]").statusCode()).isEqualTo(200);
    assertThat(await(fixture.sumInTable("likes", id))).isEqualTo(1L);
  }

  @Test
  @DisplayName("multipart/form-data is refused on the increment routes (its body is never read), and still fine for beacons")
  void multipartFormData() {
    String id = unique("multipart");
    String type = "multipart/form-data; boundary=fuzz";
    assertRefused(post("/v1/counters/pageviews/" + id + "/increments", type, "{\"delta\":0}"), 415, "unsupported_media_type", "Content-Type");
    assertRefused(post("/v1/counters/pageviews/" + id + "/increments?ack=accepted", "Multipart/Form-Data", ""),
      415, "unsupported_media_type", "Content-Type");
    assertRefused(post("/v1/increments", type, "[{\"type\":\"pageviews\",\"id\":\"" + id + "\"}]"),
      415, "unsupported_media_type", "Content-Type");
    assertThat(await(fixture.sumInTable("pageviews", id))).isZero();
    String form = "--fuzz\r\nContent-Disposition: form-data; name=\"page\"\r\n\r\nhome\r\n--fuzz--\r\n";
    assertThat(await(web.post("/v1/beacon/pageviews/" + id).putHeader("Content-Type", type).sendBuffer(Buffer.buffer(form)))
      .statusCode()).isEqualTo(204);
  }

  @Test
  @DisplayName("a beacon from an Origin that http.corsOrigins does not list gets a JSON 403 and is not counted")
  void disallowedOrigin() {
    String id = unique("origin");
    double takenBefore = fixture.incrementsTaken();
    for (String origin : List.of("https://evil.example", "https://shop.example.evil", "null", "http://shop.example")) {
      assertRefused(await(web.get("/v1/beacon/pageviews/" + id).putHeader("Origin", origin).send()), 403, "origin_not_allowed", "Origin");
    }
    HttpResponse<Buffer> allowed = await(web.get("/v1/beacon/pageviews/" + id).putHeader("Origin", BadRequests.ORIGIN).send());
    assertThat(allowed.statusCode()).isEqualTo(204);
    assertThat(allowed.getHeader("Access-Control-Allow-Origin")).isEqualTo(BadRequests.ORIGIN);
    assertThat(fixture.incrementsTaken() - takenBefore).as("taken: the allowed beacon only").isEqualTo(1.0);
    assertThat(Eventually.value(() -> await(fixture.sumInTable("pageviews", id)), 1L)).isEqualTo(1L);
  }

  @Test
  @DisplayName("a Transfer-Encoding that does not end in chunked gets a JSON 400 and a closed connection, and writes nothing")
  void transferEncodingWithoutChunked() {
    String id = unique("framing");
    for (String codings : List.of("gzip", "identity", "xchunked", "chunked, gzip", "chunked\r\nTransfer-Encoding: gzip")) {
      String request = "POST /v1/counters/likes/" + id + "/increments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
        + BadRequests.WRITE_TOKEN + "\r\nTransfer-Encoding: " + codings + "\r\n\r\nb\r\n{\"delta\":0}\r\n0\r\n\r\n";
      Buffer received = await(raw.readUntilClose(request.getBytes(java.nio.charset.StandardCharsets.UTF_8), 5_000));
      RawHttp.Answer answer = RawHttp.parse(received, true);
      assertThat(answer.status()).as(codings + ": " + received).isEqualTo(400);
      assertThat(answer.contentType()).isEqualTo("application/json");
      JsonObject error = new JsonObject(Buffer.buffer(answer.body()));
      assertThat(error.getString("error")).isEqualTo("malformed_request");
      assertThat(error.getString("field")).isEqualTo("Transfer-Encoding");
      assertThat(received.toString().split("HTTP/1.1 ", -1)).as("one answer only: " + received).hasSize(2);
    }
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  @Test
  @DisplayName("an Expect other than 100-continue gets a JSON 417, and writes nothing")
  void unsupportedExpectation() {
    String id = unique("expect");
    for (String expect : List.of("garbage", "200-ok", "100-continue, x")) {
      HttpResponse<Buffer> response = await(web.post("/v1/counters/likes/" + id + "/increments")
        .putHeader("Authorization", "Bearer " + BadRequests.WRITE_TOKEN).putHeader("Expect", expect)
        .putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("{\"delta\":1}")));
      assertRefused(response, 417, "expectation_failed", "Expect");
    }
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  /**
   * Two answers come from Vert.x core before any handler of the gateway runs; the fuzz tolerates exactly these. If
   * this test fails, Vert.x changed: drop the matching {@link FuzzCase.Allowance}.
   */
  @Test
  @DisplayName("Vert.x core answers an unknown HTTP version with a bare 501, and a bad chunk size by closing; neither writes")
  void vertxCoreAnswers() {
    String id = unique("core");
    String head = "POST /v1/counters/likes/" + id + "/increments ";
    String rest = "\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + BadRequests.WRITE_TOKEN + "\r\n";
    for (String version : List.of("HTTP/2.0", "HTTP/3.0", "HTTP/1.2", "FOO/1.1")) {
      Buffer received = await(raw.readUntilClose((head + version + rest + "Content-Length: 0\r\n\r\n")
        .getBytes(java.nio.charset.StandardCharsets.UTF_8), 5_000));
      RawHttp.Answer answer = RawHttp.parse(received, true);
      assertThat(answer.status()).as(version + ": " + received).isEqualTo(501);
      assertThat(answer.body()).isEmpty();
    }
    Buffer closed = await(raw.readUntilClose((head + "HTTP/1.1" + rest + "Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n")
      .getBytes(java.nio.charset.StandardCharsets.UTF_8), 5_000));
    assertThat(closed.length()).as(closed.toString()).isZero();
    assertThat(await(fixture.sumInTable("likes", id))).isZero();
  }

  /** Every failure, for a run with too many to print: target/fuzz/{class}-{seed}.txt. */
  static void writeReport(String name, long seed, List<String> failures) {
    try {
      java.nio.file.Path file = java.nio.file.Path.of("target", "fuzz", name + "-" + seed + ".txt");
      java.nio.file.Files.createDirectories(file.getParent());
      java.nio.file.Files.write(file, failures);
      if (!failures.isEmpty()) {
        System.out.printf("[%s] all %d failures in %s%n", name, failures.size(), file.toAbsolutePath());
      }
    } catch (java.io.IOException e) {
      System.out.println("[" + name + "] could not write the failure report: " + e);
    }
  }

  static List<Integer> indices(int count) {
    List<Integer> all = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      all.add(i);
    }
    return all;
  }

  /** Sends the cases with at most {@link #IN_FLIGHT} in flight and checks every answer as it comes. */
  Stats run(List<Integer> indices, BadRequests generator) {
    Stats stats = new Stats();
    AtomicInteger next = new AtomicInteger();
    AtomicInteger finished = new AtomicInteger();
    Promise<Void> done = Promise.promise();
    Runnable[] step = new Runnable[1];
    step[0] = () -> {
      int position = next.getAndIncrement();
      if (position >= indices.size()) {
        return;
      }
      int index = indices.get(position);
      Future<FuzzCase> generated;
      try {
        generated = Future.succeededFuture(generator.generate(index));
      } catch (RuntimeException e) {
        generated = Future.failedFuture(e);
      }
      generated.onComplete(fuzzCase -> {
        FuzzCase sent = fuzzCase.succeeded() ? fuzzCase.result()
          : FuzzCase.raw(index, "generator-error", new byte[0], java.util.Set.of(), FuzzCase.Allowance.NONE);
        Future<RawHttp.Answer> answered = fuzzCase.succeeded() ? send(sent)
          : Future.succeededFuture(RawHttp.Answer.none("the generator failed: " + fuzzCase.cause()));
        answered.onComplete(answer -> {
          stats.record(sent, answer.result());
          if (indices.size() == 1) {
            printReplay(sent, answer.result());
          }
          if (finished.incrementAndGet() == indices.size()) {
            done.tryComplete();
          }
          clients.runOnContext(v -> step[0].run());
        });
      });
    };
    for (int i = 0; i < Math.min(IN_FLIGHT, indices.size()); i++) {
      clients.runOnContext(v -> step[0].run());
    }
    await(done.future().timeout(Math.max(120_000, indices.size() * 50L), java.util.concurrent.TimeUnit.MILLISECONDS));
    return stats;
  }

  /** The whole of one replayed case and its answer. */
  static void printReplay(FuzzCase fuzzCase, RawHttp.Answer answer) {
    System.out.println("[replay] " + fuzzCase.describe());
    if (fuzzCase.body() != null) {
      System.out.println("[replay] body: " + FuzzCase.printable(fuzzCase.body(), Integer.MAX_VALUE));
    }
    if (fuzzCase.isRaw()) {
      System.out.println("[replay] bytes: " + FuzzCase.printable(fuzzCase.raw(), Integer.MAX_VALUE));
    }
    System.out.println("[replay] answer: " + (answer.problem() != null ? answer.problem()
      : answer.status() + " " + answer.contentType() + " " + FuzzCase.printable(answer.body(), Integer.MAX_VALUE)));
  }

  /** Never fails: no answer, a late answer or a client-side refusal to send comes back as an answer with a problem. */
  Future<RawHttp.Answer> send(FuzzCase fuzzCase) {
    if (fuzzCase.isRaw()) {
      return raw.exchange(fuzzCase.raw(), TIMEOUT_MS);
    }
    try {
      HttpRequest<Buffer> request = web.request(fuzzCase.method(), fuzzCase.uri()).timeout(TIMEOUT_MS);
      for (String[] header : fuzzCase.headers()) {
        request.headers().add(header[0], header[1]);
      }
      return request.sendBuffer(Buffer.buffer(fuzzCase.body()))
        .map(response -> new RawHttp.Answer(response.statusCode(), response.getHeader("Content-Type"),
          response.body() == null ? new byte[0] : response.body().getBytes(), null))
        .otherwise(error -> RawHttp.Answer.none("no answer: " + error));
    } catch (RuntimeException e) {
      return Future.succeededFuture(RawHttp.Answer.none("the client could not send it: " + e));
    }
  }

  /** Whether the answer is one of the two Vert.x-core answers the case's {@link FuzzCase.Allowance} tolerates. */
  static boolean tolerated(FuzzCase fuzzCase, RawHttp.Answer answer) {
    return switch (fuzzCase.allowance()) {
      case CORE_501 -> answer.problem() == null && answer.status() == 501 && answer.body().length == 0;
      case CLOSE_ON_BAD_CHUNK -> answer.problem() != null && answer.problem().startsWith("connection closed without an answer");
      case NONE -> false;
    };
  }

  /** The checks every answer must pass. */
  static List<String> problems(FuzzCase fuzzCase, RawHttp.Answer answer) {
    List<String> problems = new ArrayList<>();
    if (tolerated(fuzzCase, answer)) {
      return problems;
    }
    if (answer.problem() != null) {
      problems.add(answer.problem());
      return problems;
    }
    if (answer.status() < 400 || answer.status() > 499) {
      problems.add("status " + answer.status() + " is not a 4xx");
    } else if (!fuzzCase.expected().isEmpty() && !fuzzCase.expected().contains(answer.status())) {
      problems.add("status " + answer.status() + " is not one of " + new java.util.TreeSet<>(fuzzCase.expected()));
    }
    if (answer.contentType() == null || !answer.contentType().startsWith("application/json")) {
      problems.add("Content-Type is " + answer.contentType());
    }
    JsonObject error = errorBody(answer);
    if (error == null) {
      problems.add("the body is not a JSON object");
    } else {
      if (!(error.getValue("error") instanceof String code) || code.isBlank()) {
        problems.add("no \"error\" code");
      }
      if (!(error.getValue("message") instanceof String message) || message.isBlank()) {
        problems.add("no \"message\"");
      }
      if (error.containsKey("field") && !(error.getValue("field") instanceof String)) {
        problems.add("\"field\" is not a string");
      }
    }
    return problems;
  }

  static JsonObject errorBody(RawHttp.Answer answer) {
    try {
      return answer.body() == null ? null : new JsonObject(Buffer.buffer(answer.body()));
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Counts by status, error code and category, and the failures with their case and answer. */
  static final class Stats {
    final LongAdder total = new LongAdder();
    final Map<String, LongAdder> byStatus = new ConcurrentSkipListMap<>();
    final Map<String, LongAdder> byError = new ConcurrentSkipListMap<>();
    final Map<String, LongAdder> byCategory = new ConcurrentSkipListMap<>();
    final Map<String, LongAdder> tolerated = new ConcurrentSkipListMap<>();
    final Map<String, Map<String, LongAdder>> byCategoryAndError = new ConcurrentSkipListMap<>();
    private final Map<Integer, String> failures = new ConcurrentHashMap<>();

    void record(FuzzCase fuzzCase, RawHttp.Answer answer) {
      total.increment();
      count(byCategory, fuzzCase.category());
      if (tolerated(fuzzCase, answer)) {
        count(tolerated, fuzzCase.allowance().name());
      }
      count(byStatus, answer.problem() != null ? "none" : Integer.toString(answer.status()));
      JsonObject error = answer.problem() != null ? null : errorBody(answer);
      String code = error != null && error.getValue("error") instanceof String text ? text
        : answer.problem() != null ? "no-answer" : answer.status() + "-no-json";
      count(byError, code);
      byCategoryAndError.computeIfAbsent(fuzzCase.category(), k -> new ConcurrentSkipListMap<>())
        .computeIfAbsent(code, k -> new LongAdder()).increment();
      List<String> problems = problems(fuzzCase, answer);
      if (!problems.isEmpty()) {
        String got = answer.problem() != null ? "no answer"
          : answer.status() + " " + answer.contentType() + " " + FuzzCase.printable(answer.body(), 160);
        failures.put(fuzzCase.index(), fuzzCase.describe() + "\n      got " + got + "\n      because " + String.join("; ", problems));
      }
    }

    List<String> failures() {
      return new TreeMap<>(failures).values().stream().toList();
    }

    private static void count(Map<String, LongAdder> counts, String key) {
      counts.computeIfAbsent(key, k -> new LongAdder()).increment();
    }
  }

  /** The whole table as the fuzz must leave it: row count and per-counter sums of every namespace. */
  record TableState(long rows, Map<String, Map<String, Long>> sums) {
    long total() {
      return sums.values().stream().flatMap(m -> m.values().stream()).mapToLong(Long::longValue).sum();
    }

    String summary() {
      return rows + " rows, " + sums.values().stream().mapToInt(Map::size).sum() + " counters, SUM " + total();
    }
  }

  TableState tableState() {
    Map<String, Map<String, Long>> sums = new TreeMap<>();
    for (String type : BadRequests.NAMESPACES) {
      sums.put(type, new TreeMap<>(await(fixture.sumsInTable(type, ""))));
    }
    return new TableState(await(fixture.rowsInTable()), Collections.unmodifiableMap(sums));
  }

}
