package io.countergateway.frontdoor;

import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.HeadlessChromium;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.chrome.ChromeDriver;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The three trackers' unmodified scripts (src/test/resources/trackers/) in real Chromium, with a normal User-Agent and
 * without the automation flag the scripts look for ({@code navigator.webdriver}), on a page served from another
 * origin than the gateway's: each counts the page view and a client-side navigation ({@code history.pushState}) on the
 * database a subclass picks, with no console error. Skipped where Chromium or chromedriver is not installed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class BrowserTrackersTest {
  static final String USER_AGENT = FrontDoorContractTest.CHROME;
  static final String UMAMI_SITE = "5a1c0d8e-94b2-4f55-9f43-0c2b6b1f6a7e";
  static final Map<String, String> SCRIPTS = Map.of("/js/count.js", "goatcounter-count.js",
    "/js/umami.js", "umami-script.js", "/js/plausible-tracker.js", "plausible-tracker-0.4.6.js");

  GatewayFixture fixture;
  Vertx pageVertx;
  HttpServer pages;
  final Map<String, String> html = new ConcurrentHashMap<>();
  HeadlessChromium chromium;
  ChromeDriver browser;
  String gateway;
  String pageOrigin;

  abstract JsonObject database();

  @BeforeEach
  void needsTheBrowser() {
    assumeTrue(HeadlessChromium.installed(), "needs Debian's chromium and chromium-driver (" + HeadlessChromium.CHROMIUM
      + ", " + HeadlessChromium.CHROMEDRIVER + ")");
  }

  @BeforeAll
  void start() {
    if (!HeadlessChromium.installed()) {
      return;
    }
    pageVertx = Vertx.vertx();
    pages = await(pageVertx.createHttpServer().requestHandler(this::serve).listen(0, "127.0.0.1"));
    pageOrigin = "http://127.0.0.1:" + pages.actualPort();
    JsonObject config = GatewayFixture.baseConfig(database(), "browser_trackers_"
      + getClass().getSimpleName().toLowerCase());
    config.getJsonObject("http").put("corsOrigins", new JsonArray().add(pageOrigin));
    // pageviews keeps its default bot filter: the browser is counted as the person it looks like; windowed, as the
    // quick start declares it, so that its site breakdowns (sources, campaigns) are counted too
    config.getJsonObject("namespaces").getJsonObject("pageviews").put("window", new JsonObject().put("bucket", "hour"));
    config.getJsonObject("namespaces").put("blog", new JsonObject().put("slots", 4).put("public", true)
      .put("window", new JsonObject().put("bucket", "hour")));
    config.put("beacon", new JsonObject().put("trackerSites", new JsonArray().add("blog.example=blog")));
    fixture = GatewayFixture.start(config);
    gateway = "http://127.0.0.1:" + fixture.gateway.port();
    chromium = HeadlessChromium.start("--user-agent=" + USER_AGENT, "--disable-blink-features=AutomationControlled");
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

  /** The scripts from the test resources, pages by their decoded path. */
  private void serve(HttpServerRequest request) {
    String script = SCRIPTS.get(request.path());
    if (script != null) {
      request.response().putHeader("Content-Type", "text/javascript; charset=utf-8").end(resource(script));
      return;
    }
    String page = html.get(URLDecoder.decode(request.path(), StandardCharsets.UTF_8));
    if (page == null) {
      request.response().setStatusCode(404).end();
    } else {
      request.response().putHeader("Content-Type", "text/html; charset=utf-8").end(page);
    }
  }

  private static Buffer resource(String name) {
    try (InputStream in = BrowserTrackersTest.class.getResourceAsStream("/trackers/" + name)) {
      return Buffer.buffer(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Serves {@code head} in a page at {@code path} (and at {@code second}, where pushState leads) and returns its URL. */
  String page(String path, String second, String head) {
    String page = "<!doctype html><html><head><meta charset=utf-8><title>A page</title><link rel=icon href=\"data:,\">"
      + head + "</head><body><p>content</p></body></html>";
    html.put(path, page);
    html.put(second, page);
    return pageOrigin + path;
  }

  static String unique(String prefix) {
    return "/" + prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  long sum(String id) {
    return windowedIn("pageviews", id);
  }

  /** Opens a page of another site (another host name for the same server) and follows its link to {@code url}. */
  void arriveByLinkTo(String url) {
    String referring = unique("elsewhere");
    html.put(referring, "<!doctype html><html><head><meta charset=utf-8><title>Elsewhere</title>"
      + "<link rel=icon href=\"data:,\"></head><body><a id=go href=\"" + url + "\">a link</a></body></html>");
    browser.get("http://localhost:" + pages.actualPort() + referring);
    browser.findElement(By.id("go")).click();
  }

  /** Waits until {@code type}'s {@code id} counted at least one view. */
  void counted(String type, String id) {
    Eventually.until(type + " " + id + " counted", () -> windowedIn(type, id) >= 1);
  }

  /** Half a second after the page loaded, a client-side navigation to {@code second}; then {@code afterPush}. */
  void navigate(String second, String afterPush) {
    // the target is read before the timer: inside its callback, arguments are the callback's own
    ((JavascriptExecutor) browser).executeScript("var target = arguments[0]; setTimeout(function () { "
      + "history.pushState({}, '', target); " + afterPush + " }, 500)", second);
  }

  void assertNoConsoleErrors() {
    assertThat(chromium.consoleErrors()).isEmpty();
  }

  @Test
  @DisplayName("GoatCounter's count.js counts the page (its non-ASCII path decoded), reached by a link from another site with a campaign tag, a pushState navigation it is told of, and the source and campaign")
  void goatCounter() {
    String base = unique("gc");
    String url = page(base + "/über", base + "/second", "<script data-goatcounter=\"" + gateway + "/count\" "
      + "data-goatcounter-settings='{\"allow_local\": true}' async src=\"/js/count.js\"></script>");
    // count.js does not follow client-side navigation by itself: a single-page site calls goatcounter.count()
    arriveByLinkTo(url + "?utm_source=news&utm_campaign=spring");
    navigate(base + "/second", "window.goatcounter.count();");
    assertThat(Eventually.value(() -> sum(base + "/über"), 1L)).isEqualTo(1L);
    assertThat(Eventually.value(() -> sum(base + "/second"), 1L)).isEqualTo(1L);
    counted("pageviews~sources", "localhost");
    counted("pageviews~campaigns", "news / (none) / spring");
    assertNoConsoleErrors();
  }

  @Test
  @DisplayName("Umami's script.js counts the page, reached by a link from another site with a campaign tag, the pushState navigation it hooks, and the source and campaign, reading the answer across origins")
  void umami() {
    String base = unique("umami");
    String url = page(base + "/start", base + "/second", "<script defer src=\"/js/umami.js\" data-website-id=\""
      + UMAMI_SITE + "\" data-host-url=\"" + gateway + "\"></script>");
    arriveByLinkTo(url + "?utm_source=letter&utm_medium=email");
    navigate(base + "/second", "");
    assertThat(Eventually.value(() -> sum(base + "/start"), 1L)).isEqualTo(1L);
    assertThat(Eventually.value(() -> sum(base + "/second"), 1L)).isEqualTo(1L);
    counted("pageviews~sources", "localhost");
    counted("pageviews~campaigns", "letter / email / (none)");
    // the script read its answer: a failed fetch or JSON parse would leave no session object behind
    assertThat(((JavascriptExecutor) browser).executeScript("return typeof window.umami.getSession()"))
      .isEqualTo("object");
    assertNoConsoleErrors();
  }

  @Test
  @DisplayName("Plausible's tracker counts the page, reached by a link from another site with a campaign tag, and the pushState navigation in its domain's namespace, with the source and the campaign; engagement is not a view")
  void plausible() {
    String base = unique("plausible");
    String url = page(base + "/start", base + "/second", "<script type=\"module\">import { init } from "
      + "'/js/plausible-tracker.js'; init({ domain: 'blog.example', endpoint: '" + gateway + "/api/event', "
      + "captureOnLocalhost: true })</script>");
    // reached by a link on a page of another site, so the view has a referrer as well as a campaign
    arriveByLinkTo(url + "?utm_source=mastodon");
    navigate(base + "/second", "");
    assertThat(Eventually.value(() -> windowed(base + "/start"), 1L)).isEqualTo(1L);
    assertThat(Eventually.value(() -> windowed(base + "/second"), 1L)).isEqualTo(1L);
    // the site's breakdowns count where each view came from: the linking site (both views: the script sends the
    // document's referrer, which a pushState keeps), and the campaign the first page's address was tagged with
    assertThat(Eventually.value(() -> windowedIn("blog~sources", "localhost"), 2L)).isEqualTo(2L);
    assertThat(Eventually.value(() -> windowedIn("blog~campaigns", "mastodon / (none) / (none)"), 1L)).isEqualTo(1L);
    // leaving the page sends engagement events: answered, never a view
    double answeredBefore = answered("/api/event");
    browser.get("about:blank");
    Eventually.until("an engagement event answered", () -> answered("/api/event") > answeredBefore);
    List<Long> after = List.of(windowed(base + "/start"), windowed(base + "/second"));
    assertThat(after).containsExactly(1L, 1L);
    assertNoConsoleErrors();
  }

  /** Requests the gateway answered on {@code route} (the route's request timers, every status). */
  double answered(String route) {
    return fixture.registry.find("gateway.http.response.time").tag("route", route).timers().stream()
      .mapToDouble(timer -> timer.count()).sum();
  }

  long windowed(String id) {
    return windowedIn("blog", id);
  }

  long windowedIn(String type, String id) {
    return await(fixture.bucketsInTable(type, id)).values().stream().mapToLong(Long::longValue).sum();
  }
}
