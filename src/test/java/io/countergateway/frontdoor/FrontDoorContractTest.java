package io.countergateway.frontdoor;

import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.multipart.MultipartForm;
import io.vertx.openapi.contract.Operation;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The front door on each real database (a subclass picks it): real answers checked against the OpenAPI document,
 * CORS as browsers need it for beacons, beacon bodies, and the bot and privacy filters with their metric.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FrontDoorContractTest {
  static final String WRITER = "frontdoor-writer-0123456789";
  static final String ADMIN = "frontdoor-admin-0123456789";
  static final String BEACON_ONLY = "frontdoor-beacon-0123456789";
  static final String CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
  static final String GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
  static final String HEADLESS = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36";

  GatewayFixture fixture;
  DocumentedApi api;

  abstract JsonObject database();

  /** pageviews: public, bots dropped by default, DNT and GPC honoured; docs: public, bots counted. */
  JsonObject config(String table) {
    JsonObject config = GatewayFixture.baseConfig(database(), table);
    config.getJsonObject("namespaces")
      .put("pageviews", new JsonObject().put("slots", 8).put("public", true)
        .put("beacon", new JsonObject().put("honorDoNotTrack", true).put("honorGlobalPrivacyControl", true)))
      .put("docs", new JsonObject().put("slots", 4).put("public", true)
        .put("beacon", new JsonObject().put("dropBots", false)));
    config.put("beacon", new JsonObject().put("botPatterns", new JsonArray().add("uptime-?checker")));
    config.put("auth", new JsonObject().put("tokens", new JsonArray()
      .add(WRITER + ":write").add(ADMIN + ":admin+write").add(BEACON_ONLY + ":beacon")));
    return config;
  }

  @BeforeAll
  void start() {
    fixture = GatewayFixture.start(config("frontdoor_" + getClass().getSimpleName().toLowerCase()));
    api = DocumentedApi.load(fixture.vertx);
  }

  @AfterAll
  void stop() {
    fixture.close();
  }

  /** One Vary header, naming each request header once: a cache keys on it as sent. */
  static void assertVaryOnce(HttpResponse<Buffer> response, String what) {
    List<String> lines = response.headers().getAll("Vary");
    assertThat(lines).as("Vary header lines of the %s answer", what).hasSize(1);
    List<String> names = java.util.Arrays.stream(lines.get(0).split(",")).map(String::strip)
      .map(name -> name.toLowerCase(java.util.Locale.ROOT)).toList();
    assertThat(names).as("names in Vary of the %s answer", what).doesNotHaveDuplicates();
  }

  static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /** One request, and the operation of the document that must describe its answer. */
  record Exchange(String operationId, HttpMethod method, String path, MultiMap headers, Buffer body) {
    static Exchange of(String operationId, String method, String path, String body, String... headers) {
      MultiMap map = MultiMap.caseInsensitiveMultiMap();
      for (int i = 0; i < headers.length; i += 2) {
        map.add(headers[i], headers[i + 1]);
      }
      return new Exchange(operationId, HttpMethod.valueOf(method), path, map, body == null ? null : Buffer.buffer(body));
    }

    @Override
    public String toString() {
      return method + " " + path + " " + headers.entries();
    }
  }

  HttpResponse<Buffer> send(Exchange exchange) {
    HttpRequest<Buffer> request = fixture.http.request(exchange.method(), exchange.path());
    request.putHeaders(exchange.headers());
    if (exchange.body() != null && exchange.body().length() > 0 && !exchange.path().startsWith("/v1/beacon")
      && !exchange.headers().contains("Content-Type")) {
      // the JSON API's clients declare their bodies (the document says so; one that does not gets 415)
      request.putHeader("Content-Type", "application/json");
    }
    return await(exchange.body() == null ? request.send() : request.sendBuffer(exchange.body()));
  }

  List<Exchange> exchanges() {
    String id = unique("doc");
    String big = "{\"delta\":1,\"pad\":\"" + "x".repeat(70_000) + "\"}";
    String auth = "Authorization";
    String writer = "Bearer " + WRITER;
    String batch = "[{\"type\":\"likes\",\"id\":\"" + id + "\",\"delta\":2},{\"type\":\"likes\",\"id\":\"" + id + "-b\"}]";
    String ndjson = "{\"type\":\"likes\",\"id\":\"" + id + "\"}\n{\"type\":\"likes\",\"id\":\"" + id + "-c\"}\n";
    String script = send(Exchange.of("beaconScript", "GET", "/v1/beacon.js", null)).getHeader("ETag");
    String document = send(Exchange.of("openapiDocument", "GET", "/v1/openapi.yaml", null)).getHeader("ETag");
    return List.of(
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments", "{\"delta\":3}", auth, writer),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments", null, auth, writer),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments?ack=accepted", "{\"delta\":1}", auth, writer),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments", "{\"delta\":0.5}", auth, writer),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments?ack=maybe", "", auth, writer),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/a%20b/increments", "", auth, writer),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments", "{\"delta\":1}"),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments", "{}", auth, "Bearer " + BEACON_ONLY),
      Exchange.of("incrementCounter", "POST", "/v1/counters/nosuch/" + id + "/increments", "", auth, writer),
      Exchange.of("incrementCounter", "PUT", "/v1/counters/likes/" + id + "/increments", ""),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments", big, auth, writer),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments", "--x--",
        auth, writer, "Content-Type", "multipart/form-data; boundary=x"),
      Exchange.of("incrementCounter", "POST", "/v1/counters/likes/" + id + "/increments", "{}", auth, writer, "Expect", "tea"),
      Exchange.of("incrementBatch", "POST", "/v1/increments", batch, auth, writer),
      Exchange.of("incrementBatch", "POST", "/v1/increments?ack=accepted", ndjson, auth, writer, "Content-Type", "application/x-ndjson"),
      Exchange.of("incrementBatch", "POST", "/v1/increments", "[]", auth, writer),
      Exchange.of("incrementBatch", "POST", "/v1/increments", "[{\"type\":\"nosuch\",\"id\":\"x\"}]", auth, writer),
      Exchange.of("incrementBatch", "POST", "/v1/increments", big, auth, writer),
      Exchange.of("beaconGet", "GET", "/v1/beacon/pageviews/" + id, null, "User-Agent", CHROME),
      Exchange.of("beaconGet", "GET", "/v1/beacon/pageviews/" + id, null, "User-Agent", CHROME, "Origin", "https://shop.example"),
      Exchange.of("beaconGet", "GET", "/v1/beacon/pageviews/" + id + "?format=gif", null, "User-Agent", CHROME),
      Exchange.of("beaconGet", "GET", "/v1/beacon/pageviews/" + id, null, "User-Agent", GOOGLEBOT),
      Exchange.of("beaconGet", "GET", "/v1/beacon/likes/" + id, null),
      Exchange.of("beaconGet", "GET", "/v1/beacon/nosuch/" + id, null),
      Exchange.of("beaconGet", "GET", "/v1/beacon/pageviews/%2Fa%20page%0A?_=1&utm_source=x", null, "User-Agent", CHROME),
      Exchange.of("beaconGet", "GET", "/v1/beacon/pageviews/" + id, null, "Origin", "not an origin"),
      Exchange.of("beaconPost", "POST", "/v1/beacon/pageviews/" + id, "{\"page\":\"/\"}", "Content-Type", "application/json",
        "User-Agent", CHROME, "Origin", "https://shop.example"),
      Exchange.of("beaconPost", "POST", "/v1/beacon/pageviews/" + id + "?format=gif", "x", "User-Agent", CHROME),
      Exchange.of("beaconPost", "POST", "/v1/beacon/pageviews/" + id, "x".repeat(70_000), "User-Agent", CHROME),
      Exchange.of("beaconPreflight", "OPTIONS", "/v1/beacon/pageviews/" + id, null, "Origin", "https://shop.example",
        "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type"),
      Exchange.of("beaconPreflight", "OPTIONS", "/v1/beacon/pageviews/" + id, null),
      Exchange.of("beaconScript", "GET", "/v1/beacon.js", null),
      Exchange.of("beaconScript", "GET", "/v1/beacon.js", null, "If-None-Match", script),
      Exchange.of("openapiDocument", "GET", "/v1/openapi.yaml", null),
      Exchange.of("openapiDocument", "GET", "/v1/openapi.yaml", null, "If-None-Match", document),
      Exchange.of("readCounter", "GET", "/v1/counters/likes/" + id, null, auth, writer),
      Exchange.of("readCounter", "GET", "/v1/counters/likes/a%20b", null, auth, writer),
      Exchange.of("readCounter", "GET", "/v1/counters/nosuch/" + id, null, auth, writer),
      Exchange.of("readCounter", "GET", "/v1/counters/likes/" + id, null),
      Exchange.of("readCounters", "GET", "/v1/counters/likes?id=" + id + "&id=never", null, auth, writer),
      Exchange.of("readCounters", "GET", "/v1/counters/likes", null, auth, writer),
      Exchange.of("resetCounter", "DELETE", "/v1/counters/likes/" + id + "-b", null, auth, "Bearer " + ADMIN),
      Exchange.of("resetCounter", "DELETE", "/v1/counters/likes/" + id, null),
      Exchange.of("resetCounter", "DELETE", "/v1/counters/likes/" + id, null, auth, writer),
      Exchange.of("healthLive", "GET", "/health/live", null),
      Exchange.of("healthReady", "GET", "/health/ready", null),
      Exchange.of("healthAccepting", "GET", "/health/accepting", null),
      Exchange.of("metrics", "GET", "/metrics", null, auth, writer),
      Exchange.of("metrics", "GET", "/metrics", null));
  }

  @Test
  @DisplayName("real answers of every operation, successes and refusals, match the OpenAPI document")
  void answersMatchTheDocument() {
    List<String> statuses = new ArrayList<>();
    for (Exchange exchange : exchanges()) {
      HttpResponse<Buffer> response = send(exchange);
      Operation operation = api.contract.operation(exchange.operationId());
      if (exchange.method() != HttpMethod.PUT) {
        // the request is routed where the document says (a PUT is refused, as documented for the path's POST)
        assertThat(api.operation(exchange.method(), exchange.path())).as(exchange.toString()).isSameAs(operation);
      }
      try {
        api.check(operation, response);
      } catch (AssertionError e) {
        throw new AssertionError(exchange + ": " + e.getMessage(), e);
      }
      statuses.add(exchange.operationId() + " " + response.statusCode());
    }
    // the exchanges reach the answers they were written for
    assertThat(statuses).contains("incrementCounter 200", "incrementCounter 202", "incrementCounter 400",
      "incrementCounter 401", "incrementCounter 403", "incrementCounter 404", "incrementCounter 405",
      "incrementCounter 413", "incrementCounter 415", "incrementCounter 417", "incrementBatch 200",
      "incrementBatch 202", "incrementBatch 400", "incrementBatch 404", "incrementBatch 413", "beaconGet 204",
      "beaconGet 200", "beaconGet 403", "beaconGet 404", "beaconPost 204", "beaconPost 200",
      "beaconPost 413", "beaconPreflight 204", "beaconScript 200", "beaconScript 304", "openapiDocument 200",
      "openapiDocument 304", "readCounter 200", "readCounter 400", "readCounter 401", "readCounter 404", "readCounters 200",
      "readCounters 400", "resetCounter 204", "resetCounter 401", "resetCounter 403", "healthLive 200",
      "healthReady 200", "healthAccepting 200", "metrics 200", "metrics 401");
  }

  @Test
  @DisplayName("the document served at /v1/openapi.yaml is the one in the jar, cacheable and revalidated by ETag")
  void documentIsServed() {
    HttpResponse<Buffer> response = send(Exchange.of("openapiDocument", "GET", "/v1/openapi.yaml", null));
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.getHeader("Content-Type")).startsWith("application/yaml");
    assertThat(DocumentedApi.parse(response.bodyAsString())).isEqualTo(DocumentedApi.rawDocument());
    assertThat(response.getHeader("Cache-Control")).contains("max-age");
  }

  @Test
  @DisplayName("beacon CORS echoes the exact origin with credentials and Vary: Origin, also for '*', and answers preflights")
  void credentialedCors() {
    String id = unique("cors");
    // this gateway allows '*': every valid origin is echoed, never '*', since beacons carry credentials
    HttpResponse<Buffer> simple = send(Exchange.of("beaconPost", "POST", "/v1/beacon/docs/" + id, "hello",
      "Origin", "https://blog.example", "Content-Type", "text/plain"));
    assertThat(simple.statusCode()).isEqualTo(204);
    assertThat(simple.getHeader("Access-Control-Allow-Origin")).isEqualTo("https://blog.example");
    assertThat(simple.getHeader("Access-Control-Allow-Credentials")).isEqualTo("true");
    assertThat(simple.getHeader("Vary")).contains("Origin");
    assertVaryOnce(simple, "simple");

    HttpResponse<Buffer> preflight = send(Exchange.of("beaconPreflight", "OPTIONS", "/v1/beacon/docs/" + id, null,
      "Origin", "https://blog.example", "Access-Control-Request-Method", "POST",
      "Access-Control-Request-Headers", "content-type,x-page"));
    assertThat(preflight.statusCode()).isEqualTo(204);
    assertThat(preflight.getHeader("Access-Control-Allow-Origin")).isEqualTo("https://blog.example");
    assertThat(preflight.getHeader("Access-Control-Allow-Credentials")).isEqualTo("true");
    assertThat(preflight.getHeader("Access-Control-Allow-Headers")).isEqualTo("content-type,x-page");
    assertThat(preflight.getHeader("Access-Control-Allow-Methods")).contains("POST");
    assertThat(preflight.getHeader("Access-Control-Max-Age")).isEqualTo("7200");
    assertThat(preflight.getHeader("Vary")).contains("Origin");
    assertVaryOnce(preflight, "preflight");

    // a gateway with a list: listed origins are echoed alone, others refused and not counted
    JsonObject listed = config(fixture.table);
    listed.getJsonObject("http").put("corsOrigins", new JsonArray().add("https://shop.example"));
    try (GatewayFixture shop = GatewayFixture.start(listed)) {
      HttpResponse<Buffer> allowed = await(shop.http.post("/v1/beacon/docs/" + id).putHeader("Origin", "https://shop.example")
        .sendBuffer(Buffer.buffer("{}")));
      assertThat(allowed.statusCode()).isEqualTo(204);
      assertThat(allowed.getHeader("Access-Control-Allow-Origin")).isEqualTo("https://shop.example");
      assertThat(allowed.getHeader("Access-Control-Allow-Credentials")).isEqualTo("true");
      assertThat(allowed.getHeader("Vary")).contains("Origin");
      assertVaryOnce(allowed, "listed origin");
      for (HttpMethod method : List.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.OPTIONS)) {
        HttpResponse<Buffer> refused = await(shop.http.request(method, "/v1/beacon/docs/" + id + "-refused")
          .putHeader("Origin", "https://evil.example").putHeader("Access-Control-Request-Method", "POST").send());
        assertThat(refused.statusCode()).as(method.name()).isEqualTo(403);
        assertThat(refused.bodyAsJsonObject().getString("error")).isEqualTo("origin_not_allowed");
        assertThat(refused.getHeader("Access-Control-Allow-Origin")).isNull();
      }
      assertThat(Eventually.value(() -> await(fixture.sumInTable("docs", id)), 2L)).isEqualTo(2L);
      assertThat(await(fixture.sumInTable("docs", id + "-refused"))).isZero();
    }
  }

  @Test
  @DisplayName("a tracker's beacon from another origin is answered with its origin and one Vary naming Origin once")
  void trackerAnswerVariesOnce() {
    HttpResponse<Buffer> plausible = await(fixture.http.post("/api/event").putHeader("Origin", "https://blog.example")
      .putHeader("Content-Type", "text/plain").putHeader("User-Agent", CHROME)
      .sendBuffer(Buffer.buffer("{\"n\":\"pageview\",\"u\":\"https://blog.example/" + unique("vary")
        + "\",\"d\":\"blog.example\"}")));
    assertThat(plausible.statusCode()).as(plausible.bodyAsString()).isEqualTo(202);
    assertThat(plausible.getHeader("Access-Control-Allow-Origin")).isEqualTo("https://blog.example");
    assertThat(plausible.getHeader("Vary")).contains("Origin");
    assertVaryOnce(plausible, "Plausible event");
  }

  @Test
  @DisplayName("GET beacons, taken without the router, answer and count as the router's chain does")
  void hotBeaconRouteAnswersAsTheRouter() {
    String id = unique("hot");
    HttpResponse<Buffer> withOrigin = await(fixture.http.get("/v1/beacon/docs/" + id)
      .putHeader("Origin", "https://blog.example").send());
    assertThat(withOrigin.statusCode()).isEqualTo(204);
    assertThat(withOrigin.getHeader("Access-Control-Allow-Origin")).isEqualTo("https://blog.example");
    assertThat(withOrigin.getHeader("Access-Control-Allow-Credentials")).isEqualTo("true");
    assertThat(withOrigin.getHeader("Vary")).contains("Origin");
    assertVaryOnce(withOrigin, "hot GET");
    assertThat(withOrigin.getHeader("Cache-Control")).isEqualTo("no-store");

    HttpResponse<Buffer> pixel = await(fixture.http.get("/v1/beacon/docs/" + id + "?format=gif").send());
    assertThat(pixel.statusCode()).isEqualTo(200);
    assertThat(pixel.getHeader("Content-Type")).isEqualTo("image/gif");
    assertThat(pixel.getHeader("Vary")).contains("Origin");
    assertVaryOnce(pixel, "pixel");

    // an id is decoded once, whichever path takes it (origins outside a list: see credentialedCors)
    assertThat(await(fixture.http.get("/v1/beacon/docs/" + id + "%2Dz").send()).statusCode()).isEqualTo(204);
    assertThat(await(fixture.http.get("/v1/beacon/docs/" + id + "!!%20").send()).statusCode()).isEqualTo(204);
    assertThat(await(fixture.http.get("/v1/beacon/docs/" + id + "%").send()).statusCode()).isEqualTo(204);

    assertThat(Eventually.value(() -> await(fixture.sumInTable("docs", id)), 2L)).isEqualTo(2L);
    assertThat(Eventually.value(() -> await(fixture.sumInTable("docs", id + "-z")), 1L)).isEqualTo(1L);
    assertThat(Eventually.value(() -> await(fixture.sumInTable("docs", id + "!! ")), 1L)).isEqualTo(1L);
    assertThat(Eventually.value(() -> await(fixture.sumInTable("docs", id + "%")), 1L)).isEqualTo(1L);
  }

  @Test
  @DisplayName("beacon bodies of any type up to 64 KiB are taken and ignored; a larger one is refused and not counted")
  void beaconBodiesOfAnyType() {
    String id = unique("bodies");
    String path = "/v1/beacon/docs/" + id;
    double takenBefore = fixture.incrementsTaken();
    List<HttpResponse<Buffer>> answers = List.of(
      await(fixture.http.post(path).putHeader("Content-Type", "text/plain;charset=UTF-8").sendBuffer(Buffer.buffer("/home"))),
      await(fixture.http.post(path).sendJsonObject(new JsonObject().put("page", "/home").put("w", 1280))),
      await(fixture.http.post(path).sendForm(MultiMap.caseInsensitiveMultiMap().add("page", "/home"))),
      await(fixture.http.post(path).sendMultipartForm(MultipartForm.create().attribute("page", "/home"))),
      await(fixture.http.post(path).putHeader("Content-Type", "application/octet-stream")
        .sendBuffer(Buffer.buffer(new byte[65_536]))),
      await(fixture.http.post(path).sendBuffer(Buffer.buffer("{not json"))));
    assertThat(answers).allSatisfy(answer -> assertThat(answer.statusCode()).isEqualTo(204));
    HttpResponse<Buffer> tooLarge = await(fixture.http.post(path).putHeader("Content-Type", "application/octet-stream")
      .sendBuffer(Buffer.buffer(new byte[65_537])));
    assertThat(tooLarge.statusCode()).isEqualTo(413);
    assertThat(tooLarge.bodyAsJsonObject().getString("error")).isEqualTo("body_too_large");
    // taken before it is answered: six taken and six in the table, so no later flush can add a seventh
    assertThat(fixture.incrementsTaken() - takenBefore).isEqualTo(6);
    assertThat(Eventually.value(() -> await(fixture.sumInTable("docs", id)), 6L)).isEqualTo(6L);
  }

  @Test
  @DisplayName("crawlers, headless browsers, configured patterns, DNT and GPC get 204, are not counted, and are in the metric")
  void botsAndPrivacySignalsAreDropped() {
    String id = unique("filtered");
    String path = "/v1/beacon/pageviews/" + id;
    double takenBefore = fixture.incrementsTaken();
    List<String[]> dropped = List.of(
      new String[] {"User-Agent", GOOGLEBOT},
      new String[] {"User-Agent", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"},
      new String[] {"User-Agent", HEADLESS},
      new String[] {"User-Agent", "Uptime-Checker/2.1"},
      new String[] {"User-Agent", ""},
      new String[] {"DNT", "1"},
      new String[] {"Sec-GPC", "1"});
    for (String[] header : dropped) {
      HttpRequest<Buffer> request = fixture.http.get(path).putHeader("User-Agent", CHROME).putHeader(header[0], header[1]);
      HttpResponse<Buffer> answer = await(request.send());
      assertThat(answer.statusCode()).as(header[0] + ": " + header[1]).isEqualTo(204);
    }
    assertThat(await(fixture.http.get(path + "?format=gif").putHeader("User-Agent", GOOGLEBOT).send()).statusCode())
      .isEqualTo(200);
    // a person's browser, and a bot on a namespace that keeps bots
    assertThat(await(fixture.http.get(path).putHeader("User-Agent", CHROME).putHeader("DNT", "0").send()).statusCode())
      .isEqualTo(204);
    assertThat(await(fixture.http.get("/v1/beacon/docs/" + id).putHeader("User-Agent", GOOGLEBOT).send()).statusCode())
      .isEqualTo(204);

    // a dropped beacon is never taken, so none of them can reach the table later: two taken, one in each namespace
    assertThat(fixture.incrementsTaken() - takenBefore).isEqualTo(2);
    assertThat(Eventually.value(() -> await(fixture.sumInTable("pageviews", id)), 1L)).isEqualTo(1L);
    assertThat(Eventually.value(() -> await(fixture.sumInTable("docs", id)), 1L)).isEqualTo(1L);

    String metrics = await(fixture.http.get("/metrics").putHeader("Authorization", "Bearer " + WRITER).send()).bodyAsString();
    assertThat(metrics).contains("# HELP gateway_beacons_dropped_total ");
    assertThat(dropCount(metrics, "pageviews", "crawler")).isGreaterThanOrEqualTo(3);
    assertThat(dropCount(metrics, "pageviews", "headless_browser")).isGreaterThanOrEqualTo(1);
    assertThat(dropCount(metrics, "pageviews", "configured_pattern")).isGreaterThanOrEqualTo(1);
    assertThat(dropCount(metrics, "pageviews", "no_user_agent")).isGreaterThanOrEqualTo(1);
    assertThat(dropCount(metrics, "pageviews", "do_not_track")).isGreaterThanOrEqualTo(1);
    assertThat(dropCount(metrics, "pageviews", "global_privacy_control")).isGreaterThanOrEqualTo(1);
    assertThat(dropCount(metrics, "docs", "crawler")).isZero();
  }

  static double dropCount(String metrics, String namespace, String reason) {
    String series = "gateway_beacons_dropped_total{namespace=\"" + namespace + "\",reason=\"" + reason + "\"} ";
    return metrics.lines().filter(line -> line.startsWith(series)).mapToDouble(line ->
      Double.parseDouble(line.substring(series.length()).strip())).findFirst().orElse(-1);
  }
}
