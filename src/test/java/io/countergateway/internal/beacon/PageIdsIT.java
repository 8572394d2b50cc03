package io.countergateway.internal.beacon;

import io.countergateway.internal.model.PageIds;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Page paths as beacon ids on each real database: what beacon.js sends for the paths real sites have is counted under
 * the path itself, read back (and reset) by it, and what cannot be an id is counted under {@code (invalid)}, never
 * refused; a pixel's cache busters and campaign tags never cost a view.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Any page path is a beacon id")
class PageIdsIT {
  private static final String BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    + "Chrome/120.0 Safari/537.36";
  private final Map<String, GatewayFixture> gateways = new LinkedHashMap<>();

  @BeforeAll
  void start() {
    gateways.put("postgres", GatewayFixture.start(GatewayFixture.baseConfig(TestDatabases.postgres(), "page_ids")));
    gateways.put("mariadb", GatewayFixture.start(GatewayFixture.baseConfig(TestDatabases.mariadb(), "page_ids")));
  }

  @AfterAll
  void stop() {
    gateways.values().forEach(GatewayFixture::close);
  }

  /** What beacon.js sends: the path as text, encoded once as JavaScript's encodeURIComponent does. */
  static String encodeURIComponent(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20").replace("%21", "!")
      .replace("%27", "'").replace("%28", "(").replace("%29", ")").replace("%7E", "~");
  }

  private static HttpResponse<Buffer> beacon(GatewayFixture gateway, String path, String query) {
    return await(gateway.http.get("/v1/beacon/pageviews/" + encodeURIComponent(path) + query)
      .putHeader("User-Agent", BROWSER).send());
  }

  private static long read(GatewayFixture gateway, String id) {
    HttpResponse<Buffer> read = await(gateway.http.get("/v1/counters/pageviews/" + encodeURIComponent(id)).send());
    assertThat(read.statusCode()).as(read.bodyAsString()).isEqualTo(200);
    return read.bodyAsJsonObject().getLong("value");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("every page path counts under itself, read back by it; a control character counts under (invalid)")
  void everyPathCounted(String database) {
    GatewayFixture gateway = gateways.get(database);
    String site = "/" + UUID.randomUUID().toString().substring(0, 8);
    List<String> paths = List.of(site + "/docs/über", site + "/a page", site + "/wiki/Foo_(bar)", site + "/x;y",
      site + "/it's", site + "/100%", site + "/" + "p".repeat(600), site + "/" + "q".repeat(2_000));
    long invalidBefore = read(gateway, ReservedIds.INVALID);
    for (String path : paths) {
      HttpResponse<Buffer> answer = beacon(gateway, path, "");
      assertThat(answer.statusCode()).as(path).isEqualTo(204);
      assertThat(answer.getHeader("X-Counter-Folded")).as(path).isNull();
    }
    HttpResponse<Buffer> control = beacon(gateway, site + "/a\u0001b", "");
    assertThat(control.statusCode()).isEqualTo(204);
    assertThat(control.getHeader("X-Counter-Folded")).isEqualTo("invalid_id");

    for (String path : paths) {
      assertThat(gateway.sumInTableReaching("pageviews", PageIds.of(path, 255), 1)).as("SUM in the table: " + path)
        .isEqualTo(1);
      assertThat(read(gateway, path)).as("read by its path: " + path).isEqualTo(1);
    }
    assertThat(gateway.sumInTableReaching("pageviews", ReservedIds.INVALID, invalidBefore + 1)).isEqualTo(invalidBefore + 1);
    assertThat(read(gateway, ReservedIds.INVALID)).isEqualTo(invalidBefore + 1);
    // one page typed in another Unicode form is the same page
    assertThat(read(gateway, site + "/docs/u\u0308ber")).isEqualTo(1);
    // a multi-counter read answers by the ids as asked
    HttpResponse<Buffer> many = await(gateway.http.get("/v1/counters/pageviews?id=" + encodeURIComponent(paths.get(0))
      + "&id=" + encodeURIComponent(paths.get(7))).send());
    assertThat(many.bodyAsJsonObject().getJsonArray("counters").stream().map(JsonObject.class::cast)
      .map(counter -> counter.getLong("value"))).containsExactly(1L, 1L);
    String metrics = await(gateway.http.get("/metrics").send()).bodyAsString();
    assertThat(metrics).containsPattern("gateway_beacons_folded_total\\{namespace=\"pageviews\",reason=\"invalid_id\"} [1-9]");

    // a reset names the page as a read does; the JSON API keeps limits.idPattern
    assertThat(await(gateway.http.delete("/v1/counters/pageviews/" + encodeURIComponent(paths.get(0))).send())
      .statusCode()).isEqualTo(204);
    assertThat(read(gateway, paths.get(0))).isZero();
    HttpResponse<Buffer> json = await(gateway.http.post("/v1/counters/pageviews/" + encodeURIComponent(paths.get(0))
      + "/increments").send());
    assertThat(json.statusCode()).isEqualTo(400);
    assertThat(json.bodyAsJsonObject().getString("error")).isEqualTo("invalid_id");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a pixel with cache busters and campaign tags is counted, 9 of 9, and names what it ignored")
  void pixelParametersIgnored(String database) {
    GatewayFixture gateway = gateways.get(database);
    String page = "/" + UUID.randomUUID().toString().substring(0, 8) + "/pixel";
    List<String> queries = List.of("?format=gif", "?format=gif&_=1699999", "?format=gif&cb=2", "?format=gif&v=3",
      "?format=gif&utm_source=x", "?format=gif&utm_medium=y", "?format=gif&fbclid=z", "?format=gif&ref=w",
      "?_=1&cb=2&v=3&utm_source=x&utm_medium=y&fbclid=z&ref=w&format=gif");
    for (String query : queries) {
      HttpResponse<Buffer> answer = beacon(gateway, page, query);
      assertThat(answer.statusCode()).as(query).isEqualTo(200);
      assertThat(answer.getHeader("Content-Type")).isEqualTo("image/gif");
    }
    assertThat(beacon(gateway, page, "?_=1&cb=2&v=3&utm_source=x&utm_medium=y&fbclid=z&ref=w")
      .getHeader("X-Counter-Ignored-Parameters")).isEqualTo("_,cb,v,fbclid,ref");
    assertThat(gateway.sumInTableReaching("pageviews", page, 10)).isEqualTo(10);
  }
}
