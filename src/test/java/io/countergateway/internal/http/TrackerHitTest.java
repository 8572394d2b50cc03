package io.countergateway.internal.http;

import io.countergateway.internal.beacon.PageVisit;
import io.countergateway.internal.model.ApiError;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("A tracker script's request, read as a page view")
class TrackerHitTest {
  private static final String UMAMI_SITE = "5a1c0d8e-94b2-4f55-9f43-0c2b6b1f6a7e";

  @Test
  @DisplayName("GoatCounter's count.js query gives the Host as site, the path still encoded, the referrer and the campaign of q")
  void goatCounter() {
    TrackerHit hit = TrackerHit.goatCounter("p=%2Fdocs%2F%25C3%25BCber%3Futm_source%3Dnews&r=https%3A%2F%2Fsearch.example"
      + "%2F&t=Docs&s=1366&b=0&q=%3Futm_source%3Dnews%26utm_medium%3Demail%26utm_campaign%3Dspring+sale&rnd=k3x9a",
      "Stats.Example");
    assertThat(hit.site()).isEqualTo("stats.example");
    assertThat(hit.path()).isEqualTo("/docs/%C3%BCber");
    assertThat(PathSegments.decode(hit.path())).isEqualTo("/docs/über");
    assertThat(hit.visit()).isEqualTo(new PageVisit("https://search.example/", "news", "email", "spring sale"));
    assertThat(hit.skipped()).isNull();
  }

  @Test
  @DisplayName("GoatCounter: the campaign comes from p's query when q is absent; no referrer is none")
  void goatCounterWithoutQ() {
    TrackerHit hit = TrackerHit.goatCounter("p=%2Fa%3Futm_campaign%3Dx&b=0", null);
    assertThat(hit.path()).isEqualTo("/a");
    assertThat(hit.visit()).isEqualTo(new PageVisit(null, null, null, "x"));
    assertThat(TrackerHit.goatCounter("p=%2F", "h").visit()).isSameAs(PageVisit.NONE);
  }

  @Test
  @DisplayName("GoatCounter: a non-zero bot score is a bot, e=true an event, both not views")
  void goatCounterNotViews() {
    assertThat(TrackerHit.goatCounter("p=%2F&b=153", "h").skipped()).isEqualTo("bot");
    assertThat(TrackerHit.goatCounter("p=%2F&b=0", "h").skipped()).isNull();
    assertThat(TrackerHit.goatCounter("p=signup-click&e=true&b=0", "h").skipped()).isEqualTo("event");
  }

  @Test
  @DisplayName("GoatCounter: no p, or an empty one, is refused naming p")
  void goatCounterWithoutPath() {
    assertThatThrownBy(() -> TrackerHit.goatCounter("r=x&b=0", "h")).isInstanceOfSatisfying(ApiError.class,
      e -> assertThat(e.toJson().getString("field")).isEqualTo("p"));
    assertThatThrownBy(() -> TrackerHit.goatCounter("p=", "h")).isInstanceOf(ApiError.class);
    assertThatThrownBy(() -> TrackerHit.goatCounter(null, "h")).isInstanceOf(ApiError.class);
  }

  @Test
  @DisplayName("Umami's page view gives the website id as site, the URL's path without query or fragment, referrer and campaign")
  void umami() {
    TrackerHit hit = TrackerHit.umami(Buffer.buffer("{\"type\":\"event\",\"payload\":{\"website\":\"" + UMAMI_SITE + "\","
      + "\"screen\":\"1366x768\",\"language\":\"en-US\",\"title\":\"Docs\",\"hostname\":\"shop.example\","
      + "\"url\":\"https://shop.example/docs/%C3%BCber?utm_source=news#top\",\"referrer\":\"https://search.example/\"}}"));
    assertThat(hit.site()).isEqualTo(UMAMI_SITE);
    assertThat(hit.path()).isEqualTo("/docs/%C3%BCber");
    assertThat(hit.visit()).isEqualTo(new PageVisit("https://search.example/", "news", null, null));
    assertThat(hit.skipped()).isNull();
  }

  @Test
  @DisplayName("Umami: a named event, an identify and a performance report are not views; an empty referrer is none")
  void umamiNotViews() {
    String payload = "{\"website\":\"w\",\"url\":\"https://s.example/\",\"referrer\":\"\"";
    assertThat(TrackerHit.umami(Buffer.buffer("{\"type\":\"event\",\"payload\":" + payload + ",\"name\":\"signup\"}}"))
      .skipped()).isEqualTo("event");
    assertThat(TrackerHit.umami(Buffer.buffer("{\"type\":\"identify\",\"payload\":" + payload + "}}")).skipped())
      .isEqualTo("identify");
    assertThat(TrackerHit.umami(Buffer.buffer("{\"type\":\"performance\",\"payload\":" + payload + ",\"lcp\":1}}"))
      .skipped()).isEqualTo("performance");
    TrackerHit view = TrackerHit.umami(Buffer.buffer("{\"type\":\"event\",\"payload\":" + payload + "}}"));
    assertThat(view.path()).isEqualTo("/");
    assertThat(view.visit()).isSameAs(PageVisit.NONE);
  }

  @Test
  @DisplayName("Umami: what is not its JSON is refused naming the field and its rule")
  void umamiRefused() {
    assertField(() -> TrackerHit.umami(Buffer.buffer("{not json")), "body");
    assertField(() -> TrackerHit.umami(Buffer.buffer("[1]")), "body");
    assertField(() -> TrackerHit.umami(Buffer.buffer("{\"type\":\"click\",\"payload\":{}}")), "type");
    assertField(() -> TrackerHit.umami(Buffer.buffer("{\"type\":\"event\"}")), "payload");
    assertField(() -> TrackerHit.umami(Buffer.buffer("{\"type\":\"event\",\"payload\":{\"url\":\"/\"}}")), "payload.website");
    assertField(() -> TrackerHit.umami(Buffer.buffer("{\"type\":\"event\",\"payload\":{\"website\":\"w\"}}")), "payload.url");
    assertField(() -> TrackerHit.umami(Buffer.buffer("{\"type\":\"event\",\"payload\":{\"website\":\"w\",\"url\":\"/\","
      + "\"referrer\":5}}")), "payload.referrer");
  }

  @Test
  @DisplayName("Plausible's pageview gives the first domain as site, the path, referrer and campaign; engagement and events are not views")
  void plausible() {
    TrackerHit hit = TrackerHit.plausible(Buffer.buffer("{\"n\":\"pageview\",\"v\":36,\"u\":\"https://Shop.example/a%20b"
      + "?utm_medium=social&utm_source=mastodon\",\"d\":\"Shop.example,rollup.example\",\"r\":\"https://social.example/@x\"}"));
    assertThat(hit.site()).isEqualTo("shop.example");
    assertThat(hit.path()).isEqualTo("/a%20b");
    assertThat(hit.visit()).isEqualTo(new PageVisit("https://social.example/@x", "mastodon", "social", null));
    assertThat(hit.skipped()).isNull();
    assertThat(TrackerHit.plausible(Buffer.buffer("{\"n\":\"pageview\",\"u\":\"https://s.example\",\"d\":\"s.example\","
      + "\"r\":null}")).path()).isEqualTo("/");
    assertThat(TrackerHit.plausible(Buffer.buffer("{\"n\":\"engagement\",\"sd\":40,\"d\":\"s\",\"u\":\"https://s/\","
      + "\"p\":{},\"e\":3120,\"v\":36}")).skipped()).isEqualTo("engagement");
    assertThat(TrackerHit.plausible(Buffer.buffer("{\"n\":\"Signup\",\"d\":\"s\",\"u\":\"https://s/\"}")).skipped())
      .isEqualTo("event");
  }

  @Test
  @DisplayName("Plausible: no name, URL or domain, or a body that is not JSON, is refused naming the field")
  void plausibleRefused() {
    assertField(() -> TrackerHit.plausible(Buffer.buffer("n=pageview")), "body");
    assertField(() -> TrackerHit.plausible(Buffer.buffer("{\"u\":\"https://s/\",\"d\":\"s\"}")), "n");
    assertField(() -> TrackerHit.plausible(Buffer.buffer("{\"n\":\"pageview\",\"d\":\"s\"}")), "u");
    assertField(() -> TrackerHit.plausible(Buffer.buffer("{\"n\":\"pageview\",\"u\":\"https://s/\",\"d\":\"\"}")), "d");
  }

  @Test
  @DisplayName("a URL's path: absolute or a path, fragment and query cut, non-ASCII and stray % kept as written")
  void paths() {
    assertThat(TrackerHit.pathOf("http://localhost:8080/x/y?z#w")).isEqualTo("/x/y");
    assertThat(TrackerHit.pathOf("https://h.example#/route")).isEqualTo("/");
    assertThat(TrackerHit.pathOf("/docs/über?a")).isEqualTo("/docs/über");
    assertThat(TrackerHit.pathOf("/100%")).isEqualTo("/100%");
    assertThat(TrackerHit.queryOf("https://h/p?a=1#b?c")).isEqualTo("a=1");
    assertThat(TrackerHit.queryOf("https://h/p#b?c")).isNull();
    assertThat(TrackerHit.parameters("utm_source=a+b&utm_source=c&%zz=%E2%82%AC&x")).containsEntry("utm_source", "a b")
      .containsEntry("%zz", "€").containsEntry("x", "");
  }

  private static void assertField(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String field) {
    assertThatThrownBy(call).isInstanceOfSatisfying(ApiError.class, e -> {
      assertThat(e.status()).isEqualTo(400);
      assertThat(e.toJson().getString("field")).isEqualTo(field);
      assertThat(e.getMessage()).isNotBlank();
    });
  }
}
