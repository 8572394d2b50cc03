package io.countergateway.read;

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
    CounterReader reader = onLoop(() -> new CounterReader(store, 1, 100, 0));
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
  @DisplayName("a read from a thread other than its event loop is refused")
  void confinementIsChecked() throws Exception {
    CounterReader reader = onLoop(() -> new CounterReader(store, 1, 100, 0));
    assertThatThrownBy(() -> reader.read("likes", List.of("a"))).isInstanceOf(IllegalStateException.class);
  }
}
