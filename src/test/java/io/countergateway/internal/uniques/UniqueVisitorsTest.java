package io.countergateway.internal.uniques;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.UniqueSketches;
import io.countergateway.testing.EventLoop;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BinaryOperator;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Unique visitors held in memory")
@ExtendWith(VertxExtension.class)
class UniqueVisitorsTest {
  private static final Instant MORNING = Instant.parse("2026-11-22T09:30:00Z");
  private static final long DAY_SECONDS = MORNING.getEpochSecond() / 86_400 * 86_400;

  /** A database whose salt answers when the test says, and which keeps every sketch merged into it. */
  private static final class SlowSalt implements SketchStore {
    final Promise<byte[]> salt = Promise.promise();
    final List<UniqueSketches.SketchRow> merged = new ArrayList<>();

    @Override
    public Future<byte[]> salt(long day, byte[] candidate) {
      return salt.future();
    }

    @Override
    public Future<Void> merge(List<UniqueSketches.SketchRow> rows, BinaryOperator<byte[]> union) {
      merged.addAll(rows);
      return Future.succeededFuture();
    }
  }

  @Test
  @DisplayName("a stop begun while the day's salt is still on its way merges the visits it answered once the salt comes")
  void drainWaitsForVisitsWaitingForTheirSalt(Vertx vertx) {
    GatewayConfig config = GatewayConfig.fromJson(new JsonObject().put("namespaces", new JsonObject()
      .put("visits", new JsonObject().put("slots", 4).put("public", true).put("unique", true)
        .put("window", new JsonObject().put("bucket", "day").put("retention", "3d")))));
    Context loop = vertx.getOrCreateContext();
    SlowSalt store = new SlowSalt();
    CounterKey page = new CounterKey("visits", "docs", DAY_SECONDS);
    CounterKey site = new CounterKey("visits~site", "docs", DAY_SECONDS);
    Future<Void> drained = EventLoop.call(loop, () -> {
      UniqueVisitors uniques = new UniqueVisitors(vertx, store, config, Clock.fixed(MORNING, ZoneOffset.UTC), () -> 0,
        new SimpleMeterRegistry(), 0);
      uniques.start();
      for (int i = 0; i < 25; i++) {
        uniques.record(page, site, "203.0.113." + i, "Firefox");
      }
      return uniques.drain();
    });
    assertThat(EventLoop.call(loop, drained::isComplete)).as("drained before the salt came").isFalse();

    EventLoop.call(loop, () -> store.salt.tryComplete(new byte[32]));
    await(drained);

    List<byte[]> pageSketches = EventLoop.call(loop, () -> store.merged.stream()
      .filter(row -> row.key().equals(page)).map(UniqueSketches.SketchRow::sketch).toList());
    assertThat(VisitorSketches.estimate(pageSketches, config.getUniques().getLgK()).unique())
      .as("visitors merged by the stop").isEqualTo(25);
  }
}
