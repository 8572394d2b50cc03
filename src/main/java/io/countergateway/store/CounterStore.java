package io.countergateway.store;

import io.countergateway.batch.Flush;
import io.countergateway.model.CounterKey;
import io.vertx.core.Future;

import java.util.List;
import java.util.Map;

/** The slotted-counter table of one database, behind the few operations the gateway needs. */
public interface CounterStore {
  /** Creates the tables if missing and applies the schema steps the database lacks (see {@link SchemaUpgrade}). */
  Future<Void> createSchema();

  /** For {@code database.createSchema=false}: fails unless a DBA has applied exactly this gateway's schema steps. */
  Future<Void> checkSchema();

  /** Writes a flush atomically together with its flush id; a repeated id writes nothing. */
  Future<WriteOutcome> write(Flush flush);

  /** Current values of the ids in one namespace; ids never written read as 0. */
  Future<Map<String, Long>> sum(String type, List<String> ids);

  /** Deletes every slot of a counter. */
  Future<Void> reset(CounterKey key);

  /** Deletes flush ids committed longer ago than {@code olderThanSeconds}; returns how many. */
  Future<Integer> pruneFlushIds(int olderThanSeconds);

  /** A cheap round trip, for readiness. */
  Future<Void> ping();

  Future<Void> close();
}
