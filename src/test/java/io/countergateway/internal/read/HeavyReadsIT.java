package io.countergateway.internal.read;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Anonymous heavy reads against readiness (the issue: parallel top-N loops over 281k ids failed a third of the
 * readiness probes, then single reads got 503 database_unavailable and "Pool closed"). Here: 30,000 ids in an hourly
 * namespace, 16 loops of top-N for a few seconds, readiness probed throughout. Bounded: loopback, 4 s of load.
 */
@DisplayName("Heavy reads cannot take readiness down")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HeavyReadsIT {
  GatewayFixture fixture;
  WebClient wide;

  @BeforeAll
  void start() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "heavy_reads_counters");
    config.getJsonObject("limits").put("maxBodyBytes", 1_048_576);
    config.getJsonObject("namespaces").put("hits", new JsonObject().put("slots", 4)
      .put("window", new JsonObject().put("bucket", "hour").put("retention", "2d")));
    fixture = GatewayFixture.start(config);
    wide = WebClient.create(fixture.vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
      .setDefaultPort(fixture.gateway.port()), new PoolOptions().setHttp1MaxSize(32));
    for (int batch = 0; batch < 3; batch++) {
      JsonArray increments = new JsonArray();
      for (int i = 0; i < 10_000; i++) {
        increments.add(new JsonObject().put("type", "hits").put("id", "page-" + batch + "-" + i).put("delta", 1 + i % 7));
      }
      assertThat(await(fixture.http.post("/v1/increments").sendJson(increments)).statusCode()).isEqualTo(200);
    }
  }

  @AfterAll
  void stop() {
    wide.close();
    fixture.close();
  }

  @Test
  @DisplayName("16 loops of top-N: readiness stays 200 and fast, heavy reads past the cap get 503 reads_busy, single reads work")
  void readinessHolds() {
    long end = System.nanoTime() + 4_000_000_000L;
    AtomicInteger answered = new AtomicInteger();
    AtomicInteger busy = new AtomicInteger();
    List<String> unexpected = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<Future<Void>> loops = new ArrayList<>();
    for (int loop = 0; loop < 16; loop++) {
      loops.add(topLoop(end, answered, busy, unexpected));
    }
    int probes = 0;
    int ready = 0;
    long slowest = 0;
    int singleOk = 0;
    while (System.nanoTime() < end) {
      long started = System.nanoTime();
      HttpResponse<Buffer> probe = await(fixture.http.get("/health/ready").send());
      slowest = Math.max(slowest, (System.nanoTime() - started) / 1_000_000);
      probes++;
      if (probe.statusCode() == 200) {
        ready++;
      }
      if (await(fixture.http.get("/v1/counters/likes/x").send()).statusCode() == 200) {
        singleOk++;
      }
      await(fixture.vertx.timer(100));
    }
    await(Future.all(loops));
    assertThat(unexpected).as("answers other than 200 and 503 reads_busy").isEmpty();
    assertThat(ready).as("readiness probes answered 200").isEqualTo(probes);
    assertThat(slowest).as("slowest readiness probe, ms").isLessThan(1_000);
    assertThat(singleOk).as("single reads answered 200").isEqualTo(probes);
    assertThat(answered.get()).as("top-N reads answered").isPositive();
    System.out.printf("heavy reads: %d answered, %d reads_busy, readiness %d/%d (slowest %d ms)%n", answered.get(),
      busy.get(), ready, probes, slowest);
  }

  private Future<Void> topLoop(long end, AtomicInteger answered, AtomicInteger busy, List<String> unexpected) {
    if (System.nanoTime() >= end) {
      return Future.succeededFuture();
    }
    return wide.get("/v1/counters/hits?top=10").send().compose(response -> {
      if (response.statusCode() == 200) {
        answered.incrementAndGet();
      } else if (response.statusCode() == 503 && "reads_busy".equals(response.bodyAsJsonObject().getString("error"))) {
        busy.incrementAndGet();
      } else {
        unexpected.add(response.statusCode() + " " + response.bodyAsString());
      }
      return topLoop(end, answered, busy, unexpected);
    });
  }
}
