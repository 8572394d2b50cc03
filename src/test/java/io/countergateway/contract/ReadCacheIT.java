package io.countergateway.contract;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

class ReadCacheIT {
  @Test
  @DisplayName("with reads.cacheMaxAge set, a read within that time is answered from the cached value")
  void cachedReads() {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "cache_counters")
      .put("reads", new JsonObject().put("cacheMaxAge", "1m"));
    try (GatewayFixture fixture = GatewayFixture.start(config)) {
      assertThat(read(fixture)).isZero();
      assertThat(await(fixture.http.post("/v1/counters/likes/cached/increments").send()).statusCode()).isEqualTo(200);
      assertThat(await(fixture.sumInTable("likes", "cached"))).isEqualTo(1L);
      assertThat(read(fixture)).isZero();
    }
  }

  private static long read(GatewayFixture fixture) {
    return await(fixture.http.get("/v1/counters/likes/cached").send()).bodyAsJsonObject().getLong("value");
  }
}
