package io.countergateway.store;

/**
 * A flush (or void) of a source that was closed as dead, or has no row: nothing of it was written. The store resolves
 * the source's flushes by their ids and carries on under a new source (see {@link FlushFence}).
 */
final class FlushSourceClosedException extends IllegalStateException {
  private final String source;

  FlushSourceClosedException(String source, String message) {
    super(message);
    this.source = source;
  }

  String source() {
    return source;
  }
}
