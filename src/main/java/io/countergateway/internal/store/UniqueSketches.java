package io.countergateway.internal.store;

import io.countergateway.config.DatabaseOptions;
import io.countergateway.internal.model.CounterKey;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.BinaryOperator;

/**
 * The sketch and salt tables of unique visitors (schema step 007), on a bounded pool of their own ({@link BoundedPool}:
 * attempt timeout, pool replacement, answers on the caller's loop). What a sketch is stays the caller's business: the
 * store moves bytes and merges them with the union it is given. A merge is idempotent (a union), so a write that failed
 * or timed out with an unknown outcome is simply attempted again.
 */
public final class UniqueSketches {
  /** Counter-buckets merged per transaction: bounds the row locks one transaction holds and its statements. */
  static final int ROWS_PER_TRANSACTION = 256;

  /** One sketch to merge into the row of {@code key} (a windowed counter's bucket) and {@code slot}. */
  public record SketchRow(CounterKey key, short slot, byte[] sketch) {
  }

  /** Rows in key order, then slot: every writer locks rows in this order, so two transactions never deadlock. */
  public static final Comparator<SketchRow> LOCK_ORDER = Comparator.comparing(SketchRow::key)
    .thenComparingInt(SketchRow::slot);

  private final BoundedPool pools;
  private final UniqueStatements sql;

  public UniqueSketches(Vertx vertx, DatabaseOptions options, int poolSize, long attemptTimeoutMs) {
    this.pools = SqlStores.boundedPool(vertx, options, "uniques", poolSize, attemptTimeoutMs);
    this.sql = statements(options.isPostgres(), options.getTable());
  }

  static UniqueStatements statements(boolean postgres, String table) {
    return postgres ? UniqueStatements.postgres(table) : UniqueStatements.mysql(table);
  }

  /**
   * Merges each row's sketch into the stored one with {@code union(stored, incoming)} (an empty stored array: no
   * sketch yet), in transactions of at most {@link #ROWS_PER_TRANSACTION} rows. Fails if any transaction failed; the
   * ones that committed stay merged, which a retry of all of them leaves as it is.
   */
  public Future<Void> merge(List<SketchRow> rows, BinaryOperator<byte[]> union) {
    List<SketchRow> ordered = new ArrayList<>(rows);
    ordered.sort(LOCK_ORDER);
    Future<Void> chain = Future.succeededFuture();
    for (int from = 0; from < ordered.size(); from += ROWS_PER_TRANSACTION) {
      List<SketchRow> chunk = ordered.subList(from, Math.min(ordered.size(), from + ROWS_PER_TRANSACTION));
      chain = chain.compose(v -> pools.transaction(conn -> mergeChunk(conn, chunk, union)));
    }
    return chain;
  }

  /** All statements pipelined on the one connection, which runs them in order: the locks are taken in key order. */
  private Future<Void> mergeChunk(SqlConnection conn, List<SketchRow> chunk, BinaryOperator<byte[]> union) {
    List<Future<byte[]>> stored = new ArrayList<>(chunk.size());
    for (SketchRow row : chunk) {
      Tuple key = key(row);
      stored.add(conn.preparedQuery(sql.insertEmpty()).execute(key)
        .compose(present -> conn.preparedQuery(sql.lock()).execute(key))
        .map(locked -> locked.iterator().next().getBuffer(0).getBytes()));
    }
    return Future.all(stored).compose(all -> {
      List<Future<?>> updates = new ArrayList<>(chunk.size());
      for (int i = 0; i < chunk.size(); i++) {
        SketchRow row = chunk.get(i);
        byte[] merged = union.apply(stored.get(i).result(), row.sketch());
        Tuple arguments = Tuple.of(Buffer.buffer(merged)).addString(row.key().type()).addString(row.key().id())
          .addLong(row.key().bucket()).addShort(row.slot());
        updates.add(conn.preparedQuery(sql.update()).execute(arguments));
      }
      return Future.all(updates).mapEmpty();
    });
  }

  private static Tuple key(SketchRow row) {
    return Tuple.tuple().addString(row.key().type()).addString(row.key().id()).addLong(row.key().bucket())
      .addShort(row.slot());
  }

  /** The stored sketches (every slot, every bucket starting in [{@code from}, {@code to})) of one counter; empty rows left out. */
  public Future<List<byte[]>> read(String type, String id, long from, long to) {
    return readByBucket(type, id, from, to).map(byBucket -> byBucket.values().stream().flatMap(List::stream).toList());
  }

  /** The same sketches by bucket start (epoch seconds), oldest first; buckets without a sketch left out. */
  public Future<SortedMap<Long, List<byte[]>>> readByBucket(String type, String id, long from, long to) {
    return pools.attempt(pool -> pool.preparedQuery(sql.read()).execute(Tuple.of(type, id, from, to)).map(rows -> {
      SortedMap<Long, List<byte[]>> sketches = new TreeMap<>();
      for (Row row : rows) {
        byte[] sketch = row.getBuffer(0).getBytes();
        if (sketch.length > 0) {
          sketches.computeIfAbsent(row.getLong(1), bucket -> new ArrayList<>()).add(sketch);
        }
      }
      return sketches;
    }));
  }

  /**
   * The salt of UTC day {@code day} (epoch day): {@code candidate} if this call stored it first, else the one another
   * replica stored. Every replica thus hashes a visitor of that day alike.
   */
  public Future<byte[]> salt(long day, byte[] candidate) {
    return pools.attempt(pool -> pool.preparedQuery(sql.insertSalt()).execute(Tuple.of(day, Buffer.buffer(candidate)))
      .compose(inserted -> pool.preparedQuery(sql.readSalt()).execute(Tuple.of(day)))
      .map(rows -> rows.iterator().next().getBuffer(0).getBytes()));
  }

  public Future<Void> close() {
    return pools.close();
  }
}
