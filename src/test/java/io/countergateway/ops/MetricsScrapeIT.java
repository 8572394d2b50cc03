package io.countergateway.ops;

import io.countergateway.Gateway;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.metrics.VertxMetrics;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.stream.IntStream;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/** A real {@code /metrics} scrape of a gateway that took writes, reads and refusals, as Prometheus would see it. */
class MetricsScrapeIT {
  private static final String SECRET_ID = "id-never-a-label-7f3a";
  private static Vertx vertx;
  private static Gateway gateway;
  private static String scrape;

  @BeforeAll
  static void scrapeAfterTraffic() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    vertx = VertxMetrics.builder(registry).build();
    gateway = await(Gateway.start(vertx, GatewayConfig.fromJson(GatewayFixture.baseConfig(TestDatabases.postgres(),
      "metrics_scrape")), registry));
    WebClient http = WebClient.create(vertx);
    IntStream.range(0, 20).forEach(i -> await(http.post(gateway.port(), "127.0.0.1",
      "/v1/counters/likes/" + SECRET_ID + "-" + i + "/increments").send()));
    await(http.get(gateway.port(), "127.0.0.1", "/v1/counters/likes/" + SECRET_ID + "-1").send());
    await(http.post(gateway.port(), "127.0.0.1", "/v1/counters/nope/" + SECRET_ID + "/increments").send());
    await(http.get(gateway.port(), "127.0.0.1", "/health/ready").send());
    await(http.get(gateway.port(), "127.0.0.1", "/no/such/route/" + SECRET_ID).send());
    scrape = await(http.get(gateway.port(), "127.0.0.1", "/metrics").send()).bodyAsString();
  }

  @AfterAll
  static void stop() {
    await(gateway.stop().eventually(vertx::close));
  }

  @Test
  @DisplayName("/metrics carries HTTP requests by route template and status with latency buckets, flush buckets, pools, the JVM, the process and the gateway's own meters")
  void exportsTheVertxAndJvmMeters() {
    assertThat(scrape)
      .contains("gateway_http_requests_total{")
      .contains("route=\"/v1/counters/:type/:id/increments\"")
      .contains("code=\"200\"").contains("code=\"404\"")
      .contains("gateway_http_requests_total{code=\"404\",method=\"GET\",route=\"unmatched\"} 1.0")
      .contains("gateway_http_response_time_seconds_count{")
      .containsPattern("gateway_http_response_time_seconds_bucket\\{[^}]*le=\"0\\.005\"")
      .contains("gateway_flush_duration_seconds_bucket{")
      .contains("process_resident_memory_bytes ").contains("process_open_fds ").contains("process_max_fds ")
      .contains("process_start_time_seconds ")
      .contains("vertx_pool_")
      .contains("jvm_memory_used_bytes").contains("jvm_gc_").contains("jvm_threads_").contains("process_cpu_seconds_total")
      .contains("gateway_increments_taken_total").contains("gateway_flush_rows_total")
      .contains("gateway_ready 1.0").contains("gateway_writers_shedding 0.0");
  }

  @Test
  @DisplayName("no counter id ever becomes a label value")
  void noCounterIdInLabels() {
    assertThat(scrape).doesNotContain(SECRET_ID);
  }

  @Test
  @DisplayName("every metric the dashboard and the alert rules query is in the scrape")
  void monitoringQueriesRealMetrics() {
    assertThat(MonitoringFiles.metricNames()).isNotEmpty()
      .allSatisfy(name -> assertThat(scrape).as(name).containsPattern("(?m)^" + name + "[{ ]"));
  }

  @Test
  @DisplayName("promtool check metrics finds nothing to complain about in a real scrape")
  void promtoolIsClean() throws Exception {
    Promtool.assumeInstalled();
    Promtool.Result result = Promtool.run(scrape, "check", "metrics");
    assertThat(result.output()).isEmpty();
    assertThat(result.exitCode()).isZero();
  }
}
