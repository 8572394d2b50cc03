package io.countergateway.internal.store;

import io.countergateway.internal.model.CounterKey;
import io.vertx.core.Future;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * The slotted-counter table of one database, behind the few operations the gateway needs. Answers of {@link #write}
 * and {@link #sum} arrive on the event loop of the caller, whatever thread the database client completes them on.
 */
public interface CounterStore extends FlushStatements, FlushSourceStatements {
  /** Creates the tables if missing and applies the schema steps the database lacks (see {@link SchemaUpgrade}). */
  Future<Void> createSchema();

  /** For {@code database.createSchema=false}: fails unless a DBA has applied exactly this gateway's schema steps. */
  Future<Void> checkSchema();

  /** Exact current values (SUM over slots) of the ids in one namespace; ids never written read as 0. */
  Future<Map<String, BigInteger>> sum(String type, List<String> ids);

  /** Windowed namespaces: per id, the SUM over the buckets starting in [{@code from}, {@code to}) (epoch seconds). */
  default Future<Map<String, BigInteger>> windowTotals(String type, List<String> ids, long from, long to) {
    return Future.failedFuture(new UnsupportedOperationException("windowed reads"));
  }

  /** The buckets of one counter starting in [{@code from}, {@code to}), oldest first; buckets summing to 0 are left out. */
  default Future<List<BucketValue>> windowBuckets(String type, String id, long from, long to) {
    return Future.failedFuture(new UnsupportedOperationException("windowed reads"));
  }

  /** The {@code count} ids with the largest totals over [{@code from}, {@code to}), largest first (ties by id). */
  default Future<List<Map.Entry<String, BigInteger>>> windowTop(String type, long from, long to, int count) {
    return Future.failedFuture(new UnsupportedOperationException("windowed reads"));
  }

  /** The {@code count} ids of a plain namespace with the largest values (SUM over slots), largest first (ties by id). */
  default Future<List<Map.Entry<String, BigInteger>>> plainTop(String type, int count) {
    return Future.failedFuture(new UnsupportedOperationException("plain top-N reads"));
  }

  /** Deletes up to {@code limit} bucket rows of the namespace starting before {@code before}; returns how many went. */
  default Future<Integer> expireBuckets(String type, long before, int limit) {
    return Future.failedFuture(new UnsupportedOperationException("bucket retention"));
  }

  /** The start of the namespace's oldest stored bucket, null when it has none. */
  default Future<Long> oldestBucket(String type) {
    return Future.failedFuture(new UnsupportedOperationException("bucket retention"));
  }

  /**
   * Up to {@code limit} ids of the namespace that have a row, in the table's order, after {@code after} (null: from
   * the first): a page of the ids that exist, read through the primary key.
   */
  default Future<List<String>> distinctIds(String type, String after, int limit) {
    return Future.failedFuture(new UnsupportedOperationException("distinct ids"));
  }

  /** Deletes every slot (and every bucket) of a counter. */
  Future<Void> reset(CounterKey key);

  /**
   * Closes the flush sources silent for {@code olderThanSeconds} (their ids are kept: a gateway that was only cut off
   * resolves its flushes by them), deletes the sources closed for that long with their ids (processes that died), and
   * the ids older than that of no registered source (written by a gateway of the previous version); returns how many
   * ids went. The ids of live sources go as their flushes settle (see {@code write/FlushSources}).
   */
  Future<Integer> pruneFlushIds(int olderThanSeconds);

  /**
   * The primary's timeline and WAL insert position and the lowest position its standbys flushed, in one statement
   * (PostgreSQL only: {@code database.keepUntilReplicated}). Fails on a server in recovery.
   */
  default Future<ReplicationPosition> replicationPosition() {
    return Future.failedFuture(new UnsupportedOperationException("replication positions"));
  }

  /** A cheap round trip, for readiness. */
  Future<Void> ping();

  Future<Void> close();
}
