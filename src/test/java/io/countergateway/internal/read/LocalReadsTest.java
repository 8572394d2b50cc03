package io.countergateway.internal.read;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.IncrementRules;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.Eventually;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.ScriptedStore;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("The HTTP routes' reads straight to a read verticle's reader")
class LocalReadsTest {
  private Vertx vertx;
  private Context readLoop;
  private Context callerA;
  private Context callerB;
  private final ScriptedStore store = new ScriptedStore();
  private LocalReads local;
  private JsonObject database;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    readLoop = vertx.getOrCreateContext();
    callerA = vertx.getOrCreateContext();
    callerB = vertx.getOrCreateContext();
    database = new JsonObject().put("kind", "postgres").put("host", "127.0.0.1").put("port", 5432)
      .put("name", "counters").put("user", "postgres");
    local = localReads(GatewayFixture.baseConfig(database, "local_reads"));
  }

  private static LocalReads localReads(JsonObject json) {
    GatewayConfig config = GatewayConfig.fromJson(json);
    return new LocalReads(config, new IncrementRules(config, Clock.systemUTC()));
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private int sumQueries() {
    return EventLoop.call(readLoop, store.sumQueries::size);
  }

  @Test
  @DisplayName("reads of a hot counter from two event loops while its query runs share one new query: each caller gets the same value, read after it asked")
  void singleFlightAnswersEachCallerTheSameFreshValue() throws Exception {
    store.set("likes", "hot", BigInteger.valueOf(3));
    store.holdSums(true);
    CounterReader reader = EventLoop.call(readLoop, () -> new CounterReader(store, 4, 100, 0, 100_000));
    EventLoop.call(readLoop, () -> {
      local.add(readLoop, reader);
      return null;
    });
    Future<Map<String, Long>> first = EventLoop.call(callerA, () -> local.read("likes", List.of("hot")));
    Eventually.until("the first read's query is sent", () -> sumQueries() == 1);

    // committed after the first query was sent: the reads that come now must not take that query's answer
    EventLoop.call(readLoop, () -> {
      store.set("likes", "hot", BigInteger.valueOf(10));
      return null;
    });
    List<Future<Map<String, Long>>> later = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      later.add(EventLoop.call(callerA, () -> local.read("likes", List.of("hot"))));
      later.add(EventLoop.call(callerB, () -> local.read("likes", List.of("hot"))));
    }
    // each read was handed to the read loop before its call returned, so they are queued behind the first query
    assertThat(sumQueries()).as("one counter has one query at a time").isEqualTo(1);
    EventLoop.call(readLoop, store::release);
    assertThat(sumQueries()).as("the first query's end sends the one the later reads share").isEqualTo(2);
    EventLoop.call(readLoop, () -> {
      store.set("likes", "hot", BigInteger.valueOf(12));
      return null;
    });
    EventLoop.call(readLoop, store::release);

    assertThat(await(first)).containsEntry("hot", 10L);
    for (Future<Map<String, Long>> read : later) {
      assertThat(await(read)).containsEntry("hot", 12L);
    }
    assertThat(sumQueries()).as("one query for the first read, one for all ten later ones").isEqualTo(2);
  }

  @Test
  @DisplayName("a read is refused as counters.get refuses it: an undeclared namespace 404, no ids or too many 400")
  void refusalsAreThoseOfTheBus() throws Exception {
    CounterReader reader = EventLoop.call(readLoop, () -> new CounterReader(store, 4, 100, 0, 100_000));
    local.add(readLoop, reader);
    assertThat(local.takes("likes")).isTrue();
    assertThat(local.takes("nosuch")).isFalse();
    assertThatThrownBy(() -> await(EventLoop.call(callerA, () -> local.read("nosuch", List.of("a")))))
      .isInstanceOf(ExecutionException.class).cause().isInstanceOf(ApiError.class)
      .extracting(cause -> ((ApiError) cause).status()).isEqualTo(404);
    assertThatThrownBy(() -> await(EventLoop.call(callerA, () -> local.read("likes", List.of()))))
      .cause().isInstanceOf(ApiError.class).extracting(cause -> ((ApiError) cause).status()).isEqualTo(400);
    local.remove(reader);
    assertThat(local.takes("likes")).as("no read verticle serves: the routes use the event bus").isFalse();
  }

  @Test
  @DisplayName("a read still waiting at limits.requestTimeout answers 504 timeout, and the reads after it are answered their value")
  void aReadPastItsDeadlineTimesOutAndTheLaterOnesAreAnswered() throws Exception {
    JsonObject json = GatewayFixture.baseConfig(database, "local_reads");
    json.getJsonObject("limits").put("requestTimeout", "500ms");
    LocalReads bounded = localReads(json);
    store.set("likes", "hot", BigInteger.valueOf(7));
    store.holdSums(true);
    CounterReader reader = EventLoop.call(readLoop, () -> new CounterReader(store, 4, 100, 0, 100_000));
    bounded.add(readLoop, reader);

    Future<Map<String, Long>> held = EventLoop.call(callerA, () -> bounded.read("likes", List.of("hot")));
    assertThatThrownBy(() -> await(held)).cause().isInstanceOf(ApiError.class)
      .extracting(cause -> ((ApiError) cause).status(), cause -> ((ApiError) cause).code())
      .containsExactly(504, "timeout");

    // the held query ends after its read gave up; the reads that come now are answered by the next one
    EventLoop.call(readLoop, () -> store.holdSums(false).release());
    List<Future<Map<String, Long>>> later = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      later.add(EventLoop.call(i % 2 == 0 ? callerA : callerB, () -> bounded.read("likes", List.of("hot"))));
    }
    for (Future<Map<String, Long>> read : later) {
      assertThat(await(read)).containsExactly(Map.entry("hot", 7L));
    }
  }
}
