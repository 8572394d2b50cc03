package io.countergateway.internal.write;

/**
 * How a coalescer tells the gateway what readiness is made of; called on the coalescer's event loop, on changes only.
 * The runtime state every verticle shares implements it, so the write path imports nothing above itself.
 */
public interface WriterHealth {
  /** Flushes of this writer fail (an outage: they are retried, increments are held), or succeed again. */
  void writerFailing(boolean failing);

  /** This writer sheds load (new increments get 503), or has room again. */
  void writerShedding(boolean shedding);

  /** This writer is resolving the flushes a journal replay carried over (not ready until they settle), or is done. */
  default void writerReplaying(boolean replaying) {
  }
}
