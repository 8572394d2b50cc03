package io.countergateway.store;

/**
 * Whether a flush committed can no longer be known: its source vanished (closed, then deleted with its ids after
 * {@code batching.flushIdRetentionSeconds} more) while an attempt of it had an unknown outcome. Neither retrying nor
 * answering "not counted" is safe; the writer answers 504 {@code outcome_unknown}.
 */
public final class FlushOutcomeUnknownException extends IllegalStateException {
  public FlushOutcomeUnknownException(String message) {
    super(message);
  }
}
