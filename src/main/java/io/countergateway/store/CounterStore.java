package io.countergateway.store;

import io.countergateway.batch.Flush;
import io.countergateway.model.CounterKey;
import io.vertx.core.Future;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * The slotted-counter table of one database, behind the few operations the gateway needs. Answers of {@link #write}
 * and {@link #sum} arrive on the event loop of the caller, whatever thread the database client completes them on.
 */
public interface CounterStore {
  /** Creates the tables if missing. */
  Future<Void> createSchema();

  /**
   * Writes a flush atomically together with its flush id; a repeated id writes nothing. An attempt is bounded by the
   * store's attempt timeout; a timed-out attempt fails (its outcome unknown) and its connection is not used again.
   */
  Future<WriteOutcome> write(Flush flush);

  /** Exact current values (SUM over slots) of the ids in one namespace; ids never written read as 0. */
  Future<Map<String, BigInteger>> sum(String type, List<String> ids);

  /** Deletes every slot of a counter. */
  Future<Void> reset(CounterKey key);

  /** Deletes flush ids committed longer ago than {@code olderThanSeconds}; returns how many. */
  Future<Integer> pruneFlushIds(int olderThanSeconds);

  /** A cheap round trip, for readiness. */
  Future<Void> ping();

  Future<Void> close();
}
