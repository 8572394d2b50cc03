package io.countergateway.internal.store;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
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
  void aPoolThatNeverClosesDoesNotHoldTheStop() throws Exception {
    BoundedPool pool = new BoundedPool(vertx, BoundedPoolCloseTest::neverClosing, 1_000);
    long started = System.nanoTime();
    Future<Void> closed = pool.close();
    closed.toCompletionStage().toCompletableFuture().get(BoundedPool.CLOSE_TIMEOUT_SECONDS + 5, TimeUnit.SECONDS);
    assertThat(closed.succeeded()).isTrue();
    assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started))
      .isGreaterThanOrEqualTo(BoundedPool.CLOSE_TIMEOUT_SECONDS - 1);
  }
}
