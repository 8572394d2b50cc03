package io.countergateway.bench;

import io.vertx.core.Vertx;

/** What every strategy of one run shares. */
record BenchContext(Vertx vertx, BenchOptions options, String runId) {
  Dialect dialect() {
    return options.dialect();
  }
}
