package io.countergateway.internal.store;

/**
 * An attempt that failed before its statement left the process: no connection could be had (refused, unreachable,
 * the pool's wait ran out), or what had to come first did not complete before the attempt's bound. Nothing of it
 * reached the database, so nothing of it can commit, now or later; {@link #getCause()} says why.
 */
public final class StatementNotSentException extends RuntimeException {
  public StatementNotSentException(Throwable cause) {
    super("not sent: " + cause, cause);
  }
}
