package io.countergateway.internal.store;

import io.countergateway.testing.VirtualTimers;
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

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Closing a store's pool")
class BoundedPoolCloseTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** A pool whose close never completes, as vertx-sql-client 5.0.10's does after its cancel-path NullPointerException. */
  private static Pool neverClosing() {
    Promise<Void> never = Promise.promise();
    return (Pool) Proxy.newProxyInstance(Pool.class.getClassLoader(), new Class<?>[] {Pool.class}, (proxy, method, args) -> {
      if (method.getName().equals("close")) {
        return never.future();
      }
      throw new UnsupportedOperationException(method.getName());
    });
  }

  @Test
  @DisplayName("gives up on a pool that never finishes closing, so a graceful stop still ends")
  void aPoolThatNeverClosesDoesNotHoldTheStop() {
    VirtualTimers timers = new VirtualTimers();
    BoundedPool pool = new BoundedPool(vertx, timers, BoundedPoolCloseTest::neverClosing, 1_000);
    Future<Void> closed = pool.close();
    timers.advance(Duration.ofSeconds(BoundedPool.CLOSE_TIMEOUT_SECONDS).minusMillis(1));
    assertThat(closed.isComplete()).as("still waiting just before the close timeout").isFalse();
    timers.advance(Duration.ofMillis(1));
    assertThat(closed.succeeded()).as("given up at the close timeout").isTrue();
  }
}
