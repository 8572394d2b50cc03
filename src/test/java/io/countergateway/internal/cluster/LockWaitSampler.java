package io.countergateway.internal.cluster;

import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every 20 ms: the sessions of the test database waiting for a lock, by what they wait for. Row locks are what
 * concurrent flushes on shared slot rows would wait for; table-level waits ({@code relation}, {@code metadata})
 * come from statements such as a starting replica's schema statements. A row-lock wait of a flush on its own
 * source's row, held by that source's fence transaction, is counted apart ({@code own source}): it is a wait
 * inside one coalescer, which lanes do not and cannot remove.
 */
final class LockWaitSampler {
  /**
   * Sessions waiting for a lock: (what they wait for, their statement, the statement of the session they wait for,
   * the client addresses of both). Row locks are {@code transactionid}, {@code tuple}.
   */
  private static final String PG_LOCK_WAITS =
    "SELECT w.wait_event, left(w.query, 80), left(b.query, 80), host(w.client_addr), host(b.client_addr)"
      + " FROM pg_stat_activity w"
      + " LEFT JOIN pg_stat_activity b ON b.pid = (pg_blocking_pids(w.pid))[1]"
      + " WHERE w.wait_event_type = 'Lock' AND w.datname = current_database()";
  /** InnoDB row-lock waits (reported as {@code tuple}), and sessions waiting for a table's metadata lock. */
  private static final String MARIADB_LOCK_WAITS =
    "SELECT 'tuple', LEFT(r.trx_query, 80), LEFT(b.trx_query, 80), NULL, NULL FROM information_schema.INNODB_LOCK_WAITS w"
      + " JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id"
      + " LEFT JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id"
      + " UNION ALL SELECT 'metadata', LEFT(INFO, 80), NULL, NULL, NULL FROM information_schema.PROCESSLIST"
      + " WHERE STATE LIKE 'Waiting for%lock'";
  /**
   * What a flush statement does first: take its own flush source's row shared (src/DESIGN.md §4, FlushFence). That
   * row belongs to one coalescer of one replica.
   */
  private static List<String> flushTakesItsSource(String table) {
    return List.of(
      "WITH s AS (SELECT fence FROM " + table + "_flush_sources WHERE source =",
      "SELECT fence FROM " + table + "_flush_sources WHERE source =");
  }

  /**
   * The statements only a source's own coalescer runs on that source's row: the fence transaction (the fence raised,
   * then the settled ids deleted) and the deletion of the source at a graceful stop. A flush waiting for one of these
   * waits for its own coalescer, not for another replica.
   */
  private static List<String> ownSourceTransactions(String table) {
    return List.of(
      "WITH raised AS (",
      "UPDATE " + table + "_flush_sources SET fence = GREATEST(",
      "DELETE FROM " + table + "_flushes WHERE flush_id",
      "DELETE FROM " + table + "_flush_sources WHERE source =",
      "DELETE FROM " + table + "_flushes WHERE split_part(flush_id");
  }

  final AtomicLong samples = new AtomicLong();
  final Map<String, AtomicLong> samplesByWait = new ConcurrentHashMap<>();
  final Map<String, String> exampleQuery = new ConcurrentHashMap<>();
  /** Samples with a row-lock wait whose waiter and holder connect from different addresses (PostgreSQL only). */
  final AtomicLong crossHostSamples = new AtomicLong();
  private final Vertx vertx;
  private final List<String> flushTakesItsSource;
  private final List<String> ownSourceTransactions;
  private final long timer;

  /** Samples the sessions of {@code sql}'s database, where the gateways write {@code table}, until {@link #stop()}. */
  static LockWaitSampler start(Vertx vertx, Pool sql, boolean postgres, String table) {
    return new LockWaitSampler(vertx, sql, postgres ? PG_LOCK_WAITS : MARIADB_LOCK_WAITS, table);
  }

  private LockWaitSampler(Vertx vertx, Pool sql, String lockWaits, String table) {
    this.vertx = vertx;
    this.flushTakesItsSource = flushTakesItsSource(table);
    this.ownSourceTransactions = ownSourceTransactions(table);
    this.timer = vertx.setPeriodic(20, id -> sql.query(lockWaits).execute().onSuccess(rows -> {
      samples.incrementAndGet();
      Set<String> seen = new HashSet<>();
      boolean crossHost = false;
      for (var row : rows) {
        String waiter = row.getString(3);
        String holder = row.getString(4);
        crossHost |= isRowLock(row.getString(0)) && waiter != null && holder != null && !waiter.equals(holder);
      }
      if (crossHost) {
        crossHostSamples.incrementAndGet();
      }
      rows.forEach(row -> {
        String wait = isRowLock(row.getString(0)) && ownSource(row.getString(1), row.getString(2))
          ? "own source" : row.getString(0);
        if (seen.add(wait)) {
          samplesByWait.computeIfAbsent(wait, k -> new AtomicLong()).incrementAndGet();
        }
        exampleQuery.putIfAbsent(wait, row.getString(1) + " <- " + row.getString(2));
      });
    }));
  }

  private static boolean isRowLock(String wait) {
    return wait.equals("transactionid") || wait.equals("tuple");
  }

  private boolean ownSource(String waiting, String blocking) {
    return waiting != null && blocking != null
      && flushTakesItsSource.stream().anyMatch(waiting::startsWith)
      && ownSourceTransactions.stream().anyMatch(blocking::startsWith);
  }

  /** Samples in which a session waited for a row lock another replica (or no known flush source owner) held. */
  long rowLockSamples() {
    return samplesByWait.entrySet().stream().filter(e -> isRowLock(e.getKey()))
      .mapToLong(e -> e.getValue().get()).sum();
  }

  long ownSourceSamples() {
    AtomicLong own = samplesByWait.get("own source");
    return own == null ? 0 : own.get();
  }

  void stop() {
    vertx.cancelTimer(timer);
  }
}
