package io.countergateway.internal.http;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Answers that say what went wrong, or what was not done: unknown query parameters, a delta of 0, a method a route
 * does not take, an undeclared namespace, a beacon that was not counted; and the beacon route's answers that must not
 * say more than they should (which namespaces exist, credentials for an opaque origin). A gateway without tokens on
 * loopback, the sidecar's default.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Answers that say why")
class AnswersThatSayWhyIT {
  private static final String BROWSER =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
  private GatewayFixture gateway;

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "answers_counters");
    config.put("batching", new JsonObject().put("maxDelay", "1ms"));
    // ids the global limits.idPattern refuses ('|'), which this namespace takes
    config.getJsonObject("namespaces").put("wide", new JsonObject().put("slots", 2).put("idPattern", "[a-z|]+"));
    gateway = GatewayFixture.start(config);
  }

  @AfterAll
  void stop() {
    gateway.close();
  }

  private HttpResponse<Buffer> send(HttpMethod method, String uri) {
    return await(gateway.http.request(method, uri).putHeader("User-Agent", BROWSER).send());
  }

  private static void refused(HttpResponse<Buffer> response, int status, String error, String field) {
    assertThat(response.statusCode()).as(response.bodyAsString()).isEqualTo(status);
    JsonObject body = response.bodyAsJsonObject();
    assertThat(body.getString("error")).isEqualTo(error);
    assertThat(body.getString("field")).isEqualTo(field);
  }

  @Test
  @DisplayName("an unknown query parameter is 400 unknown_parameter naming it, on every API route, and nothing is counted")
  void unknownParameters() {
    refused(send(HttpMethod.POST, "/v1/counters/likes/param-a/increments?delta=5"), 400, "unknown_parameter", "delta");
    refused(send(HttpMethod.POST, "/v1/counters/likes/param-a/increments?ack=commit&retrun=value"), 400,
      "unknown_parameter", "retrun");
    refused(send(HttpMethod.POST, "/v1/increments?ack=accepted&format=gif"), 400, "unknown_parameter", "format");
    refused(send(HttpMethod.GET, "/v1/counters/likes/param-a?retrun=value"), 400, "unknown_parameter", "retrun");
    refused(send(HttpMethod.GET, "/v1/counters/likes?id=param-a&ids=param-b"), 400, "unknown_parameter", "ids");
    refused(send(HttpMethod.DELETE, "/v1/counters/likes/param-a?force=true"), 400, "unknown_parameter", "force");
    refused(send(HttpMethod.GET, "/v1/namespaces?all=1"), 400, "unknown_parameter", "all");
    refused(send(HttpMethod.GET, "/health/ready?verbose=1"), 400, "unknown_parameter", "verbose");
    refused(send(HttpMethod.GET, "/metrics?x=1"), 400,
      "unknown_parameter", "x");
    assertThat(await(gateway.sumInTable("likes", "param-a"))).isZero();

    assertThat(send(HttpMethod.POST, "/v1/counters/likes/param-c/increments?ack=commit&return=value").statusCode())
      .isEqualTo(200);
    assertThat(send(HttpMethod.GET, "/v1/beacon/pageviews/param-d?format=gif").statusCode()).isEqualTo(200);
    assertThat(send(HttpMethod.GET, "/v1/counters/likes?id=param-c&id=param-d").statusCode()).isEqualTo(200);
    // static files take any query (cache busters, the dashboard's own addresses)
    assertThat(send(HttpMethod.GET, "/ui/?ns=pageviews&range=24h").statusCode()).isEqualTo(200);
    assertThat(send(HttpMethod.GET, "/v1/beacon.js?v=3").statusCode()).isEqualTo(200);
  }

  @Test
  @DisplayName("a beacon ignores the parameters it does not use, names them, and counts the view; the JSON API refuses them")
  void beaconIgnoresParameters() {
    HttpResponse<Buffer> ignored = send(HttpMethod.GET, "/v1/beacon/pageviews/param-b?fromat=gif&fbclid=x");
    assertThat(ignored.statusCode()).isEqualTo(204);
    assertThat(ignored.getHeader("X-Counter-Ignored-Parameters")).isEqualTo("fromat,fbclid");
    HttpResponse<Buffer> pixel = send(HttpMethod.GET, "/v1/beacon/pageviews/param-b?format=gif&_=1699999");
    assertThat(pixel.statusCode()).isEqualTo(200);
    assertThat(pixel.getHeader("X-Counter-Ignored-Parameters")).isEqualTo("_");
    assertThat(send(HttpMethod.GET, "/v1/beacon/pageviews/param-b?format=gif").getHeader("X-Counter-Ignored-Parameters"))
      .isNull();
    assertThat(gateway.sumInTableReaching("pageviews", "param-b", 3)).isEqualTo(3);
    refused(send(HttpMethod.POST, "/v1/counters/likes/param-b/increments?utm_source=x"), 400, "unknown_parameter",
      "utm_source");
  }

  @Test
  @DisplayName("a delta of 0 is answered like a counted increment and changes nothing; a batch with one 0 is taken whole")
  void zeroDelta() {
    HttpResponse<Buffer> zero = await(gateway.http.post("/v1/counters/likes/zero-a/increments")
      .sendJsonObject(new JsonObject().put("delta", 0)));
    assertThat(zero.statusCode()).as(zero.bodyAsString()).isEqualTo(200);
    assertThat(zero.bodyAsJsonObject().getLong("delta")).isZero();
    HttpResponse<Buffer> batch = await(gateway.http.post("/v1/increments").sendJson(new JsonArray()
      .add(new JsonObject().put("type", "likes").put("id", "zero-b").put("delta", 0))
      .add(new JsonObject().put("type", "likes").put("id", "zero-c").put("delta", 2))));
    assertThat(batch.statusCode()).as(batch.bodyAsString()).isEqualTo(200);
    assertThat(batch.bodyAsJsonObject().getInteger("increments")).isEqualTo(2);
    assertThat(await(gateway.sumInTable("likes", "zero-a"))).isZero();
    assertThat(await(gateway.sumInTable("likes", "zero-b"))).isZero();
    assertThat(await(gateway.sumInTable("likes", "zero-c"))).isEqualTo(2);
  }

  @Test
  @DisplayName("a 405 says which methods the route takes in Allow")
  void allowOn405() {
    HttpResponse<Buffer> put = send(HttpMethod.PUT, "/v1/counters/likes/a/increments");
    refused(put, 405, "method_not_allowed", "method");
    assertThat(put.getHeader("Allow")).isEqualTo("POST");
    HttpResponse<Buffer> post = send(HttpMethod.POST, "/v1/counters/likes/a");
    assertThat(post.statusCode()).isEqualTo(405);
    assertThat(post.getHeader("Allow")).isEqualTo("GET, HEAD, DELETE");
    assertThat(send(HttpMethod.DELETE, "/v1/namespaces").getHeader("Allow")).isEqualTo("GET, HEAD");
  }

  @Test
  @DisplayName("an undeclared namespace's 404 says where namespaces are declared")
  void undeclaredNamespace() {
    HttpResponse<Buffer> answer = send(HttpMethod.POST, "/v1/counters/visits/a/increments");
    refused(answer, 404, "unknown_namespace", "type");
    assertThat(answer.bodyAsJsonObject().getString("message")).contains("namespaces.visits");
  }

  @Test
  @DisplayName("a beacon that is not counted says why in X-Counter-Dropped; a counted one carries no such header")
  void droppedBeaconsSayWhy() {
    HttpResponse<Buffer> bot = await(gateway.http.get("/v1/beacon/pageviews/dropped")
      .putHeader("User-Agent", "Googlebot/2.1 (+http://www.google.com/bot.html)").send());
    assertThat(bot.statusCode()).isEqualTo(204);
    assertThat(bot.getHeader("X-Counter-Dropped")).isEqualTo("crawler");
    HttpResponse<Buffer> headless = await(gateway.http.get("/v1/beacon/pageviews/dropped?format=gif")
      .putHeader("User-Agent", BROWSER.replace("Chrome/", "HeadlessChrome/")).send());
    assertThat(headless.statusCode()).isEqualTo(200);
    assertThat(headless.getHeader("X-Counter-Dropped")).isEqualTo("headless_browser");
    HttpResponse<Buffer> person = send(HttpMethod.GET, "/v1/beacon/pageviews/counted");
    assertThat(person.statusCode()).isEqualTo(204);
    assertThat(person.getHeader("X-Counter-Dropped")).isNull();
    HttpResponse<Buffer> gif = send(HttpMethod.GET, "/v1/beacon/pageviews/counted?format=gif");
    assertThat(gif.body().length()).as("the GIF's bytes").isEqualTo(42);
  }

  @Test
  @DisplayName("an anonymous beacon cannot tell a namespace that is not public from one that does not exist")
  void namespacesAreNotEnumerable() {
    HttpResponse<Buffer> notPublic = send(HttpMethod.GET, "/v1/beacon/downloads/x");
    HttpResponse<Buffer> undeclared = send(HttpMethod.GET, "/v1/beacon/downloadz/x");
    assertThat(notPublic.statusCode()).isEqualTo(undeclared.statusCode()).isEqualTo(404);
    assertThat(notPublic.bodyAsString().replace("downloads", "NAME"))
      .isEqualTo(undeclared.bodyAsString().replace("downloadz", "NAME"));
    HttpResponse<Buffer> posted = send(HttpMethod.POST, "/v1/beacon/downloads/x");
    assertThat(posted.bodyAsString()).isEqualTo(notPublic.bodyAsString());
  }

  @Test
  @DisplayName("a beacon from an opaque origin (Origin: null) is counted, and no credentials are granted to it")
  void opaqueOriginGetsNoCredentials() {
    HttpRequest<Buffer> beacon = gateway.http.get("/v1/beacon/pageviews/opaque").putHeader("User-Agent", BROWSER)
      .putHeader("Origin", "null");
    HttpResponse<Buffer> answer = await(beacon.send());
    assertThat(answer.statusCode()).isEqualTo(204);
    assertThat(answer.getHeader("Access-Control-Allow-Origin")).isNull();
    assertThat(answer.getHeader("Access-Control-Allow-Credentials")).isNull();
    HttpResponse<Buffer> site = await(gateway.http.get("/v1/beacon/pageviews/opaque").putHeader("User-Agent", BROWSER)
      .putHeader("Origin", "https://shop.example").send());
    assertThat(site.getHeader("Access-Control-Allow-Origin")).isEqualTo("https://shop.example");
    assertThat(site.getHeader("Access-Control-Expose-Headers")).containsIgnoringCase("X-Counter-Dropped")
      .containsIgnoringCase("X-Counter-Folded").containsIgnoringCase("X-Counter-Ignored-Parameters");
  }

  @Test
  @DisplayName("without tokens, a request naming a host the gateway does not answer to (DNS rebinding) is 421 and writes nothing")
  void reboundNamesAreRefused() {
    int port = gateway.gateway.port();
    String evil = "http://evil.test:" + port;
    HttpResponse<Buffer> increment = await(gateway.http.post("/v1/counters/likes/rebound/increments").virtualHost("evil.test")
      .putHeader("Origin", evil).putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer("{\"delta\":1000000}")));
    refused(increment, 421, "misdirected_request", "Host");
    assertThat(increment.bodyAsJsonObject().getString("message")).contains("http.allowedHosts");
    refused(await(gateway.http.post("/v1/increments").virtualHost("evil.test").putHeader("Origin", evil)
      .sendJson(new JsonArray().add(new JsonObject().put("type", "likes").put("id", "rebound")))), 421, "misdirected_request", "Host");
    refused(await(gateway.http.delete("/v1/counters/likes/rebound").virtualHost("evil.test").putHeader("Origin", evil).send()),
      421, "misdirected_request", "Host");
    for (String route : new String[] {"/v1/namespaces", "/metrics", "/v1/counters/likes/rebound", "/v1/beacon/pageviews/rebound"}) {
      assertThat(await(gateway.http.get(route).virtualHost("evil.test").putHeader("User-Agent", BROWSER).send()).statusCode())
        .as(route).isEqualTo(421);
    }
    assertThat(await(gateway.sumInTable("likes", "rebound"))).isZero();
    assertThat(await(gateway.sumInTable("pageviews", "rebound"))).isZero();
    // the names and addresses the gateway is reached by on this machine
    for (String host : new String[] {"localhost", "127.0.0.1", "app.localhost"}) {
      assertThat(await(gateway.http.get("/v1/namespaces").virtualHost(host).send()).statusCode()).as(host).isEqualTo(200);
    }
  }

  @Test
  @DisplayName("a namespace with an id pattern wider than limits.idPattern reads and resets the counters it takes")
  void namespaceIdRulesForReads() {
    assertThat(send(HttpMethod.POST, "/v1/counters/wide/a%7Cb/increments").statusCode()).isEqualTo(200);
    HttpResponse<Buffer> one = send(HttpMethod.GET, "/v1/counters/wide/a%7Cb");
    assertThat(one.statusCode()).as(one.bodyAsString()).isEqualTo(200);
    assertThat(one.bodyAsJsonObject().getLong("value")).isEqualTo(1);
    HttpResponse<Buffer> many = send(HttpMethod.GET, "/v1/counters/wide?id=a%7Cb");
    assertThat(many.statusCode()).as(many.bodyAsString()).isEqualTo(200);
    assertThat(send(HttpMethod.DELETE, "/v1/counters/wide/a%7Cb").statusCode()).isEqualTo(204);
    assertThat(await(gateway.sumInTable("wide", "a|b"))).isZero();
  }
}
