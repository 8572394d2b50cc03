package io.countergateway.internal.store;

import io.countergateway.testing.EventLoop;
import io.countergateway.testing.VirtualTimers;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("An attempt that times out")
class BoundedPoolTimeoutTest {
  private final Vertx vertx = Vertx.vertx();
  private final AtomicInteger made = new AtomicInteger();
  private final AtomicInteger closed = new AtomicInteger();
  private final VirtualTimers timers = new VirtualTimers();

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** A pool that only counts its making and closing. */
  private Pool countingPool() {
    made.incrementAndGet();
    return (Pool) Proxy.newProxyInstance(Pool.class.getClassLoader(), new Class<?>[] {Pool.class}, (proxy, method, args) -> {
      if (method.getName().equals("close")) {
        closed.incrementAndGet();
        return Future.succeededFuture();
      }
      throw new UnsupportedOperationException(method.getName());
    });
  }

  /** An attempt that never gets an answer, on an event loop, failed by its timer: what it failed with. */
  private Throwable timeOut(BoundedPool pool) throws Exception {
    Promise<Throwable> failure = Promise.promise();
    Context loop = vertx.getOrCreateContext();
    // answered once the attempt's failure is handled whole (the answer is settled before the pool is replaced)
    EventLoop.call(loop, () -> pool.attempt(current -> Promise.<Void>promise().future())
      .onComplete(result -> loop.runOnContext(after -> failure.complete(result.cause()))));
    timers.advance(Duration.ofMillis(99));
    assertThat(failure.future().isComplete()).as("still waiting just before the attempt timeout").isFalse();
    timers.advance(Duration.ofMillis(1));
    return failure.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  @DisplayName("replaces a pool of writes: its connection may be stuck")
  void writesReplaceThePool() throws Exception {
    BoundedPool pool = new BoundedPool(vertx, timers, this::countingPool, 100);
    assertThat(timeOut(pool)).isInstanceOf(TimeoutException.class);
    assertThat(made).hasValue(2);
    assertThat(closed).hasValue(1);
  }

  @Test
  @DisplayName("fails only that read on a pool of reads: the other reads keep their connections")
  void readsKeepThePool() throws Exception {
    BoundedPool pool = new BoundedPool(vertx, timers, this::countingPool, 100);
    pool.keepOnTimeout();
    assertThat(timeOut(pool)).isInstanceOf(TimeoutException.class);
    assertThat(made).hasValue(1);
    assertThat(closed).hasValue(0);
  }
}
