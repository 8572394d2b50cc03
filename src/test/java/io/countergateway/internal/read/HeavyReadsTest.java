package io.countergateway.internal.read;

import io.countergateway.internal.model.ApiError;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Top-N and range reads")
class HeavyReadsTest {
  private final AtomicLong nanos = new AtomicLong();

  @Test
  @DisplayName("run at most reads.maxHeavyPerNamespace at once per namespace; more get 503 reads_busy at once")
  void capped() {
    HeavyReads heavy = new HeavyReads(2, 0, nanos::get);
    List<Promise<JsonObject>> queries = new ArrayList<>();
    List<Future<JsonObject>> answers = new ArrayList<>();
    for (int top = 1; top <= 4; top++) {
      answers.add(heavy.read("pages", new JsonObject().put("top", top), () -> {
        Promise<JsonObject> query = Promise.promise();
        queries.add(query);
        return query.future();
      }));
    }
    assertThat(queries).hasSize(2);
    assertThat(answers.get(2).failed()).isTrue();
    assertThat(((ApiError) answers.get(2).cause()).code()).isEqualTo("reads_busy");
    assertThat(((ApiError) answers.get(2).cause()).status()).isEqualTo(503);
    assertThat(heavy.read("other", new JsonObject().put("top", 1), () -> Future.succeededFuture(new JsonObject()))
      .succeeded()).as("another namespace has its own share").isTrue();
    queries.get(0).complete(new JsonObject().put("top", 1));
    assertThat(heavy.read("pages", new JsonObject().put("top", 9), () -> Future.succeededFuture(new JsonObject()))
      .succeeded()).as("a share freed").isTrue();
  }

  @Test
  @DisplayName("the same read while it runs shares its query, and with reads.cacheMaxAge its answer is reused that long")
  void singleFlightAndCache() {
    HeavyReads heavy = new HeavyReads(1, 1_000, nanos::get);
    AtomicInteger queries = new AtomicInteger();
    Promise<JsonObject> running = Promise.promise();
    JsonObject request = new JsonObject().put("top", 10);
    Future<JsonObject> first = heavy.read("pages", request, () -> {
      queries.incrementAndGet();
      return running.future();
    });
    Future<JsonObject> second = heavy.read("pages", request.copy(), () -> {
      queries.incrementAndGet();
      return Future.succeededFuture(new JsonObject());
    });
    running.complete(new JsonObject().put("answer", 1));
    assertThat(first.result()).isEqualTo(second.result());
    nanos.addAndGet(500_000_000L);
    assertThat(heavy.read("pages", request, () -> {
      queries.incrementAndGet();
      return Future.succeededFuture(new JsonObject());
    }).result().getInteger("answer")).isEqualTo(1);
    assertThat(queries).hasValue(1);
    nanos.addAndGet(600_000_000L);
    heavy.read("pages", request, () -> {
      queries.incrementAndGet();
      return Future.succeededFuture(new JsonObject());
    });
    assertThat(queries).hasValue(2);
  }
}
