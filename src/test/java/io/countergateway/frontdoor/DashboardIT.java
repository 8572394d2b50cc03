package io.countergateway.frontdoor;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.HeadlessChromium;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.text.NumberFormat;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The dashboard at {@code /ui/} in Debian's headless Chromium, against a gateway on the embedded PostgreSQL seeded with
 * an hourly namespace that counts unique visitors, a daily one and plain ones: the page loads without a console error,
 * opens the first windowed namespace, its numbers are the API's answers for the same range, the chart is drawn from
 * the same buckets, every view has an address, the top list refreshes itself, and it fits a phone's width. Screenshots
 * are kept as {@code target/dashboard.png} (desktop) and {@code target/dashboard-phone.png}. Skipped where Chromium or
 * chromedriver is not installed.
 */
@DisplayName("The counters dashboard in headless Chromium")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DashboardIT {
  private static final NumberFormat GROUPED = NumberFormat.getIntegerInstance(Locale.US);

  private GatewayFixture fixture;
  private HeadlessChromium chromium;
  private String base;

  @BeforeEach
  void needsTheBrowser() {
    assumeTrue(HeadlessChromium.installed(), "needs Debian's chromium and chromium-driver");
  }

  @BeforeAll
  void start() {
    if (!HeadlessChromium.installed()) {
      return;
    }
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "dashboard_counters");
    config.getJsonObject("namespaces").put("views", new JsonObject().put("slots", 4).put("public", true)
      .put("unique", true).put("window", new JsonObject().put("bucket", "hour").put("retention", "2d")))
      .put("daily", new JsonObject().put("slots", 4).put("window", new JsonObject().put("bucket", "day")
        .put("retention", "30d")))
      .put("site", new JsonObject().put("slots", 4).put("public", true))
      // a site fed by one test client: the per-client limits are off (BeaconAbuseIT holds them)
      .put("shop", new JsonObject().put("slots", 4).put("public", true).put("unique", true)
        .put("beacon", new JsonObject().put("perClientPerMinute", 0).put("idsPerClientPerHour", 0)
          .put("perPagePerMinute", 0))
        .put("window", new JsonObject().put("bucket", "hour").put("retention", "7d")));
    config.put("uniques", new JsonObject().put("flushInterval", "100ms"));
    fixture = GatewayFixture.start(config);
    base = "http://127.0.0.1:" + fixture.gateway.port();
    seed();
    chromium = HeadlessChromium.start();
  }

  @AfterAll
  void stop() {
    if (chromium != null) {
      chromium.close();
    }
    if (fixture != null) {
      fixture.close();
    }
  }

  /**
   * 30 page views of /home by 10 browsers, 12 of /about by 4, a large count on "big", two plain counters, and a
   * daily counter "spread" counted today (1), a day ago (2) and three days ago (4).
   */
  private void seed() {
    List<Future<?>> sent = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      sent.add(beacon("home", i % 10));
    }
    for (int i = 0; i < 12; i++) {
      sent.add(beacon("about", i % 4));
    }
    await(Future.all(sent));
    for (String[] increment : new String[][] {{"views", "big", "250000"}, {"likes", "a", "123456"}, {"likes", "b", "7"}}) {
      HttpResponse<Buffer> answer = await(fixture.http.post("/v1/counters/" + increment[0] + "/" + increment[1]
        + "/increments").sendJsonObject(new JsonObject().put("delta", Long.parseLong(increment[2]))));
      assertThat(answer.statusCode()).isEqualTo(200);
    }
    Instant now = Instant.now();
    for (int[] daysAgoAndDelta : new int[][] {{0, 1}, {1, 2}, {3, 4}}) {
      HttpResponse<Buffer> answer = await(fixture.http.post("/v1/counters/daily/spread/increments")
        .sendJsonObject(new JsonObject().put("delta", daysAgoAndDelta[1])
          .put("at", now.minus(Duration.ofDays(daysAgoAndDelta[0])).toString())));
      assertThat(answer.statusCode()).as(answer.bodyAsString()).isEqualTo(200);
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      JsonArray top = api("/v1/counters/views?top=10&unique=true").getJsonArray("top");
      Map<String, Integer> uniques = new TreeMap<>();
      top.forEach(entry -> uniques.put(((JsonObject) entry).getString("id"), ((JsonObject) entry).getInteger("unique", 0)));
      if (top.size() == 3 && uniques.get("home") == 10 && uniques.get("about") == 4) {
        return;
      }
      await(Future.<Void>future(done -> fixture.vertx.setTimer(100, t -> done.complete())));
    }
    throw new AssertionError("the seeded beacons and their visitors did not show: " + api("/v1/counters/views?top=10&unique=true"));
  }

  /** Browsers of the shop's visitors, each visitor one version of them: desktop, phone, tablet and another desktop. */
  private static final String[] SHOP_BROWSERS = {
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.%d Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 "
      + "Mobile/15E%d Safari/604.1",
    "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.%d Safari/537.36",
    "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.%d"};

  /**
   * 2,000 views of the shop over 50 pages from 200 visitors: every 12 views, 10 from ten referrers and 2 direct; every
   * 7 views, 3 from three campaigns.
   */
  private void seedShop() {
    List<Future<?>> sent = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      StringBuilder query = new StringBuilder();
      if (i % 12 < 10) {
        query.append("&r=https%3A%2F%2Fref").append(i % 12).append(".example");
      }
      if (i % 7 < 3) {
        query.append("&utm_source=news").append(i % 7).append("&utm_medium=email&utm_campaign=launch");
      }
      int visitor = i % 200;
      String userAgent = String.format(SHOP_BROWSERS[visitor % 4], visitor);
      sent.add(fixture.http.get("/v1/beacon/shop/%2Fp" + (i % 50 + 1) + (query.length() == 0 ? "" : "?" + query.substring(1)))
        .putHeader("User-Agent", userAgent).send().map(answer -> {
          assertThat(answer.statusCode()).isEqualTo(204);
          assertThat(answer.getHeader("X-Counter-Dropped")).isNull();
          return answer;
        }));
      if (sent.size() == 100) {
        await(Future.all(sent));
        sent.clear();
      }
    }
    await(Future.all(sent));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      JsonObject site = api("/v1/counters/shop~site/total?unique=true");
      if (site.getLong("total") == 2_000 && site.getLong("unique") >= 190) {
        return;
      }
      await(Future.<Void>future(done -> fixture.vertx.setTimer(100, t -> done.complete())));
    }
    throw new AssertionError("the shop's views did not show: " + api("/v1/counters/shop~site/total?unique=true"));
  }

  private Future<?> beacon(String id, int browser) {
    return fixture.http.get("/v1/beacon/views/" + id)
      .putHeader("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0."
        + browser + " Safari/537.36")
      .send().map(answer -> {
        assertThat(answer.statusCode()).isEqualTo(204);
        return answer;
      });
  }

  private JsonObject api(String path) {
    HttpResponse<Buffer> answer = await(fixture.http.get(path).send());
    assertThat(answer.statusCode()).as(path).isEqualTo(200);
    return answer.bodyAsJsonObject();
  }

  private WebDriverWait waiting() {
    return new WebDriverWait(chromium.browser, Duration.ofSeconds(15));
  }

  /** The page at {@code address} (relative to the gateway), once it shows {@code rows} rows of a top list (-1: any). */
  private WebElement openTop(String address, int rows) {
    chromium.browser.get(base + address);
    WebElement top = chromium.browser.findElement(By.id("top"));
    waiting().until(driver -> "true".equals(top.getDomAttribute("data-loaded"))
      && (rows < 0 || top.findElements(By.cssSelector("tbody tr")).size() == rows));
    return top;
  }

  private Object script(String script) {
    return ((JavascriptExecutor) chromium.browser).executeScript(script);
  }

  private void waitForAddress(String address) {
    waiting().until(driver -> driver.getCurrentUrl().equals(base + address));
  }

  private void open(String namespace) {
    chromium.browser.get(base + "/ui/");
    WebElement row = waiting().until(driver -> driver.findElements(By.cssSelector("#namespaces tr[data-namespace='"
      + namespace + "']")).stream().findFirst().orElse(null));
    row.click();
  }

  private static String grouped(long value) {
    return GROUPED.format(value);
  }

  @Test
  @DisplayName("the top counters, their totals and unique visitors are the API's for the same range, and the chart is drawn from its buckets")
  void windowedNamespace() throws IOException {
    open("views");
    WebElement top = chromium.browser.findElement(By.id("top"));
    waiting().until(driver -> "true".equals(top.getDomAttribute("data-loaded"))
      && top.findElements(By.cssSelector("tbody tr")).size() == 3);
    String from = top.getDomAttribute("data-from");
    String to = top.getDomAttribute("data-to");
    JsonArray expected = api("/v1/counters/views?top=20&unique=true&from=" + from + "&to=" + to).getJsonArray("top");

    List<WebElement> rows = top.findElements(By.cssSelector("tbody tr"));
    assertThat(rows).hasSize(expected.size());
    for (int i = 0; i < rows.size(); i++) {
      JsonObject entry = expected.getJsonObject(i);
      WebElement row = rows.get(i);
      assertThat(row.getDomAttribute("data-id")).isEqualTo(entry.getString("id"));
      assertThat(row.findElement(By.cssSelector(".total")).getText()).isEqualTo(grouped(entry.getLong("total")));
      // views without a visitor (counted through the API, not by beacons) are marked, and the note says why
      boolean withoutVisitor = entry.getLong("total") > 0 && entry.getLong("unique") == 0;
      assertThat(row.findElement(By.cssSelector(".unique")).getText())
        .isEqualTo(withoutVisitor ? "0 *" : grouped(entry.getLong("unique")));
    }
    assertThat(chromium.browser.findElement(By.id("unique-note")).getText()).contains("beacons only");
    assertThat(rows.get(0).findElement(By.cssSelector(".total")).getText()).as("thousands separators").isEqualTo("250,000");

    rows.stream().filter(row -> "home".equals(row.getDomAttribute("data-id"))).findFirst().orElseThrow().click();
    waiting().until(driver -> driver.findElement(By.id("chart-title")).getText().startsWith("home:"));
    WebElement canvas = waiting().until(driver -> driver.findElements(By.cssSelector("#chart canvas")).stream()
      .findFirst().orElse(null));
    assertThat(canvas.getSize().getWidth()).as("chart width").isGreaterThan(100);
    JsonObject buckets = api("/v1/counters/views/home?unique=true&from=" + from + "&to=" + to);
    long bucketSum = buckets.getJsonArray("buckets").stream().mapToLong(b -> ((JsonObject) b).getLong("value")).sum();
    long bucketUniques = buckets.getJsonArray("buckets").stream().mapToLong(b -> ((JsonObject) b).getLong("unique")).sum();
    Object drawn = ((JavascriptExecutor) chromium.browser).executeScript(
      "const d = window.dashboard.chart.data; return [d[1].reduce((a, b) => a + b, 0), d[2].reduce((a, b) => a + b, 0)];");
    assertThat((List<?>) drawn).extracting(value -> ((Number) value).longValue()).containsExactly(bucketSum, bucketUniques);
    assertThat(bucketSum).isEqualTo(buckets.getLong("total")).isEqualTo(30);
    assertThat(chromium.browser.findElement(By.id("chart-title")).getText()).contains("10 visitors");
    assertThat(chromium.browser.findElement(By.id("health")).getText()).isEqualTo("ready");

    // the whole page, chart included, for the eye
    chromium.browser.manage().window().setSize(new Dimension(1280, 1100));
    screenshot("dashboard-views.png");
    chromium.browser.manage().window().setSize(new Dimension(1280, 900));
    assertThat(chromium.consoleErrors()).as("console errors").isEmpty();
  }

  /** A breakdown table as shown: id → views. */
  private Map<String, String> shownTable(String table) {
    Map<String, String> shown = new java.util.LinkedHashMap<>();
    chromium.browser.findElements(By.cssSelector("#" + table + " tbody tr[data-id]")).forEach(row ->
      shown.put(row.getDomAttribute("data-id"), row.findElement(By.cssSelector(".total")).getText()));
    return shown;
  }

  /** The API's top list of {@code namespace} over the range the page shows: id → views, grouped as shown. */
  private Map<String, String> apiTop(String namespace, String from, String to, int top) {
    Map<String, String> expected = new java.util.LinkedHashMap<>();
    api("/v1/counters/" + namespace + "?top=" + top + "&from=" + from + "&to=" + to).getJsonArray("top").stream()
      .map(JsonObject.class::cast).forEach(entry -> expected.put(entry.getString("id"), grouped(entry.getLong("total"))));
    return expected;
  }

  @Test
  @DisplayName("a site of 2,000 views over 50 pages shows its headline, chart, pages (the 21st a click away), sources, campaigns, browsers and devices as the API counts them, at desk and phone width")
  void siteView() throws IOException {
    seedShop();
    for (Dimension size : List.of(new Dimension(1366, 900), new Dimension(390, 844))) {
      chromium.browser.manage().window().setSize(size);
      try {
        WebElement top = openTop("/ui/?ns=shop&range=24h", 20);
        String from = top.getDomAttribute("data-from");
        String to = top.getDomAttribute("data-to");
        JsonObject site = api("/v1/counters/shop~site/total?unique=true&from=" + from + "&to=" + to);
        assertThat(site.getLong("total")).isEqualTo(2_000);
        waiting().until(driver -> driver.findElement(By.id("views")).getText().equals("2,000")
          && driver.findElement(By.id("visitors")).getText().equals(grouped(site.getLong("unique"))));
        assertThat(chromium.browser.findElement(By.id("per-visitor")).getText())
          .isEqualTo(String.format(Locale.US, "%.1f", 2_000.0 / site.getLong("unique")));
        assertThat(chromium.browser.findElement(By.id("views-change")).getText()).as("nothing the day before").isEqualTo("new");
        assertThat((Number) script("return window.dashboard.siteChart.data[1].reduce((a, b) => a + b, 0);"))
          .extracting(Number::longValue).isEqualTo(2_000L);
        assertThat(chromium.browser.findElement(By.id("range-label")).getText()).contains("your time zone").contains("refreshed");

        // pages: 20 a page, the 21st on the second, a search narrowing them
        JsonArray pages = api("/v1/counters/shop?top=1000&from=" + from + "&to=" + to).getJsonArray("top");
        assertThat(pages).hasSize(50);
        assertThat(chromium.browser.findElement(By.id("page-label")).getText()).isEqualTo("1–20 of 50");
        chromium.browser.findElement(By.id("page-next")).click();
        waitForAddress("/ui/?ns=shop&range=24h&page=2");
        String twentyFirst = pages.getJsonObject(20).getString("id");
        waiting().until(driver -> twentyFirst.equals(driver.findElements(By.cssSelector("#top tbody tr")).get(0)
          .getDomAttribute("data-id")));
        chromium.browser.findElement(By.id("page-search")).sendKeys("/p1");
        waiting().until(driver -> driver.findElement(By.id("page-label")).getText().equals("1–11 of 11"));
        assertThat(chromium.browser.getCurrentUrl()).endsWith("/ui/?ns=shop&range=24h&q=%2Fp1");

        // the breakdowns are the API's top lists for the same range
        waiting().until(driver -> shownTable("sources").size() == 11);
        assertThat(shownTable("sources")).isEqualTo(apiTop("shop~sources", from, to, 50));
        assertThat(shownTable("sources")).containsEntry("(direct)", "332").containsKeys("ref0.example", "ref9.example");
        assertThat(shownTable("campaigns")).isEqualTo(apiTop("shop~campaigns", from, to, 50)).hasSize(3);
        assertThat(shownTable("browsers")).isEqualTo(apiTop("shop~browsers", from, to, 50))
          .containsOnlyKeys("Chrome", "Mobile Safari", "Firefox");
        assertThat(shownTable("os")).isEqualTo(apiTop("shop~os", from, to, 50));
        assertThat(shownTable("devices")).isEqualTo(apiTop("shop~devices", from, to, 50))
          .containsExactly(Map.entry("desktop", "1,000"), Map.entry("mobile", "500"), Map.entry("tablet", "500"));

        // any table as CSV: what it holds, every matching page for the pages
        script("window.dashboard.exportCsv('top');");
        String csv = (String) script("return window.dashboard.lastCsv;");
        assertThat(csv.split("\n")).hasSize(12).startsWith("page,views,visitors");
        script("window.dashboard.exportCsv('campaigns');");
        assertThat(((String) script("return window.dashboard.lastCsv;")).split("\n")).hasSize(4)
          .contains("source / medium / campaign,views");

        List<?> measured = (List<?>) script("return [document.documentElement.scrollWidth, window.innerWidth];");
        assertThat(((Number) measured.get(0)).longValue()).as("nothing wider than the screen at " + size)
          .isLessThanOrEqualTo(((Number) measured.get(1)).longValue());
        // the whole page, for the docs (docs/dashboard.png and docs/dashboard-phone.png are copies)
        chromium.browser.get(base + "/ui/?ns=shop&range=24h");
        waiting().until(driver -> driver.findElement(By.id("views")).getText().equals("2,000")
          && shownTable("devices").size() == 3);
        chromium.browser.manage().window().setSize(new Dimension(size.getWidth(), size.getWidth() > 1000 ? 1900 : 3600));
        waiting().until(driver -> ((Number) script("return window.dashboard.siteChart.width;")).intValue() < size.getWidth());
        screenshot(size.getWidth() > 1000 ? "dashboard.png" : "dashboard-phone.png");
        assertThat(chromium.consoleErrors()).as("console errors").isEmpty();
      } finally {
        chromium.browser.manage().window().setSize(new Dimension(1280, 900));
      }
    }
  }

  @Test
  @DisplayName("times are shown in the viewer's time zone")
  void viewersTimeZone() {
    openTop("/ui/?ns=views&range=24h", -1);
    // the zone of this page's renderer, as a viewer in New York would have it; kept across a reload of the same page
    chromium.browser.executeCdpCommand("Emulation.setTimezoneOverride", Map.of("timezoneId", "America/New_York"));
    try {
      chromium.browser.navigate().refresh();
      WebElement top = chromium.browser.findElement(By.id("top"));
      waiting().until(driver -> "true".equals(top.getDomAttribute("data-loaded")));
      assertThat(script("return Intl.DateTimeFormat().resolvedOptions().timeZone;")).isEqualTo("America/New_York");
      java.time.format.DateTimeFormatter minutes = java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm");
      String from = Instant.parse(top.getDomAttribute("data-from")).atZone(java.time.ZoneId.of("America/New_York"))
        .format(minutes);
      waiting().until(driver -> driver.findElement(By.id("range-label")).getText()
        .startsWith(from + " to ") && driver.findElement(By.id("range-label")).getText()
        .contains("(your time zone, America/New_York)"));
    } finally {
      chromium.browser.executeCdpCommand("Emulation.setTimezoneOverride", Map.of("timezoneId", "UTC"));
    }
  }

  @Test
  @DisplayName("the last hour is drawn per minute from the site's minutes")
  void lastHourPerMinute() {
    JsonObject minutesBefore = api("/v1/counters/views~minutes/total");
    openTop("/ui/?ns=views&range=1h", -1);
    waiting().until(driver -> !driver.findElement(By.id("views")).getText().equals("–"));
    List<?> times = (List<?>) script("return Array.from(window.dashboard.siteChart.data[0]);");
    assertThat(times).hasSizeBetween(60, 61);
    assertThat(((Number) times.get(1)).longValue() - ((Number) times.get(0)).longValue()).as("a bar a minute").isEqualTo(60);
    assertThat(minutesBefore.getString("bucket")).isEqualTo("minute");
    assertThat(chromium.consoleErrors()).as("console errors").isEmpty();
  }

  @Test
  @DisplayName("a plain namespace shows its top counters and looks up several ids, with their values as the API gives them")
  void plainNamespace() {
    open("likes");
    // the top list read again every 5 s: it settles on what ?top=20 answers (another test may add to "likes")
    waiting().until(driver -> {
      List<String> api = api("/v1/counters/likes?top=20").getJsonArray("top").stream()
        .map(entry -> ((JsonObject) entry).getString("id") + " " + String.format(Locale.ROOT, "%,d", ((JsonObject) entry).getLong("total")))
        .toList();
      List<String> listed = driver.findElements(By.cssSelector("#plain-top tbody tr")).stream()
        .map(row -> row.getAttribute("data-id") + " " + row.findElement(By.cssSelector(".value")).getText()).toList();
      return !listed.isEmpty() && listed.equals(api);
    });
    assertThat(chromium.browser.findElements(By.cssSelector("#plain-top tbody tr")).get(0).getText())
      .as("the largest first").contains("a").contains("123,456");
    WebElement ids = waiting().until(driver -> driver.findElement(By.id("ids")).isDisplayed()
      ? driver.findElement(By.id("ids")) : null);
    ids.sendKeys("a, b, never-written");
    chromium.browser.findElement(By.cssSelector("#lookup button")).click();
    waiting().until(driver -> driver.findElements(By.cssSelector("#values tbody tr")).size() == 3);

    List<String> shown = chromium.browser.findElements(By.cssSelector("#values tbody tr .value")).stream()
      .map(WebElement::getText).toList();
    assertThat(shown).containsExactly("123,456", "7", "0");
    assertThat(chromium.consoleErrors()).as("console errors").isEmpty();
  }

  @Test
  @DisplayName("the live rate of a namespace shows increments taken between two polls")
  void liveRate() {
    open("likes");
    for (int i = 0; i < 40; i++) {
      await(fixture.http.post("/v1/counters/likes/rated/increments?ack=accepted").send());
    }
    waiting().until(driver -> {
      String text = driver.findElement(By.cssSelector("#namespaces tr[data-namespace='likes'] .rate")).getText();
      return !text.equals("–") && !text.equals("0");
    });
  }

  @Test
  @DisplayName("with auth on, the page asks for a token, then shows what the token may read")
  void asksForAToken() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "dashboard_auth_counters");
    config.put("auth", new JsonObject().put("tokens", new JsonArray().add("dashboard-reader-token-01:read")));
    try (GatewayFixture guarded = GatewayFixture.start(config)) {
      chromium.browser.get("http://127.0.0.1:" + guarded.gateway.port() + "/ui/");
      WebElement prompt = waiting().until(driver -> driver.findElement(By.id("token-dialog")).isDisplayed()
        ? driver.findElement(By.id("token-dialog")) : null);
      assertThat(chromium.browser.findElements(By.cssSelector("#namespaces tbody tr"))).as("nothing shown before").isEmpty();

      chromium.browser.findElement(By.id("token-input")).sendKeys("dashboard-reader-token-01");
      prompt.findElement(By.cssSelector("button")).click();
      waiting().until(driver -> driver.findElements(By.cssSelector("#namespaces tbody tr")).size() == 3);
      assertThat(prompt.isDisplayed()).isFalse();
      // the token lives in the tab only: nothing of it in the browser's storage
      Object stored = ((JavascriptExecutor) chromium.browser).executeScript(
        "return localStorage.length + sessionStorage.length + document.cookie.length;");
      assertThat(((Number) stored).longValue()).isZero();
    }
  }

  @Test
  @DisplayName("on a phone's width nothing is wider than the screen, and no name or id breaks letter by letter")
  void phoneWidth() throws IOException {
    chromium.browser.manage().window().setSize(new Dimension(390, 844));
    try {
      openTop("/ui/?ns=views&range=24h", 3);
      waiting().until(driver -> !driver.findElements(By.cssSelector("#chart canvas")).isEmpty());
      List<?> measured = (List<?>) script("return [document.documentElement.scrollWidth, window.innerWidth];");
      assertThat(((Number) measured.get(0)).longValue()).isLessThanOrEqualTo(((Number) measured.get(1)).longValue());
      // the lines each name and id takes: the rectangles of its text, one per line
      @SuppressWarnings("unchecked")
      Map<String, Object> lines = (Map<String, Object>) script("""
        const lines = {};
        document.querySelectorAll('#namespaces td.name a, #top td.id').forEach(element => {
          const text = document.createRange();
          text.selectNodeContents(element.firstChild);
          lines[element.textContent] = text.getClientRects().length;
        });
        return lines;""");
      assertThat(lines).containsKeys("pageviews", "downloads", "likes", "views", "daily", "home", "about", "big");
      assertThat(lines.values()).as("lines per name: " + lines).allSatisfy(n -> assertThat(((Number) n).intValue()).isOne());
      // the whole page, for the eye
      chromium.browser.manage().window().setSize(new Dimension(390, 1500));
      waiting().until(driver -> ((Number) script("return window.dashboard.chart.width;")).intValue() < 390);
      screenshot("dashboard-phone.png");
    } finally {
      chromium.browser.manage().window().setSize(new Dimension(1280, 900));
    }
  }

  @Test
  @DisplayName("the landing page opens the first windowed namespace's top list, and its address names that view")
  void landingPage() {
    WebElement top = openTop("/ui/", 3);
    waitForAddress("/ui/?ns=views&range=24h");
    assertThat(top.findElements(By.cssSelector("tbody tr")).stream().map(row -> row.getDomAttribute("data-id")))
      .containsExactly("big", "home", "about");
    waiting().until(driver -> driver.findElement(By.id("chart-title")).getText().startsWith("big:"));
    assertThat(chromium.browser.findElement(By.id("detail-title")).getText()).startsWith("views (site · per hour, kept 2 days");
  }

  @Test
  @DisplayName("GET / leads to the dashboard")
  void rootLeadsToTheDashboard() {
    HttpResponse<Buffer> answer = await(fixture.http.get("/").followRedirects(false).send());
    assertThat(answer.statusCode()).isEqualTo(302);
    assertThat(answer.getHeader("Location")).isEqualTo("/ui/");
    chromium.browser.get(base + "/");
    waitForAddress("/ui/?ns=views&range=24h");
  }

  @Test
  @DisplayName("every view has an address: opened directly it shows that view, each step changes it, and Back goes back")
  void viewsHaveAddresses() {
    openTop("/ui/?ns=views&range=7d&id=about", 3);
    waiting().until(driver -> driver.findElement(By.id("chart-title")).getText().startsWith("about:"));
    assertThat(new Select(chromium.browser.findElement(By.id("range"))).getFirstSelectedOption().getText())
      .isEqualTo("last 7 days");

    chromium.browser.findElement(By.cssSelector("#top tr[data-id='home']")).click();
    waitForAddress("/ui/?ns=views&range=7d&id=home");
    waiting().until(driver -> driver.findElement(By.id("chart-title")).getText().startsWith("home:"));
    new Select(chromium.browser.findElement(By.id("range"))).selectByValue("1h");
    waitForAddress("/ui/?ns=views&range=1h&id=home");

    chromium.browser.navigate().back();
    waitForAddress("/ui/?ns=views&range=7d&id=home");
    waiting().until(driver -> new Select(driver.findElement(By.id("range"))).getFirstSelectedOption().getText()
      .equals("last 7 days"));
    chromium.browser.navigate().back();
    waitForAddress("/ui/?ns=views&range=7d&id=about");
    waiting().until(driver -> driver.findElement(By.id("chart-title")).getText().startsWith("about:"));

    // a custom range: the list is the API's for exactly that range
    Instant from = Instant.now().truncatedTo(ChronoUnit.HOURS).minus(Duration.ofHours(3));
    Instant to = from.plus(Duration.ofHours(5));
    WebElement top = openTop("/ui/?ns=views&range=custom&from=" + from + "&to=" + to, 3);
    assertThat(top.getDomAttribute("data-from")).isEqualTo(from.toString());
    assertThat(top.getDomAttribute("data-to")).isEqualTo(to.toString());
    assertThat(chromium.browser.findElement(By.id("custom")).isDisplayed()).isTrue();

    // a plain namespace's look-up, and a click on another namespace
    chromium.browser.get(base + "/ui/?ns=likes&id=a&id=b");
    waiting().until(driver -> driver.findElements(By.cssSelector("#values tbody tr .value")).size() == 2);
    assertThat(chromium.browser.findElements(By.cssSelector("#values tbody tr .value")).stream().map(WebElement::getText))
      .containsExactly("123,456", "7");
    assertThat(chromium.browser.findElement(By.id("ids")).getDomProperty("value")).isEqualTo("a, b");
    chromium.browser.findElement(By.cssSelector("#namespaces tr[data-namespace='daily'] td.name a")).click();
    waitForAddress("/ui/?ns=daily&range=24h");
    assertThat(chromium.consoleErrors()).as("console errors").isEmpty();
  }

  @Test
  @DisplayName("the top list refreshes itself: a counter counted after the page loaded shows up without a click")
  void topListRefreshes() {
    WebElement top = openTop("/ui/?ns=daily&range=7d", -1);
    assertThat(top.findElements(By.cssSelector("tr[data-id='fresh']"))).isEmpty();
    HttpResponse<Buffer> answer = await(fixture.http.post("/v1/counters/daily/fresh/increments")
      .sendJsonObject(new JsonObject().put("delta", 5)));
    assertThat(answer.statusCode()).isEqualTo(200);
    WebElement fresh = waiting().until(driver -> driver.findElements(By.cssSelector("#top tr[data-id='fresh'] .total"))
      .stream().findFirst().orElse(null));
    assertThat(fresh.getText()).isEqualTo("5");
  }

  @Test
  @DisplayName("'since start' is the sum of the deltas taken, not the number of requests")
  void sinceStartCountsValues() {
    for (int delta : new int[] {5, 4}) {
      assertThat(await(fixture.http.post("/v1/counters/downloads/since-start/increments")
        .sendJsonObject(new JsonObject().put("delta", delta))).statusCode()).isEqualTo(200);
    }
    JsonObject downloads = api("/v1/namespaces").getJsonArray("namespaces").stream().map(JsonObject.class::cast)
      .filter(namespace -> namespace.getString("name").equals("downloads")).findFirst().orElseThrow();
    assertThat(downloads.getLong("increments")).isEqualTo(2);
    assertThat(downloads.getLong("values")).isEqualTo(9);

    chromium.browser.get(base + "/ui/?ns=downloads&id=since-start");
    waiting().until(driver -> driver.findElement(By.cssSelector("#namespaces tr[data-namespace='downloads'] .values"))
      .getText().equals("9"));
    assertThat(chromium.browser.findElement(By.cssSelector("#namespaces thead")).getText())
      .contains("since start").doesNotContain("increments");
    waiting().until(driver -> driver.findElements(By.cssSelector("#values tbody tr .value")).stream()
      .map(WebElement::getText).toList().equals(List.of("9")));
  }

  @Test
  @DisplayName("day buckets are drawn one bar and one label per day, each date once")
  void dayBuckets() throws IOException {
    WebElement top = openTop("/ui/?ns=daily&range=7d&id=spread", -1);
    waiting().until(driver -> driver.findElement(By.id("chart-title")).getText().startsWith("spread: 7 over the range"));
    LocalDate first = LocalDate.ofInstant(Instant.parse(top.getDomAttribute("data-from")), ZoneOffset.UTC);
    LocalDate last = LocalDate.ofInstant(Instant.parse(top.getDomAttribute("data-to")), ZoneOffset.UTC);
    List<String> days = first.datesUntil(last.plusDays(1)).map(LocalDate::toString).toList();
    assertThat(days).hasSize(8);
    assertThat((List<?>) script("return window.dashboard.state.xLabels;")).as("the time axis' labels").isEqualTo(days);
    List<?> data = (List<?>) script("return window.dashboard.chart.data.map(series => Array.from(series));");
    assertThat((List<?>) data.get(0)).as("one bar per day").hasSize(8);
    assertThat((List<?>) data.get(1)).extracting(value -> ((Number) value).longValue())
      .containsExactly(0L, 0L, 0L, 0L, 4L, 0L, 2L, 1L);
    chromium.browser.manage().window().setSize(new Dimension(1280, 1100));
    screenshot("dashboard-days.png");
    chromium.browser.manage().window().setSize(new Dimension(1280, 900));
  }

  @Test
  @DisplayName("a public namespace shows its views counted and not counted by reason, as the API answers, and names a proxy that is not trusted")
  void whatBecameOfTheViews() {
    String browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
    List<Future<?>> sent = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      // a reverse proxy the configuration does not name: every visitor behind it is one client
      sent.add(fixture.http.get("/v1/beacon/site/%2Fbehind-proxy").putHeader("User-Agent", browser)
        .putHeader("X-Forwarded-For", "203.0.113." + (i + 1)).send());
    }
    for (int i = 0; i < 5; i++) {
      sent.add(fixture.http.get("/v1/beacon/site/%2Fcrawled").putHeader("User-Agent",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)").send());
    }
    await(Future.all(sent));
    JsonObject beacons = api("/v1/namespaces").getJsonArray("namespaces").stream().map(JsonObject.class::cast)
      .filter(namespace -> namespace.getString("name").equals("site")).findFirst().orElseThrow().getJsonObject("beacons");
    assertThat(beacons.getLong("counted")).isEqualTo(24);
    assertThat(beacons.getJsonObject("dropped").getLong("crawler")).isEqualTo(5);

    open("site");
    WebElement block = waiting().until(driver -> driver.findElement(By.id("beacons")).isDisplayed()
      ? driver.findElement(By.id("beacons")) : null);
    waiting().until(driver -> driver.findElement(By.id("beacons-counted")).getText().startsWith("24 views counted"));
    assertThat(block.findElement(By.cssSelector("#beacons-reasons li[data-reason='crawler']")).getText())
      .startsWith("5 crawlers");
    assertThat(block.findElement(By.id("beacons-hints")).getText())
      .contains("127.0.0.1").contains("20 or more visitors").contains("http.trustedProxies");
    assertThat(chromium.consoleErrors()).as("console errors").isEmpty();
  }

  private void screenshot(String name) throws IOException {
    Path screenshot = Path.of("target", name);
    Files.createDirectories(screenshot.getParent());
    Files.copy(chromium.browser.getScreenshotAs(OutputType.FILE).toPath(), screenshot, StandardCopyOption.REPLACE_EXISTING);
  }
}
