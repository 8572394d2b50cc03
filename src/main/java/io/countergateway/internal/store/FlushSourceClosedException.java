package io.countergateway.internal.store;

/**
 * A flush (or void) under a source that was closed as dead, or has no row: nothing of it was written. The write side
 * reads the source's row ({@link CounterStore#sourceRow}) and resolves the source's flushes by their ids.
 */
public final class FlushSourceClosedException extends IllegalStateException {
  private final String source;

  public FlushSourceClosedException(String source, String message) {
    super(message);
    this.source = source;
  }

  public String source() {
    return source;
  }
}
