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
   * Raises the source's fence to {@code fence} and beats its heart, in one statement that holds the row for itself
   * only; false when the row is closed or missing (nothing raised: a closed source keeps its ids).
   */
  Future<Boolean> raiseFence(String source, long fence);

  /**
   * Deletes the ids of settled flushes, each below its live source's fence as raised before: in statements of their
   * own, holding no source's row, so the source's flushes go on meanwhile.
   */
  Future<Void> deleteSettledIds(List<String> ids);

  /** The source's fence and, when it is closed, the ids committed under it, read together. */
  Future<FlushSourceRow> sourceRow(String source);

  /** Deletes the source's row, then its ids, in one transaction: a late copy of one of its flushes then fails. */
  Future<Void> deleteSource(String source);
}
