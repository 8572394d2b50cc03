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
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.text.NumberFormat;
import java.time.Duration;
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
 * a windowed namespace that counts unique visitors and a plain one: the page loads without a console error, its numbers
 * are the API's answers for the same range, the chart is drawn from the same buckets, and it fits a phone's width. A
 * screenshot is kept as {@code target/dashboard.png}. Skipped where Chromium or chromedriver is not installed.
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
      .put("unique", true).put("window", new JsonObject().put("bucket", "hour").put("retention", "2d")));
    config.put("uniques", new JsonObject().put("flushIntervalMs", 100));
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

  /** 30 page views of /home by 10 browsers, 12 of /about by 4, a large count on "big", and two plain counters. */
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
      assertThat(row.findElement(By.cssSelector(".unique")).getText()).isEqualTo(grouped(entry.getLong("unique")));
    }
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
    assertThat(chromium.browser.findElement(By.id("chart-title")).getText()).contains("10 unique visitors");
    assertThat(chromium.browser.findElement(By.id("health")).getText()).isEqualTo("ready");

    // the whole page, chart included, for the README (src/docs/dashboard.png is a copy of it)
    chromium.browser.manage().window().setSize(new Dimension(1280, 1100));
    Path screenshot = Path.of("target", "dashboard.png");
    Files.createDirectories(screenshot.getParent());
    Files.copy(chromium.browser.getScreenshotAs(OutputType.FILE).toPath(), screenshot, StandardCopyOption.REPLACE_EXISTING);
    chromium.browser.manage().window().setSize(new Dimension(1280, 900));
    assertThat(chromium.consoleErrors()).as("console errors").isEmpty();
  }

  @Test
  @DisplayName("a plain namespace looks up several ids, with their values as the API gives them")
  void plainNamespace() {
    open("likes");
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
  @DisplayName("on a phone's width nothing is wider than the screen")
  void phoneWidth() {
    chromium.browser.manage().window().setSize(new Dimension(390, 844));
    try {
      open("views");
      waiting().until(driver -> !driver.findElements(By.cssSelector("#chart canvas")).isEmpty());
      Object widths = ((JavascriptExecutor) chromium.browser).executeScript(
        "return [document.documentElement.scrollWidth, window.innerWidth];");
      List<?> measured = (List<?>) widths;
      assertThat(((Number) measured.get(0)).longValue()).isLessThanOrEqualTo(((Number) measured.get(1)).longValue());
    } finally {
      chromium.browser.manage().window().setSize(new Dimension(1280, 900));
    }
  }
}
