package io.countergateway.internal.rollup;

import io.countergateway.config.RollupOptions;

import java.util.Arrays;

/**
 * The statements of one roll-up, for one dialect. Only counters with dirty slot rows are read, in batches in key
 * order; the SUM is computed in the database; a slot row is marked clean only if its count is still the one the
 * SUM used, so an increment that lands during a run leaves its row dirty for the next run.
 */
final class RollupSql {
  /** An integer key column only matches counter ids that are decimal numbers (others count as missing rows). */
  static final String INTEGER_ID = "-?[0-9]{1,18}";

  final boolean postgres;
  /** PostgreSQL: one statement per batch. Arguments: namespace, batch size, last id of the previous batch. */
  final String rollBatch;
  /** Records a complete run; arguments: name, run seconds, counters rolled. */
  final String recordRun;
  /** Seconds since the start of the last complete run of this roll-up, on any replica; argument: name. */
  final String lag;
  private final String table;
  private final RollupOptions rollup;
  private final boolean integerKey;

  private RollupSql(boolean postgres, String table, RollupOptions rollup, boolean integerKey) {
    this.postgres = postgres;
    this.table = table;
    this.rollup = rollup;
    this.integerKey = integerKey;
    rollBatch = postgres ? postgresBatch() : null;
    recordRun = postgres ? """
      INSERT INTO %1$s_rollups (name, last_started_at, last_finished_at, counters_rolled)
      VALUES ($1, now() - make_interval(secs => $2), now(), $3)
      ON CONFLICT (name) DO UPDATE SET last_started_at = excluded.last_started_at,
        last_finished_at = excluded.last_finished_at, counters_rolled = excluded.counters_rolled
      """.formatted(table) : """
      INSERT INTO %1$s_rollups (name, last_started_at, last_finished_at, counters_rolled)
      VALUES (?, NOW(3) - INTERVAL ? MICROSECOND, NOW(3), ?)
      ON DUPLICATE KEY UPDATE last_started_at = VALUES(last_started_at),
        last_finished_at = VALUES(last_finished_at), counters_rolled = VALUES(counters_rolled)
      """.formatted(table);
    lag = postgres
      ? "SELECT EXTRACT(EPOCH FROM now() - last_started_at)::float8 FROM %s_rollups WHERE name = $1".formatted(table)
      : "SELECT TIMESTAMPDIFF(MICROSECOND, last_started_at, NOW(3)) / 1e6 FROM %s_rollups WHERE name = ?".formatted(table);
  }

  static RollupSql postgres(String table, RollupOptions rollup, boolean integerKey) {
    return new RollupSql(true, table, rollup, integerKey);
  }

  static RollupSql mysql(String table, RollupOptions rollup, boolean integerKey) {
    return new RollupSql(false, table, rollup, integerKey);
  }

  /**
   * All data-modifying parts of one statement share its snapshot: {@code snap} is what the SUM adds up, and
   * {@code cleared} marks a row clean only if its current count is still the one in {@code snap} (a concurrent
   * flush changes the count, so under READ COMMITTED's re-check the row stays dirty). Result: ids in the batch,
   * rows updated, the batch's last id, up to five ids without a row in the application's table.
   */
  private String postgresBatch() {
    String key = integerKey
      ? "CASE WHEN s.record_id ~ '^%s$' THEN s.record_id::bigint END".formatted(INTEGER_ID) : "s.record_id";
    return """
      WITH ids AS (
        SELECT DISTINCT record_id FROM %1$s WHERE record_type = $1 AND dirty AND record_id > $3
        ORDER BY record_id LIMIT $2
      ), snap AS (
        SELECT c.record_id, c.slot, c.count FROM %1$s c JOIN ids USING (record_id) WHERE c.record_type = $1
      ), cleared AS (
        UPDATE %1$s c SET dirty = false FROM snap
        WHERE c.record_type = $1 AND c.record_id = snap.record_id AND c.slot = snap.slot AND c.count = snap.count
          AND c.dirty
        RETURNING 1
      ), s AS (
        SELECT record_id, SUM(count) AS total FROM snap GROUP BY record_id
      ), updated AS (
        UPDATE %2$s a SET %4$s = s.total FROM s WHERE a.%3$s = %5$s RETURNING a.%3$s::text AS record_id
      )
      SELECT (SELECT count(*) FROM ids), (SELECT count(*) FROM updated), (SELECT max(record_id) FROM ids),
        (SELECT array_agg(record_id) FROM (SELECT record_id FROM ids EXCEPT SELECT record_id FROM updated LIMIT 5) m)
      """.formatted(table, rollup.getTable(), rollup.getKeyColumn(), rollup.getValueColumn(), key);
  }

  // MySQL: one transaction per batch of several statements (below); the slot rows are locked, so the SUM and the
  // clean marks see the same counts. The IN lists are padded to the batch size, so each statement stays prepared.

  /** Arguments: namespace, last id of the previous batch, batch size. */
  String mysqlDirtyIds() {
    return "SELECT DISTINCT record_id FROM " + table + " WHERE record_type = ? AND dirty AND record_id > ? "
      + "ORDER BY record_id LIMIT ?";
  }

  /** Locks every slot row of the batch's counters, and (REPEATABLE READ next-key locks) the gaps for new slots. */
  String mysqlLock(int ids) {
    return "SELECT slot FROM " + table + " WHERE record_type = ? AND record_id IN (" + marks(ids) + ") "
      + "ORDER BY record_id, slot FOR UPDATE";
  }

  String mysqlExistingKeys(int ids) {
    return "SELECT " + rollup.getKeyColumn() + " FROM " + rollup.getTable() + " WHERE " + rollup.getKeyColumn()
      + " IN (" + marks(ids) + ")";
  }

  /** Arguments: namespace, the ids; then the ids again for the join (integer keys compare as integers). */
  String mysqlUpdate(int ids) {
    String key = integerKey ? "CAST(s.record_id AS SIGNED)" : "s.record_id";
    return "UPDATE " + rollup.getTable() + " a JOIN (SELECT record_id, SUM(count) AS total FROM " + table
      + " WHERE record_type = ? AND record_id IN (" + marks(ids) + ") GROUP BY record_id) s ON a."
      + rollup.getKeyColumn() + " = " + key + " SET a." + rollup.getValueColumn() + " = s.total";
  }

  /** {@code written_at = written_at}: marking a row clean is not a write, compaction must still see it idle. */
  String mysqlClear(int ids) {
    return "UPDATE " + table + " SET dirty = FALSE, written_at = written_at WHERE record_type = ? AND record_id IN ("
      + marks(ids) + ")";
  }

  boolean integerKeys() {
    return integerKey;
  }

  private static String marks(int n) {
    String[] marks = new String[n];
    Arrays.fill(marks, "?");
    return String.join(", ", marks);
  }
}
