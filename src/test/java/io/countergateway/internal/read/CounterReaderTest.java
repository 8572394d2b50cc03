package io.countergateway.internal.read;

import io.countergateway.testing.EventLoop;
import io.countergateway.testing.ScriptedStore;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("The reader, on a scripted store")
class CounterReaderTest {
  private Vertx vertx;
  private Context loop;
  private final ScriptedStore store = new ScriptedStore();

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private <T> T onLoop(Callable<T> work) {
    return EventLoop.call(loop, work);
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  @DisplayName("a counter whose SUM is beyond 64 bits fails only its own read, not the reads that shared its query")
  void overflowFailsOnlyItsCounter() throws Exception {
    store.set("likes", "a", BigInteger.valueOf(5));
    store.set("likes", "big", BigInteger.ONE.shiftLeft(64));
    store.holdSums(true);
    CounterReader reader = onLoop(() -> new CounterReader(store, 1, 100, 0, 100_000));
    // the first read holds the only query slot, so the next two queue and share one query
    Future<Map<String, Long>> first = onLoop(() -> reader.read("likes", List.of("x")));
    Future<Map<String, Long>> a = onLoop(() -> reader.read("likes", List.of("a")));
    Future<Map<String, Long>> big = onLoop(() -> reader.read("likes", List.of("big")));
    onLoop(store::release);
    onLoop(store::release);

    assertThat(await(first)).containsEntry("x", 0L);
    assertThat(await(a)).containsEntry("a", 5L);
    assertThatThrownBy(() -> await(big)).isInstanceOf(ExecutionException.class)
      .hasCauseInstanceOf(ArithmeticException.class);
  }

  @Test
  @DisplayName("a hot counter has one query at a time: the reads that arrive while it runs share the next one")
  void oneQueryAtATimePerCounter() throws Exception {
    store.set("likes", "hot", BigInteger.valueOf(3));
    store.holdSums(true);
    CounterReader reader = onLoop(() -> new CounterReader(store, 4, 100, 0, 100_000));
    Future<Map<String, Long>> first = onLoop(() -> reader.read("likes", List.of("hot")));
    List<Future<Map<String, Long>>> later = onLoop(() -> java.util.stream.IntStream.range(0, 10)
      .mapToObj(i -> reader.read("likes", List.of("hot"))).toList());
    Future<Map<String, Long>> other = onLoop(() -> reader.read("likes", List.of("hot", "cold")));
    // free query slots are used for other counters, never for a second query of the hot one
    assertThat(store.sumQueries).containsExactly(List.of("hot"), List.of("cold"));

    onLoop(store::release);
    assertThat(await(first)).containsEntry("hot", 3L);
    assertThat(store.sumQueries).hasSize(3).last().isEqualTo(List.of("hot"));
    while (onLoop(store::release)) {
      // the cold query and the shared hot one
    }
    for (Future<Map<String, Long>> read : later) {
      assertThat(await(read)).containsEntry("hot", 3L);
    }
    assertThat(await(other)).containsEntry("hot", 3L).containsEntry("cold", 0L);
    assertThat(store.sumQueries).hasSize(3);
  }

  @Test
  @DisplayName("a read from a thread other than its event loop is refused")
  void confinementIsChecked() throws Exception {
    CounterReader reader = onLoop(() -> new CounterReader(store, 1, 100, 0, 100_000));
    assertThatThrownBy(() -> reader.read("likes", List.of("a"))).isInstanceOf(IllegalStateException.class);
  }

  @Test
  @DisplayName("the read cache holds at most reads.cacheMaxCounters counters: past it, cached values are read afresh")
  void cacheIsBounded() throws Exception {
    store.set("likes", "a", BigInteger.valueOf(1));
    store.set("likes", "b", BigInteger.valueOf(2));
    store.set("likes", "c", BigInteger.valueOf(3));
    CounterReader reader = onLoop(() -> new CounterReader(store, 1, 100, 60_000, 2));
    for (String id : List.of("a", "b", "a")) {
      assertThat(await(onLoop(() -> reader.read("likes", List.of(id))))).containsKey(id);
    }
    assertThat(store.sumQueries).as("a and b read once, the second a from the cache").hasSize(2);

    store.set("likes", "a", BigInteger.valueOf(10));
    assertThat(await(onLoop(() -> reader.read("likes", List.of("c"))))).containsEntry("c", 3L);
    assertThat(await(onLoop(() -> reader.read("likes", List.of("a"))))).as("the full cache was emptied for c")
      .containsEntry("a", 10L);
    assertThat(store.sumQueries).hasSize(4);
  }
}
