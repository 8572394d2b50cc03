package io.countergateway.frontdoor;

import io.countergateway.internal.beacon.ReservedIds;
import io.countergateway.internal.model.PageIds;
import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.HeadlessChromium;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.chrome.ChromeDriver;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Beacons from a real browser: Debian's headless Chromium, driven through its chromedriver, loads pages served from
 * another origin (another port of the loopback) that embed the snippet or call the browser's beacon APIs directly.
 * Each way is counted exactly once per page load; a page of an origin outside http.corsOrigins is refused and not
 * counted. Skipped where Chromium or chromedriver is not installed ({@code .ci/run} installs both).
 */
@DisplayName("Beacons from headless Chromium")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BrowserBeaconIT {

  GatewayFixture fixture;
  io.vertx.core.Vertx pageVertx;
  HttpServer pages;
  HttpServer strangerPages;
  final Map<String, String> html = new ConcurrentHashMap<>();
  HeadlessChromium chromium;
  ChromeDriver browser;
  String gateway;
  String pageOrigin;
  String strangerOrigin;

  static boolean browserInstalled() {
    return HeadlessChromium.installed();
  }

  @BeforeEach
  void needsTheBrowser() {
    // checked per test, so a machine without Chromium reports each test as skipped, not none as run
    assumeTrue(browserInstalled(), "needs Debian's chromium and chromium-driver (" + HeadlessChromium.CHROMIUM + ", "
      + HeadlessChromium.CHROMEDRIVER + ")");
  }

  @BeforeAll
  void start() {
    if (!browserInstalled()) {
      return;
    }
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "browser_counters");
    // the allowed page origin is only known once its server listens: start it first on a port of its own
    pageVertx = io.vertx.core.Vertx.vertx();
    pages = await(pageVertx.createHttpServer().requestHandler(this::servePage).listen(0, "127.0.0.1"));
    strangerPages = await(pageVertx.createHttpServer().requestHandler(this::servePage).listen(0, "127.0.0.1"));
    pageOrigin = "http://127.0.0.1:" + pages.actualPort();
    strangerOrigin = "http://127.0.0.1:" + strangerPages.actualPort();
    config.getJsonObject("http").put("corsOrigins", new JsonArray().add(pageOrigin));
    config.getJsonObject("namespaces")
      // headless Chromium is a bot by its User-Agent: this namespace counts it, the default one drops it
      .put("pageviews", new JsonObject().put("slots", 8).put("public", true).put("beacon", new JsonObject().put("dropBots", false)))
      .put("guarded", new JsonObject().put("slots", 4).put("public", true));
    fixture = GatewayFixture.start(config);
    gateway = "http://127.0.0.1:" + fixture.gateway.port();

    chromium = HeadlessChromium.start();
    browser = chromium.browser;
  }

  @AfterAll
  void stop() {
    if (chromium != null) {
      chromium.close();
    }
    if (fixture != null) {
      fixture.close();
    }
    if (pageVertx != null) {
      await(pageVertx.close());
    }
  }

  /** Pages are found by their path as text: the browser sends {@code /docs/über} percent-encoded. */
  private void servePage(io.vertx.core.http.HttpServerRequest request) {
    String path = request.path();
    String page;
    try {
      page = html.get(URLDecoder.decode(path.replace("+", "%2B"), StandardCharsets.UTF_8));
    } catch (IllegalArgumentException literalPercent) {
      page = html.get(path);
    }
    if (page == null) {
      request.response().setStatusCode(404).end();
    } else {
      request.response().putHeader("Content-Type", "text/html; charset=utf-8").end(page);
    }
  }

  /** Serves a page at {@code path} of the given origin's server and returns its URL. */
  String page(String origin, String path, String body) {
    html.put(path, "<!doctype html><html><head><meta charset=utf-8><title>t</title><script>window.errors = [];"
      + "addEventListener('error', e => errors.push(String(e.message)));"
      + "addEventListener('unhandledrejection', e => errors.push(String(e.reason)));</script></head><body>"
      + body + "</body></html>");
    return origin + path;
  }

  static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  String beaconUrl(String namespace, String id) {
    return gateway + "/v1/beacon/" + namespace + "/" + id;
  }

  /** Loads the page, waits for {@code expected} in the table, leaves the page, and returns the count a moment later. */
  long countAfterLoading(String url, String id, long expected) {
    browser.get(url);
    Eventually.value(() -> await(fixture.sumInTable("pageviews", id)), expected);
    browser.get("about:blank"); // an unload: a beacon sent twice would show now
    pause(300);
    return await(fixture.sumInTable("pageviews", id));
  }

  @SuppressWarnings("unchecked")
  List<Object> pageErrors() {
    return (List<Object>) ((JavascriptExecutor) browser).executeScript("return window.errors || []");
  }

  @Test
  @DisplayName("the snippet counts one view per page load by sendBeacon, by fetch keepalive and by pixel, and never throws")
  void snippetEachWay() {
    Map<String, String> ways = Map.of(
      "sendbeacon", "",
      // sendBeacon that fails: the snippet falls back to fetch, and swallows the error
      "fetch", "<script>navigator.sendBeacon = function () { throw new Error('no beacons here'); };</script>",
      "pixel", "<script>navigator.sendBeacon = undefined; window.fetch = undefined;</script>");
    for (Map.Entry<String, String> way : ways.entrySet()) {
      String id = unique(way.getKey());
      String url = page(pageOrigin, "/snippet/" + id, way.getValue() + "<script async src=\"" + gateway
        + "/v1/beacon.js\" data-namespace=\"pageviews\" data-id=\"" + id + "\"></script>");
      assertThat(countAfterLoading(url, id, 1)).as(way.getKey()).isEqualTo(1);
      assertThat(countAfterLoading(url, id, 2)).as(way.getKey() + ", second load").isEqualTo(2);
    }
  }

  @Test
  @DisplayName("without data-id the snippet counts the page's path; a refused beacon throws nothing into the page")
  void snippetDefaultsAndRefusals() {
    String path = "/docs/" + unique("start");
    String url = page(pageOrigin, path, "<script src=\"" + gateway + "/v1/beacon.js\"></script>"
      + "<script src=\"" + gateway + "/v1/beacon.js\" data-namespace=\"likes\"></script>"
      + "<script src=\"" + gateway + "/v1/beacon.js\" data-namespace=\"nosuch\" data-id=\"a b\"></script>");
    assertThat(countAfterLoading(url, path, 1)).isEqualTo(1);
    browser.get(url);
    pause(300);
    assertThat(pageErrors()).isEmpty();
    assertThat(await(fixture.sumInTable("likes", path))).isZero();
  }

  @Test
  @DisplayName("the snippet counts pages whose paths hold letters of any script, spaces, ( ) ; ' a fragment or 600 characters")
  void snippetCountsEveryPagePath() {
    String site = "/" + unique("site");
    List<String> paths = List.of(site + "/docs/über", site + "/a page", site + "/wiki/Foo_(bar)", site + "/x;y",
      site + "/it's", site + "/100%", site + "/" + "long-path-".repeat(60));
    for (String path : paths) {
      // typed as text: the browser percent-encodes it as its address bar does
      String url = page(pageOrigin, path, "<script src=\"" + gateway + "/v1/beacon.js\"></script>");
      assertThat(countAfterLoading(url, PageIds.of(path, 255), 1)).as(path).isEqualTo(1);
    }
    // a fragment is not part of the path: the view counts under the page's path
    String fragmentPage = site + "/with-fragment";
    page(pageOrigin, fragmentPage, "<script src=\"" + gateway + "/v1/beacon.js\"></script>");
    assertThat(countAfterLoading(pageOrigin + fragmentPage + "#frag", fragmentPage, 1)).isEqualTo(1);
    assertThat(await(fixture.sumInTable("pageviews", ReservedIds.INVALID))).as("counted as (invalid)").isZero();
    assertThat(pageErrors()).isEmpty();
  }

  @Test
  @DisplayName("the noscript pixel counts one view when scripts are off")
  void noscriptPixel() {
    String id = unique("noscript");
    String url = page(pageOrigin, "/noscript/" + id, "<noscript><img src=\"" + beaconUrl("pageviews", id)
      + "?format=gif\" width=\"1\" height=\"1\" alt=\"\"></noscript>");
    browser.executeCdpCommand("Emulation.setScriptExecutionDisabled", Map.of("value", true));
    try {
      assertThat(countAfterLoading(url, id, 1)).isEqualTo(1);
    } finally {
      browser.executeCdpCommand("Emulation.setScriptExecutionDisabled", Map.of("value", false));
    }
  }

  /** The calls page snippets make, each with the body type that decides whether the browser preflights it. */
  static final Map<String, String> DIRECT_CALLS = Map.of(
    "beacon-string", "navigator.sendBeacon(URL, 'page=/home')",
    "beacon-json-blob", "navigator.sendBeacon(URL, new Blob([JSON.stringify({page: '/home'})], {type: 'application/json'}))",
    "beacon-form", "navigator.sendBeacon(URL, new URLSearchParams({page: '/home'}))",
    "fetch-keepalive-json", "fetch(URL, {method: 'POST', keepalive: true, credentials: 'include',"
      + " headers: {'Content-Type': 'application/json'}, body: JSON.stringify({page: '/home'})}).catch(() => {})",
    "pixel", "new Image(1, 1).src = URL + '?format=gif'");

  @Test
  @DisplayName("sendBeacon with a string, a JSON Blob and URLSearchParams, fetch keepalive with JSON, and a pixel: each counted once")
  void browserBeaconMatrix() {
    for (Map.Entry<String, String> call : DIRECT_CALLS.entrySet()) {
      String id = unique(call.getKey());
      String url = page(pageOrigin, "/direct/" + id, "<script>const URL = '" + beaconUrl("pageviews", id) + "'; "
        + call.getValue() + ";</script>");
      assertThat(countAfterLoading(url, id, 1)).as(call.getKey()).isEqualTo(1);
      assertThat(countAfterLoading(url, id, 2)).as(call.getKey() + ", second load").isEqualTo(2);
      assertThat(pageErrors()).as(call.getKey()).isEmpty();
    }
  }

  @Test
  @DisplayName("a page of an origin outside http.corsOrigins is refused: none of its beacons is counted")
  void strangerOriginIsRefused() {
    String id = unique("stranger");
    String sentinel = unique("sentinel");
    StringBuilder script = new StringBuilder("<script>const URL = '" + beaconUrl("pageviews", id) + "';");
    DIRECT_CALLS.forEach((name, call) -> {
      if (!name.equals("pixel")) { // an image request carries no Origin: a pixel cannot be refused by origin
        script.append(call).append(";");
      }
    });
    // a pixel after them: once it is counted, the refused beacons sent before it have been answered
    script.append("setTimeout(() => { new Image(1, 1).src = '").append(beaconUrl("pageviews", sentinel))
      .append("?format=gif'; }, 200);</script>");
    browser.get(page(strangerOrigin, "/stranger/" + id, script.toString()));
    assertThat(Eventually.value(() -> await(fixture.sumInTable("pageviews", sentinel)), 1L)).isEqualTo(1L);
    pause(300);
    assertThat(await(fixture.sumInTable("pageviews", id))).isZero();
  }

  @Test
  @DisplayName("on a namespace that drops bots, headless Chromium's view is answered but not counted, and is in the metric")
  void headlessBrowserIsDropped() {
    String id = unique("headless");
    browser.get(page(pageOrigin, "/guarded/" + id, "<script src=\"" + gateway
      + "/v1/beacon.js\" data-namespace=\"guarded\" data-id=\"" + id + "\"></script>"));
    assertThat(Eventually.value(() -> FrontDoorContractTest.dropCount(
      await(fixture.http.get("/metrics").send()).bodyAsString(), "guarded", "headless_browser"), 1.0)).isEqualTo(1.0);
    assertThat(await(fixture.sumInTable("guarded", id))).isZero();
    assertThat(pageErrors()).isEmpty();
  }

  /** Time for a page's beacon to leave the browser: the browser gives no event to await for a sent beacon. */
  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
