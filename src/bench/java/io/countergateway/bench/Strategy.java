package io.countergateway.bench;

import io.vertx.core.Future;

import java.util.List;
import java.util.Map;

/**
 * One way of counting, measured by the {@link LoadDriver}. A strategy owns its own table(s) or server, created
 * fresh by {@link #setup()}; it hands out one {@link Writer} per writer loop and can read its counters back for
 * the correctness check.
 */
public interface Strategy {
  /** Short name used on the command line ({@code single-row}, {@code gateway-http}, ...). */
  String name();

  /** What the table calls it. */
  String title();

  /** False for references that keep nothing on disk (Redis, the plain 204 server). */
  default boolean durable() {
    return true;
  }

  /** False when there is nothing to read back (the plain 204 server). */
  default boolean checkable() {
    return true;
  }

  /** Increments one operation of a writer carries (1, or the batch size). */
  default int incrementsPerOperation() {
    return 1;
  }

  /** Writer loops to run for {@code concurrency} writers (the event-bus strategy may keep more in flight). */
  default int writerLoops(int concurrency) {
    return concurrency;
  }

  /** Anything the table should say about the run (retries, ...); empty if nothing. */
  default String note() {
    return "";
  }

  /** Creates the table(s) or starts the server; a {@link Skipped} failure skips the strategy. */
  Future<Void> setup();

  /** Called on the writer loop's event loop; the writer may hold a connection of its own. */
  Future<Writer> writer();

  /** A reader of counter 0 for the read mix; called on the reader loop's event loop. */
  Future<Reader> reader();

  /** The writers have stopped: stop background work (the ledger's fold job) before the values are read. */
  default Future<Void> quiesce() {
    return Future.succeededFuture();
  }

  /** Current values of the given counters (absent means 0). */
  Future<Map<Integer, Long>> values(List<Integer> counters);

  /** The sum over every counter. */
  Future<Long> total();

  Future<Void> close();

  /** Increments its counters by one each; fails with {@link UnknownOutcome} when it may or may not have counted. */
  interface Writer {
    Future<Void> increment(int[] counters);

    default Future<Void> close() {
      return Future.succeededFuture();
    }
  }

  /** Reads counter 0. */
  interface Reader {
    Future<Long> read();

    default Future<Void> close() {
      return Future.succeededFuture();
    }
  }

  /** The increment may have been counted or not (a lost connection, a 504): the check allows for it. */
  final class UnknownOutcome extends RuntimeException {
    public UnknownOutcome(String message, Throwable cause) {
      super(message, cause, false, false);
    }
  }

  /** The strategy cannot run here (Redis not reachable, ...): reported, not a failure. */
  final class Skipped extends RuntimeException {
    public Skipped(String message) {
      super(message, null, false, false);
    }
  }
}
