package io.countergateway.internal.store;

import io.vertx.core.Future;

import java.util.List;

/**
 * The statements on a flush source's row: its fence and heartbeat (see {@code write/FlushSources}); part of
 * {@link CounterStore}.
 */
public interface FlushSourceStatements {
  /** A row for a new flush source, fence 0. */
  Future<Void> registerSource(String source);

  /**
   * Raises the source's fence to {@code fence}, beats its heart, and deletes {@code settledIds}, in one transaction;
   * false when the row is closed or missing (nothing raised, nothing deleted: a closed source keeps its ids).
   */
  Future<Boolean> advanceSource(String source, long fence, List<String> settledIds);

  /** The source's fence and, when it is closed, the ids committed under it, read together. */
  Future<FlushSourceRow> sourceRow(String source);

  /** Deletes the source's row, then its ids, in one transaction: a late copy of one of its flushes then fails. */
  Future<Void> deleteSource(String source);
}
