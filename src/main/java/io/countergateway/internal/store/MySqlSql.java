package io.countergateway.internal.store;

import io.vertx.core.json.JsonArray;

import java.util.Arrays;
import java.util.List;

/** Every MySQL/MariaDB statement the gateway issues, for a configurable table name. */
final class MySqlSql {
  /** Multi-row statement sizes we prepare; a read's ids and a keyed request's rows are padded up to the next size. */
  static final int[] UPSERT_SIZES = {1, 4, 16, 64, 256, 1024};

  /** What a slot row that exists already gets: the delta, and the roll-up and compaction bookkeeping (step 002). */
  static final String UPSERT_SET = "count = count + VALUES(count), dirty = TRUE, written_at = CURRENT_TIMESTAMP(3)";
  /**
   * Whether a server of {@code database.hosts} refuses writes ({@link PrimaryTarget}): {@code read_only}, how a
   * replica is marked and how a switchover demotes the old primary, or {@code innodb_read_only}, a server started
   * unable to write any InnoDB table, whatever its {@code read_only} says. Both variables exist on MariaDB and MySQL.
   */
  static final String READ_ONLY_CHECK = "SELECT @@global.read_only, @@global.innodb_read_only";
  /** The global rights of the session's own account that let it write through {@code read_only}. */
  static final String READ_ONLY_BYPASS = "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES "
    + "WHERE GRANTEE = CONCAT('''', REPLACE(CURRENT_USER(), '@', '''@'''), '''') "
    + "AND PRIVILEGE_TYPE IN ('SUPER', 'READ_ONLY ADMIN')";

  /** What the flush procedure signals for a flush below its source's fence (schema step 009). */
  static final String BEHIND_FENCE = "flush_behind_fence";
  /** What the flush procedure signals for a source closed by the prune, or with no row. */
  static final String SOURCE_MISSING_OR_CLOSED = "flush_source_missing_or_closed";

  /** One flush in one call: its id, source, sequence, plain and window rows ({@link #plainRows}, {@link #windowRows}). */
  final String writeFlush;
  final String reset;
  final WindowStatements windows;
  /** Ids of no registered source (a gateway of the previous version), by age. */
  final String pruneFlushIds;
  /** First in a void's and a closed source's transaction: the source's fence, held shared (see write/FlushSources). */
  final String lockSource;
  final String registerSource;
  final String raiseFence;
  final String closeDeadSources;
  final String deleteIdsOfGoneSources;
  final String deleteGoneSources;
  /** A flush the database refused a value of: its id, voided, so a late copy of an earlier attempt writes nothing. */
  final String insertVoidedId;
  /** A locking read: the latest committed row, whatever the transaction's snapshot. */
  final String readVoided;
  final String committedIdsOfSource;
  final String deleteSource;
  final String deleteIdsOfSource;
  /** The row of an idempotency key, first in the transaction of the increments it guards (see {@link KeyedWrites}). */
  final String insertKey;
  final String readKey;
  /** Deletes up to ? keys older than ? seconds. */
  final String expireKeys;
  private final String table;

  MySqlSql(String table) {
    this.table = table;
    writeFlush = "CALL %s_write_flush(?, ?, ?, ?, ?)".formatted(table);
    reset = "DELETE FROM %s WHERE record_type = ? AND record_id = ?".formatted(table);
    String resetWindows = "DELETE FROM %s_windows WHERE record_type = ? AND record_id = ?".formatted(table);
    String windowBuckets = ("SELECT bucket_start, SUM(count) FROM %s_windows WHERE record_type = ? AND record_id = ? "
      + "AND bucket_start >= ? AND bucket_start < ? GROUP BY bucket_start HAVING SUM(count) <> 0 ORDER BY bucket_start")
      .formatted(table);
    String windowTop = ("SELECT record_id, SUM(count) AS total FROM %s_windows WHERE record_type = ? "
      + "AND bucket_start >= ? AND bucket_start < ? GROUP BY record_id ORDER BY total DESC, record_id LIMIT ?").formatted(table);
    // small batches: each DELETE holds few row locks and a short transaction
    String expireBuckets = "DELETE FROM %s_windows WHERE record_type = ? AND bucket_start < ? LIMIT ?".formatted(table);
    String oldestBucket = "SELECT MIN(bucket_start) FROM %s_windows WHERE record_type = ?".formatted(table);
    // a plain counter's value is the SUM over its slots: ranked as the windowed top is
    String plainTop = ("SELECT record_id, SUM(count) AS total FROM %s WHERE record_type = ? "
      + "GROUP BY record_id ORDER BY total DESC, record_id LIMIT ?").formatted(table);
    windows = new WindowStatements(windowBuckets, windowTop, expireBuckets, oldestBucket, resetWindows, plainTop);
    lockSource = "SELECT fence FROM %s_flush_sources WHERE source = ? LOCK IN SHARE MODE".formatted(table);
    registerSource = "INSERT IGNORE INTO %s_flush_sources (source, fence) VALUES (?, 0)".formatted(table);
    raiseFence = "UPDATE %s_flush_sources SET fence = GREATEST(fence, ?), heartbeat_at = CURRENT_TIMESTAMP(3) "
      .formatted(table) + "WHERE source = ? AND fence < ?";
    // Closed sources keep their ids for their gateway to resolve its flushes by (see write/FlushSources); closed for the
    // retention (or closed by a gateway of the previous version, which left no closed_at) they go with their ids.
    closeDeadSources = ("UPDATE %s_flush_sources SET fence = ?, closed_at = NOW(3) WHERE heartbeat_at < NOW(3) - INTERVAL ? "
      + "SECOND AND fence < ?").formatted(table);
    deleteIdsOfGoneSources = ("DELETE f FROM %1$s_flushes f JOIN %1$s_flush_sources s "
      + "ON s.source = SUBSTRING_INDEX(f.flush_id, ':', 1) WHERE s.fence = ? "
      + "AND COALESCE(s.closed_at, s.heartbeat_at) < NOW(3) - INTERVAL ? SECOND").formatted(table);
    deleteGoneSources = ("DELETE FROM %s_flush_sources WHERE fence = ? "
      + "AND COALESCE(closed_at, heartbeat_at) < NOW(3) - INTERVAL ? SECOND").formatted(table);
    insertVoidedId = "INSERT INTO %s_flushes (flush_id, voided) VALUES (?, TRUE)".formatted(table);
    readVoided = "SELECT voided FROM %s_flushes WHERE flush_id = ? LOCK IN SHARE MODE".formatted(table);
    // a prefix of the primary key: a range read, so no other writer's id is locked or scanned
    committedIdsOfSource = "SELECT flush_id FROM %s_flushes WHERE flush_id LIKE CONCAT(?, ':%%') AND NOT voided"
      .formatted(table);
    // the row first: its lock waits for every flush transaction holding it shared; a later one finds no row and fails
    deleteSource = "DELETE FROM %s_flush_sources WHERE source = ?".formatted(table);
    deleteIdsOfSource = "DELETE FROM %s_flushes WHERE flush_id LIKE CONCAT(?, ':%%')".formatted(table);
    pruneFlushIds = ("DELETE FROM %1$s_flushes WHERE committed_at < NOW(3) - INTERVAL ? SECOND AND NOT EXISTS "
      + "(SELECT 1 FROM %1$s_flush_sources s WHERE s.source = SUBSTRING_INDEX(flush_id, ':', 1))").formatted(table);
    insertKey = "INSERT INTO %s_idempotency (idem_key, fingerprint, status, answer) VALUES (?, ?, ?, ?)".formatted(table);
    readKey = "SELECT fingerprint, status, answer FROM %s_idempotency WHERE idem_key = ?".formatted(table);
    expireKeys = "DELETE FROM %s_idempotency WHERE created_at < NOW(3) - INTERVAL ? SECOND LIMIT ?".formatted(table);
  }

  /**
   * The flush's plain rows as the procedure reads them, in the flush's order: {@code [[type, id, slot, delta], …]}.
   */
  static String plainRows(List<FlushRow> rows) {
    JsonArray json = new JsonArray();
    for (FlushRow row : rows) {
      if (!row.windowed()) {
        json.add(new JsonArray().add(row.type()).add(row.id()).add(row.slot()).add(row.delta()));
      }
    }
    return json.encode();
  }

  /** The flush's bucket rows, in its order: {@code [[type, id, bucket_start, slot, delta], …]}. */
  static String windowRows(List<FlushRow> rows) {
    JsonArray json = new JsonArray();
    for (FlushRow row : rows) {
      if (row.windowed()) {
        json.add(new JsonArray().add(row.type()).add(row.id()).add(row.bucket()).add(row.slot()).add(row.delta()));
      }
    }
    return json.encode();
  }

  /** MariaDB has no {@code AS new} row alias, so the portable VALUES() form it is. */
  String upsert(int rows) {
    String[] tuples = new String[rows];
    Arrays.fill(tuples, "(?, ?, ?, ?)");
    return "INSERT INTO " + table + " (record_type, record_id, slot, count) VALUES " + String.join(", ", tuples)
      + " ON DUPLICATE KEY UPDATE " + UPSERT_SET;
  }

  String windowTotals(int ids) {
    String[] marks = new String[ids];
    Arrays.fill(marks, "?");
    return "SELECT record_id, SUM(count) FROM " + table + "_windows WHERE record_type = ? AND record_id IN ("
      + String.join(", ", marks) + ") AND bucket_start >= ? AND bucket_start < ? GROUP BY record_id";
  }

  String deleteFlushIds(int ids) {
    String[] marks = new String[ids];
    Arrays.fill(marks, "?");
    return "DELETE FROM " + table + "_flushes WHERE flush_id IN (" + String.join(", ", marks) + ")";
  }

  String sumByIds(int ids) {
    String[] marks = new String[ids];
    Arrays.fill(marks, "?");
    return "SELECT record_id, SUM(count) FROM " + table + " WHERE record_type = ? AND record_id IN ("
      + String.join(", ", marks) + ") GROUP BY record_id";
  }
}
