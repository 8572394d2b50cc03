package io.countergateway.internal.write;

import io.vertx.core.Future;

/** Reads a counter's value after a commit, for add-and-get answers; served by the read side. */
@FunctionalInterface
public interface CommittedValues {
  /**
   * The value read past every cache, or null when that read fails: the increment has committed by then, so a failed
   * read must not turn into an error the client would retry (and count twice). Never fails.
   */
  Future<Long> valueAfterCommit(String type, String id);
}
