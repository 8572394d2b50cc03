package io.countergateway.faults;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;

import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** Small blocking helpers of the fault tests; every wait is bounded. */
final class Faults {
  private Faults() {
  }

  /** A prefix of counter ids no other run shares, without LIKE wildcards. */
  static String uniquePrefix(String what) {
    return what + "-" + UUID.randomUUID().toString().substring(0, 8) + "-";
  }

  static <T> T await(Future<T> future, long seconds) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(seconds, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("not done within " + seconds + " s", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The sum over all series of a Prometheus counter or gauge, e.g. {@code gateway_flush_retries_total}. */
  static double metric(WebClient client, String name) {
    HttpResponse<Buffer> response = await(client.get("/metrics").timeout(10_000).send(), 15);
    double total = 0;
    for (String line : response.bodyAsString().split("\n")) {
      if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
        total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return total;
  }

  /** The status of {@code GET /health/ready}, or 0 without an answer. */
  static int ready(WebClient client) {
    return health(client, "/health/ready");
  }

  /** The status of {@code GET /health/accepting} (a sidecar's readiness), or 0 without an answer. */
  static int accepting(WebClient client) {
    return health(client, "/health/accepting");
  }

  private static int health(WebClient client, String path) {
    try {
      return await(client.get(path).timeout(5_000).send(), 10).statusCode();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }
}
