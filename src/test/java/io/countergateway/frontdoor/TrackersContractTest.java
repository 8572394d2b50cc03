package io.countergateway.frontdoor;

import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
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

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tracker endpoints on each real database (a subclass picks it), driven with the exact requests GoatCounter's
 * count.js, Umami's script.js and Plausible's script send (src/test/resources/trackers/): each answer is checked
 * against the OpenAPI document and what the script reads, each count in the table.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class TrackersContractTest {
  static final String CHROME = FrontDoorContractTest.CHROME;
  static final String ORIGIN = "https://shop.example";
  static final String UMAMI_SHOP = "5a1c0d8e-94b2-4f55-9f43-0c2b6b1f6a7e";

  GatewayFixture fixture;
  DocumentedApi api;

  abstract JsonObject database();

  /** pageviews (plain, the default); shop (windowed, unique): GoatCounter's shop host, Umami's id; blog: Plausible's domain. */
  JsonObject config(String table) {
    JsonObject config = GatewayFixture.baseConfig(database(), table);
    config.getJsonObject("namespaces")
      .put("shop", new JsonObject().put("slots", 4).put("public", true).put("unique", true)
        .put("window", new JsonObject().put("bucket", "hour")))
      .put("blog", new JsonObject().put("slots", 4).put("public", true));
    config.put("beacon", new JsonObject().put("trackerSites", new JsonArray().add("stats.shop.example=shop")
      .add(UMAMI_SHOP + "=shop").add("blog.example=blog")));
    // the GoatCounter site's name must be one the gateway answers to (http.allowedHosts)
    config.put("http", config.getJsonObject("http").put("corsOrigins", new JsonArray().add("*"))
      .put("allowedHosts", new JsonArray().add(".shop.example")));
    return config;
  }

  @BeforeAll
  void start() {
    fixture = GatewayFixture.start(config("trackers_" + getClass().getSimpleName().toLowerCase()));
    api = DocumentedApi.load(fixture.vertx);
  }

  @AfterAll
  void stop() {
    fixture.close();
  }

  static String unique(String prefix) {
    return "/" + prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  static String enc(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** The URL count.js builds: its urlencode of {p, r, t, s, b, q, rnd} (empty values and e=false left out). */
  static String goatCounterUrl(String pathAndSearch, String referrer, String search, int bot) {
    return "/count?p=" + enc(pathAndSearch) + (referrer.isEmpty() ? "" : "&r=" + enc(referrer)) + "&t=" + enc("A page")
      + "&s=1366&b=" + bot + (search.isEmpty() ? "" : "&q=" + enc(search)) + "&rnd=k3x9a";
  }

  /** The answer, checked against the operation the document gives its method and path. */
  HttpResponse<Buffer> send(HttpMethod method, String uri, String body, String... headers) {
    HttpRequest<Buffer> request = fixture.http.request(method, uri).putHeader("User-Agent", CHROME);
    for (int i = 0; i < headers.length; i += 2) {
      request.putHeader(headers[i], headers[i + 1]);
    }
    HttpResponse<Buffer> response = await(body == null ? request.send() : request.sendBuffer(Buffer.buffer(body)));
    try {
      api.check(api.operation(method, uri), response);
    } catch (AssertionError e) {
      throw new AssertionError(method + " " + uri + ": " + e.getMessage(), e);
    }
    return response;
  }

  long sum(String namespace, String id) {
    return await(fixture.sumInTable(namespace, id));
  }

  long windowedSum(String namespace, String id) {
    return await(fixture.bucketsInTable(namespace, id)).values().stream().mapToLong(Long::longValue).sum();
  }

  @Test
  @DisplayName("GoatCounter: the image GET answers a GIF and sendBeacon's POST an empty 200, each counting the page's decoded path")
  void goatCounterCounts() {
    String page = unique("gc") + "/%C3%BCber";
    String id = page.replace("%C3%BC", "ü");
    double takenBefore = fixture.incrementsTaken();

    HttpResponse<Buffer> image = send(HttpMethod.GET, goatCounterUrl(page + "?utm_source=news", "https://search.example/",
      "?utm_source=news", 0), null, "Origin", ORIGIN);
    assertThat(image.statusCode()).isEqualTo(200);
    assertThat(image.getHeader("Content-Type")).isEqualTo("image/gif");
    assertThat(image.body().length()).isEqualTo(42);
    assertThat(image.getHeader("Cache-Control")).isEqualTo("no-store");
    assertThat(image.getHeader("X-Counter-Dropped")).isNull();

    HttpResponse<Buffer> beacon = send(HttpMethod.POST, goatCounterUrl(page, "", "", 0), null,
      "Origin", ORIGIN, "Content-Type", "text/plain;charset=UTF-8");
    assertThat(beacon.statusCode()).isEqualTo(200);
    assertThat(beacon.body() == null ? 0 : beacon.body().length()).isZero();
    assertThat(beacon.getHeader("Access-Control-Allow-Origin")).isEqualTo(ORIGIN);
    assertThat(beacon.getHeader("Access-Control-Allow-Credentials")).isEqualTo("true");

    // the script's own bot score and an event (a click) are answered, not counted
    HttpResponse<Buffer> bot = send(HttpMethod.POST, goatCounterUrl(page, "", "", 153), null);
    assertThat(bot.statusCode()).isEqualTo(200);
    assertThat(bot.getHeader("X-Counter-Dropped")).isEqualTo("bot");
    HttpResponse<Buffer> event = send(HttpMethod.GET, "/count?p=signup&t=Sign%20up&e=true&s=1366&b=0&rnd=a1b2c", null);
    assertThat(event.getHeader("X-Counter-Dropped")).isEqualTo("event");
    // a HEAD is answered as its GET, and counts nothing
    assertThat(await(fixture.http.head(goatCounterUrl(page, "", "", 0)).send()).getHeader("X-Counter-Dropped"))
      .isEqualTo("head");

    assertThat(fixture.incrementsTaken() - takenBefore).isEqualTo(2);
    assertThat(Eventually.value(() -> sum("pageviews", id), 2L)).isEqualTo(2L);
    assertThat(sum("pageviews", "signup")).isZero();
  }

  @Test
  @DisplayName("GoatCounter: the Host the script sends to names its site's namespace, here a windowed one")
  void goatCounterSiteByHost() {
    String page = unique("gc-host");
    HttpResponse<Buffer> answer = send(HttpMethod.POST, goatCounterUrl(page, "", "", 0), null,
      "Host", "stats.shop.example:" + fixture.gateway.port());
    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(Eventually.value(() -> windowedSum("shop", page), 1L)).isEqualTo(1L);
    assertThat(sum("pageviews", page)).isZero();
  }

  @Test
  @DisplayName("Umami: a page view answers {} and counts in its website's namespace; named events, identify and performance do not")
  void umamiCounts() {
    String page = unique("umami");
    String payload = "{\"website\":\"" + UMAMI_SHOP + "\",\"screen\":\"1366x768\",\"language\":\"en-US\",\"title\":\"Shop\","
      + "\"hostname\":\"shop.example\",\"url\":\"https://shop.example" + page + "?utm_campaign=spring#top\","
      + "\"referrer\":\"https://search.example/\"";

    HttpResponse<Buffer> view = send(HttpMethod.POST, "/api/send", "{\"type\":\"event\",\"payload\":" + payload + "}}",
      "Content-Type", "application/json", "Origin", ORIGIN);
    assertThat(view.statusCode()).isEqualTo(200);
    assertThat(view.bodyAsJsonObject()).isEqualTo(new JsonObject());
    assertThat(view.getHeader("Access-Control-Allow-Origin")).isEqualTo(ORIGIN);

    // a view of a windowed namespace also counts its site's breakdowns: what the not-views add is measured from here
    double afterView = fixture.incrementsTaken();
    for (Map.Entry<String, String> notView : Map.of(
      "{\"type\":\"event\",\"payload\":" + payload + ",\"name\":\"signup\",\"data\":{\"plan\":\"pro\"}}}", "event",
      "{\"type\":\"identify\",\"payload\":" + payload + ",\"data\":{\"user\":\"x\"}}}", "identify",
      "{\"type\":\"performance\",\"payload\":" + payload + ",\"lcp\":812,\"duration\":10000}}", "performance").entrySet()) {
      HttpResponse<Buffer> answer = send(HttpMethod.POST, "/api/send", notView.getKey(), "Content-Type",
        "application/json", "x-umami-cache", "");
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(answer.bodyAsJsonObject()).isEqualTo(new JsonObject());
      assertThat(answer.getHeader("X-Counter-Dropped")).isEqualTo(notView.getValue());
    }

    assertThat(fixture.incrementsTaken()).as("increments taken by the hits that are not views").isEqualTo(afterView);

    // a website no entry names counts in beacon.trackerNamespace
    HttpResponse<Buffer> other = send(HttpMethod.POST, "/api/send", "{\"type\":\"event\",\"payload\":{\"website\":\"other\","
      + "\"url\":\"http://localhost:8080" + page + "\",\"referrer\":\"\"}}", "Content-Type", "application/json");
    assertThat(other.statusCode()).isEqualTo(200);

    assertThat(Eventually.value(() -> windowedSum("shop", page), 1L)).isEqualTo(1L);
    assertThat(Eventually.value(() -> sum("pageviews", page), 1L)).isEqualTo(1L);
  }

  @Test
  @DisplayName("Umami: the CORS preflight its JSON body needs is answered for the page's origin")
  void umamiPreflight() {
    HttpResponse<Buffer> preflight = await(fixture.http.request(HttpMethod.OPTIONS, "/api/send").putHeader("Origin", ORIGIN)
      .putHeader("Access-Control-Request-Method", "POST").putHeader("Access-Control-Request-Headers", "content-type")
      .send());
    assertThat(preflight.statusCode()).isEqualTo(204);
    assertThat(preflight.getHeader("Access-Control-Allow-Origin")).isEqualTo(ORIGIN);
    assertThat(preflight.getHeader("Access-Control-Allow-Headers")).isEqualTo("content-type");
    assertThat(preflight.getHeader("Vary")).contains("Origin");
  }

  @Test
  @DisplayName("Plausible: a pageview answers 202 ok and counts in its domain's namespace; engagement and custom events do not")
  void plausibleCounts() {
    String page = unique("plausible");
    double takenBefore = fixture.incrementsTaken();
    HttpResponse<Buffer> view = send(HttpMethod.POST, "/api/event", "{\"n\":\"pageview\",\"v\":36,\"u\":\"https://blog.example"
      + page + "?utm_source=mastodon\",\"d\":\"blog.example\",\"r\":\"https://social.example/@x\"}",
      "Content-Type", "text/plain", "Origin", ORIGIN);
    assertThat(view.statusCode()).isEqualTo(202);
    assertThat(view.bodyAsString()).isEqualTo("ok");
    assertThat(view.getHeader("Access-Control-Allow-Origin")).isEqualTo(ORIGIN);

    HttpResponse<Buffer> engagement = send(HttpMethod.POST, "/api/event", "{\"n\":\"engagement\",\"sd\":100,\"d\":"
      + "\"blog.example\",\"u\":\"https://blog.example" + page + "\",\"p\":{},\"e\":3120,\"v\":36}", "Content-Type", "text/plain");
    assertThat(engagement.statusCode()).isEqualTo(202);
    assertThat(engagement.getHeader("X-Counter-Dropped")).isEqualTo("engagement");
    HttpResponse<Buffer> custom = send(HttpMethod.POST, "/api/event", "{\"n\":\"Signup\",\"v\":36,\"u\":\"https://blog.example"
      + page + "\",\"d\":\"blog.example\",\"r\":null,\"p\":{\"plan\":\"pro\"}}", "Content-Type", "text/plain");
    assertThat(custom.getHeader("X-Counter-Dropped")).isEqualTo("event");

    assertThat(fixture.incrementsTaken() - takenBefore).isEqualTo(1);
    assertThat(Eventually.value(() -> sum("blog", page), 1L)).isEqualTo(1L);
  }

  @Test
  @DisplayName("bad input is refused with a JSON error naming the field and its rule, and nothing is counted")
  void badInputIsRefused() {
    double takenBefore = fixture.incrementsTaken();
    Object[][] refusals = {
      {HttpMethod.GET, "/count?r=x&b=0", null, 400, "p"},
      {HttpMethod.POST, "/count?p=", null, 400, "p"},
      {HttpMethod.POST, "/api/send", "{\"type\":\"event\",", 400, "body"},
      {HttpMethod.POST, "/api/send", "{\"type\":\"event\",\"payload\":{\"website\":\"w\"}}", 400, "payload.url"},
      {HttpMethod.POST, "/api/send", "{\"type\":\"click\",\"payload\":{}}", 400, "type"},
      {HttpMethod.POST, "/api/event", "{\"n\":\"pageview\",\"d\":\"blog.example\"}", 400, "u"},
      {HttpMethod.POST, "/api/event", "pageview", 400, "body"},
      {HttpMethod.POST, "/api/event", "{\"n\":\"pageview\",\"u\":\"https://b/\",\"d\":\"b\",\"pad\":\"" + "x".repeat(70_000)
        + "\"}", 413, "body"},
    };
    for (Object[] refusal : refusals) {
      HttpResponse<Buffer> answer = send((HttpMethod) refusal[0], (String) refusal[1], (String) refusal[2],
        "Content-Type", "text/plain");
      assertThat(answer.statusCode()).as(refusal[1] + " " + refusal[2]).isEqualTo(refusal[3]);
      JsonObject error = answer.bodyAsJsonObject();
      assertThat(error.getString("field")).as(refusal[1] + " " + refusal[2]).isEqualTo(refusal[4]);
      assertThat(error.getString("message")).isNotBlank();
    }
    assertThat(fixture.incrementsTaken() - takenBefore).isZero();
  }
}
