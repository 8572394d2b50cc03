package io.countergateway.internal.beacon;

import io.countergateway.config.ConfigException;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.WindowOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("What a page view adds to its namespace's companions")
class VisitDimensionsTest {
  static final String CHROME_WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    + "Chrome/131.0.0.0 Safari/537.36";
  static final String SAFARI_IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    + "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
  static final String FIREFOX_ANDROID_TABLET = "Mozilla/5.0 (Android 14; Tablet; rv:132.0) Gecko/132.0 Firefox/132.0";
  static final String CHROME_ANDROID_TABLET = "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like "
    + "Gecko) Chrome/131.0.0.0 Safari/537.36";
  static final String SAFARI_MAC = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like "
    + "Gecko) Version/17.5 Safari/605.1.15";

  /** 11:25 UTC: minute 29,370,565 since the epoch (hour 489,509). */
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2025-11-04T11:25:30Z"), ZoneOffset.UTC);
  private static final NamespaceOptions PAGEVIEWS = NamespaceOptions.fromJson("pageviews", new JsonObject()
    .put("public", true).put("unique", true).put("window", new JsonObject().put("bucket", "hour")));

  @Test
  @DisplayName("the source is the referrer's host without www., (direct) for none, an empty one or the site's own page")
  void source() {
    assertThat(VisitDimensions.source("https://www.Google.com/search?q=x", "blog.example")).isEqualTo("google.com");
    assertThat(VisitDimensions.source("https://news.ycombinator.com/item?id=1", null)).isEqualTo("news.ycombinator.com");
    assertThat(VisitDimensions.source(null, "blog.example")).isEqualTo(VisitDimensions.DIRECT);
    assertThat(VisitDimensions.source(" ", "blog.example")).isEqualTo(VisitDimensions.DIRECT);
    assertThat(VisitDimensions.source("https://blog.example/older-post", "www.blog.example"))
      .as("another page of the site").isEqualTo(VisitDimensions.DIRECT);
    assertThat(VisitDimensions.source("android-app://com.google.android.gm/", null)).isEqualTo("com.google.android.gm");
    assertThat(VisitDimensions.source("not a url", null)).isEqualTo(ReservedIds.OTHER);
    assertThat(VisitDimensions.source("https://exa mple.com/", null)).isEqualTo(ReservedIds.OTHER);
  }

  @Test
  @DisplayName("a campaign is source / medium / campaign, (none) for a part not given; an untagged view has none")
  void campaign() {
    assertThat(VisitDimensions.campaign(new PageVisit(null, "newsletter", "email", "spring")))
      .isEqualTo("newsletter / email / spring");
    assertThat(VisitDimensions.campaign(new PageVisit(null, "twitter", null, " ")))
      .isEqualTo("twitter / (none) / (none)");
    assertThat(VisitDimensions.campaign(new PageVisit("https://x.example/", null, null, null))).isNull();
    assertThat(VisitDimensions.campaign(PageVisit.NONE)).isNull();
    assertThat(VisitDimensions.campaign(new PageVisit(null, "s".repeat(500), null, null)))
      .hasSize(VisitDimensions.MAX_TAG_CHARS + " / (none) / (none)".length());
  }

  @Test
  @DisplayName("browsers and systems are named as ua-parser names them; devices are desktop, mobile or tablet")
  void agents() {
    VisitDimensions dimensions = new VisitDimensions(255, CLOCK);
    assertThat(dimensions.agent(CHROME_WINDOWS)).isEqualTo(new VisitDimensions.Agent("Chrome", "Windows", "desktop"));
    assertThat(dimensions.agent(SAFARI_IPHONE)).isEqualTo(new VisitDimensions.Agent("Mobile Safari", "iOS", "mobile"));
    assertThat(dimensions.agent(SAFARI_MAC)).isEqualTo(new VisitDimensions.Agent("Safari", "Mac OS X", "desktop"));
    assertThat(dimensions.agent(FIREFOX_ANDROID_TABLET).device()).isEqualTo("tablet");
    assertThat(dimensions.agent(CHROME_ANDROID_TABLET).device()).isEqualTo("tablet");
    assertThat(dimensions.agent("Something 1.0 unheard of")).isEqualTo(new VisitDimensions.Agent("(other)", "(other)", "desktop"));
  }

  @Test
  @DisplayName("a user agent over 300 characters, or none, is (other) and never parsed; at most 2,000 are remembered")
  void agentsBounded() {
    VisitDimensions dimensions = new VisitDimensions(255, CLOCK);
    VisitDimensions.Agent other = new VisitDimensions.Agent("(other)", "(other)", "(other)");
    assertThat(dimensions.agent(CHROME_WINDOWS + " x".repeat(100))).isEqualTo(other);
    assertThat(dimensions.agent(null)).isEqualTo(other);
    assertThat(dimensions.agentsHeld()).isZero();
    for (int i = 0; i < VisitDimensions.MAX_AGENTS + 50; i++) {
      dimensions.agent(CHROME_WINDOWS + " Build/" + i);
    }
    assertThat(dimensions.agentsHeld()).isEqualTo(VisitDimensions.MAX_AGENTS);
  }

  @Test
  @DisplayName("a view adds one to the site total, its source, campaign, browser, system and device in its bucket, and to the site's minute")
  void increments() {
    VisitDimensions dimensions = new VisitDimensions(255, CLOCK);
    Increment view = new Increment(new CounterKey("pageviews", "/blog/a", 42), 1);
    List<Increment> increments = dimensions.increments(PAGEVIEWS, view,
      new PageVisit("https://www.google.com/", "newsletter", "email", "spring"), "blog.example", SAFARI_IPHONE);
    assertThat(increments).containsExactly(
      new Increment(new CounterKey("pageviews~site", "total", 42), 1),
      new Increment(new CounterKey("pageviews~sources", "google.com", 42), 1),
      new Increment(new CounterKey("pageviews~campaigns", "newsletter / email / spring", 42), 1),
      new Increment(new CounterKey("pageviews~browsers", "Mobile Safari", 42), 1),
      new Increment(new CounterKey("pageviews~os", "iOS", 42), 1),
      new Increment(new CounterKey("pageviews~devices", "mobile", 42), 1),
      new Increment(new CounterKey("pageviews~minutes", "total", CLOCK.instant().getEpochSecond() / 60 * 60), 1));
    assertThat(dimensions.increments(PAGEVIEWS, view, PageVisit.NONE, null, CHROME_WINDOWS))
      .as("no campaign row for an untagged view").extracting(increment -> increment.key().id())
      .containsExactly("total", "(direct)", "Chrome", "Windows", "desktop", "total");
  }

  @Test
  @DisplayName("past 1,000 values of one companion in one bucket, new values count as (other); a new bucket starts over")
  void valuesBounded() {
    VisitDimensions dimensions = new VisitDimensions(255, CLOCK);
    for (int i = 0; i < VisitDimensions.MAX_VALUES; i++) {
      assertThat(source(dimensions, "https://site" + i + ".example/", 7)).isEqualTo("site" + i + ".example");
    }
    assertThat(source(dimensions, "https://one-more.example/", 7)).isEqualTo(ReservedIds.OTHER);
    assertThat(source(dimensions, "https://site3.example/", 7)).as("a value already taken").isEqualTo("site3.example");
    assertThat(source(dimensions, "https://one-more.example/", 8)).isEqualTo("one-more.example");
  }

  private static String source(VisitDimensions dimensions, String referrer, long bucket) {
    Increment view = new Increment(new CounterKey("pageviews", "/", bucket), 1);
    return dimensions.increments(PAGEVIEWS, view, new PageVisit(referrer, null, null, null), null, CHROME_WINDOWS)
      .get(1).key().id();
  }

  @Test
  @DisplayName("a windowed namespace has seven companions sharing its window but the minutes, only the site total counting visitors")
  void companions() {
    assertThat(PAGEVIEWS.companions()).extracting(NamespaceOptions::getName).containsExactly("pageviews~site",
      "pageviews~sources", "pageviews~campaigns", "pageviews~browsers", "pageviews~os", "pageviews~devices",
      "pageviews~minutes");
    assertThat(PAGEVIEWS.companions().subList(0, 6)).allSatisfy(companion ->
      assertThat(companion.getWindow()).isSameAs(PAGEVIEWS.getWindow()));
    NamespaceOptions minutes = PAGEVIEWS.companion(NamespaceOptions.MINUTES);
    assertThat(minutes.getWindow().getBucket()).isEqualTo(WindowOptions.Bucket.MINUTE);
    assertThat(minutes.getWindow().getRetention()).hasHours(2);
    assertThat(PAGEVIEWS.companions()).allSatisfy(companion -> {
      assertThat(companion.isPublic()).isFalse();
      assertThat(companion.getParent()).isSameAs(PAGEVIEWS);
    });
    assertThat(PAGEVIEWS.companions()).filteredOn(NamespaceOptions::isUnique).extracting(NamespaceOptions::getName)
      .containsExactly("pageviews~site");
    assertThat(NamespaceOptions.fromJson("likes", new JsonObject()).companions()).isEmpty();
  }

  @Test
  @DisplayName("a windowed namespace's name leaves room for its companions' in a record type of 64, and the start says so")
  void companionNamesFit() {
    JsonObject windowed = new JsonObject().put("window", new JsonObject().put("bucket", "hour"));
    assertThat(NamespaceOptions.fromJson("n".repeat(54), windowed).companion("campaigns").getName()).hasSize(64);
    assertThatThrownBy(() -> NamespaceOptions.fromJson("n".repeat(55), windowed))
      .isInstanceOf(ConfigException.class).hasMessageContaining("namespaces." + "n".repeat(55))
      .hasMessageContaining("at most 54 characters");
    assertThat(NamespaceOptions.fromJson("n".repeat(64), new JsonObject()).getName()).as("a plain one has none").hasSize(64);
  }
}
