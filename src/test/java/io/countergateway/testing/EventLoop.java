package io.countergateway.testing;

import io.vertx.core.Context;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** Runs test code on one event loop, for the classes that check they are called on the loop that created them. */
public final class EventLoop {
  private EventLoop() {
  }

  /** Runs {@code work} on {@code loop} and returns its result; its exception is rethrown here, unchecked. */
  public static <T> T call(Context loop, Callable<T> work) {
    CompletableFuture<T> result = new CompletableFuture<>();
    loop.runOnContext(v -> {
      try {
        result.complete(work.call());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    });
    try {
      return result.get(TestBounds.millis(20), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
