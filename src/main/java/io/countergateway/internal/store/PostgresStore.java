package io.countergateway.internal.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/** PostgreSQL: a flush is ONE {@code UNNEST} upsert statement, whatever its size. */
final class PostgresStore extends PooledCounterStore {
  private final PostgresSql sql;
  private final String table;

  PostgresStore(Vertx vertx, Supplier<Pool> pools, long attemptTimeoutMs, PostgresSql sql, String table) {
    super(vertx, pools, attemptTimeoutMs, sql.reset, sql.windows, UniqueSketches.statements(true, table).reset());
    this.sql = sql;
    this.table = table;
  }

  /** One bounded transaction that settles at once on failure (see {@link BoundedPool#transaction}). */
  private <T> Future<T> inTransaction(Function<SqlConnection, Future<T>> work) {
    return pools.transaction(work);
  }

  @Override
  public Future<Void> createSchema() {
    return new SchemaUpgrade(true, table).upgrade(pools.current());
  }

  @Override
  public Future<Void> checkSchema() {
    return new SchemaUpgrade(true, table).check(pools.current());
  }

  @Override
  public Future<Void> registerSource(String source) {
    return registerSource(source, sql.registerSource);
  }

  @Override
  public Future<Boolean> raiseFence(String source, long fence) {
    return bounded(pool -> pool.preparedQuery(sql.raiseFence).execute(Tuple.of(source, fence, FlushSourceRow.CLOSED))
      .map(raised -> raised.rowCount() > 0));
  }

  @Override
  public Future<Void> deleteSettledIds(List<String> ids) {
    return bounded(pool -> pool.preparedQuery(sql.deleteSettledIds).execute(Tuple.of(ids.toArray(String[]::new)))
      .mapEmpty());
  }

  @Override
  public Future<FlushSourceRow> sourceRow(String source) {
    return sourceRow(source, sql.lockSource, sql.committedIdsOfSource);
  }

  @Override
  public Future<Void> deleteSource(String source) {
    return deleteSource(source, sql.deleteSource, sql.deleteIdsOfSource);
  }

  @Override
  public Future<Integer> pruneFlushIds(int olderThanSeconds) {
    return pools.current().preparedQuery(sql.pruneFlushIds).execute(Tuple.of(olderThanSeconds, FlushSourceRow.CLOSED))
      .map(rows -> rows.iterator().next().getLong(0).intValue());
  }

  @Override
  public Future<WriteOutcome> write(Flush flush, Supplier<Future<Void>> beforeSend) {
    if (flush.rows().stream().anyMatch(FlushRow::windowed)) {
      return writeWindowed(flush, beforeSend);
    }
    Tuple arguments = PostgresSql.rowArrays(flush.rows());
    addId(arguments, flush.id());
    return sent(beforeSend, conn -> conn.preparedQuery(sql.upsertFlush).execute(arguments)
      .map(result -> result.rowCount() == 0 ? WriteOutcome.ALREADY_COMMITTED : WriteOutcome.COMMITTED))
      .recover(failure -> Future.failedFuture(sourceClosed(flush, failure)));
  }

  /** The same one statement and flush id, over both tables; its answer row says whether the flush id was new. */
  private Future<WriteOutcome> writeWindowed(Flush flush, Supplier<Future<Void>> beforeSend) {
    Tuple arguments = PostgresSql.plainAndWindowedArrays(flush.rows());
    addId(arguments, flush.id());
    return sent(beforeSend, conn -> conn.preparedQuery(sql.upsertWindowedFlush).execute(arguments)
      .map(result -> result.iterator().next().getLong(0) == 0 ? WriteOutcome.ALREADY_COMMITTED : WriteOutcome.COMMITTED))
      .recover(failure -> Future.failedFuture(sourceClosed(flush, failure)));
  }

  /** The flush statements' last three arguments: the id, its source, its sequence. */
  private static void addId(Tuple arguments, FlushId id) {
    arguments.addString(id.toString()).addString(id.source()).addLong(id.sequence());
  }

  /**
   * The flush statement's way of saying its source is closed or has no row: the unknown setting it reads then (42704).
   * Any other failure as it is.
   */
  private static Throwable sourceClosed(Flush flush, Throwable failure) {
    if (failure instanceof PgException pg && "42704".equals(pg.getSqlState()) && pg.getMessage() != null
      && pg.getMessage().contains("flush_source_missing_or_closed")) {
      return sourceClosed(flush, pg.getMessage());
    }
    return failure;
  }

  /**
   * In one transaction: the source's row shared and open, then the id inserted as voided; if it was there, whether it
   * is voided (an earlier void attempt of ours) or not (a late copy of an earlier write attempt committed it).
   */
  @Override
  public Future<VoidOutcome> voidFlush(Flush flush) {
    String id = flush.id().toString();
    return inTransaction(conn -> conn.preparedQuery(sql.lockSource).execute(Tuple.of(flush.id().source()))
      .compose(source -> {
        requireOpen(flush, source.size() == 0 ? null : source.iterator().next().getLong(0));
        return conn.preparedQuery(sql.insertVoidedId).execute(Tuple.of(id));
      })
      .compose(inserted -> inserted.rowCount() > 0 ? Future.succeededFuture(VoidOutcome.VOIDED)
        : conn.preparedQuery(sql.readVoided).execute(Tuple.of(id)).map(rows -> voidOutcome(id, rows))));
  }

  @Override
  public Future<Map<String, BigInteger>> windowTotals(String type, List<String> ids, long from, long to) {
    return bounded(pool -> pool.preparedQuery(sql.windowTotals)
      .execute(Tuple.tuple().addString(type).addArrayOfString(ids.toArray(String[]::new)).addLong(from).addLong(to))
      .map(rows -> sums(ids, rows)));
  }

  @Override
  public Future<List<String>> distinctIds(String type, String after, int limit) {
    return bounded(pool -> pool.preparedQuery(("SELECT DISTINCT record_id FROM %s WHERE record_type = $1 AND record_id > $2 "
        + "ORDER BY record_id LIMIT $3").formatted(table)).execute(Tuple.of(type, after == null ? "" : after, limit))
      .map(PooledCounterStore::firstColumn));
  }

  /**
   * The insert position is read after every COMMIT the caller saw return, so it is at or past their commit records; the
   * timeline is the one the server inserts WAL on (the first 8 hex digits of its WAL file's name). A standby counts
   * while it streams physically ({@code state} streaming): one still catching up after it connected (a new standby far
   * behind, one back from a break) is no failover target yet and is not waited for, though a known one missing
   * holds releases ({@code write/ReplicatedRelease}); walsenders of logical slots are left out; one that has not
   * reported a flush position reads as 0, so nothing is taken for replicated to it.
   */
  @Override
  public Future<ReplicationPosition> replicationPosition() {
    return bounded(pool -> pool.query(REPLICATION_POSITION).execute().map(rows -> {
      var row = rows.iterator().next();
      return new ReplicationPosition(Long.parseLong(row.getString(0), 16), row.getLong(1), row.getLong(2).intValue(),
        row.getLong(3));
    }));
  }

  static final String REPLICATION_POSITION = "WITH here AS (SELECT pg_current_wal_insert_lsn() AS lsn), "
    + "standbys AS (SELECT flush_lsn FROM pg_stat_replication WHERE state = 'streaming' AND pid NOT IN "
    + "(SELECT active_pid FROM pg_replication_slots WHERE slot_type = 'logical' AND active_pid IS NOT NULL)) "
    + "SELECT substr(pg_walfile_name(lsn), 1, 8), (lsn - '0/0'::pg_lsn)::bigint, (SELECT count(*) FROM standbys), "
    + "(SELECT coalesce(min(coalesce(flush_lsn, '0/0'::pg_lsn) - '0/0'::pg_lsn), 0)::bigint FROM standbys) FROM here";

  @Override
  public Future<Map<String, BigInteger>> sum(String type, List<String> ids) {
    return bounded(pool -> pool.preparedQuery(sql.sumByIds)
      .execute(Tuple.tuple().addString(type).addArrayOfString(ids.toArray(String[]::new)))
      .map(rows -> sums(ids, rows)));
  }
}
