package io.countergateway.internal.rollup;

/**
 * Compaction's statements for one dialect. Counters are visited in key order, a window at a time; a counter with
 * several slot rows none of which was written for {@code compaction.idleAfter} is folded into slot 0. The folded row keeps
 * the last write time (it stays idle) and the dirty mark (a pending roll-up is not lost).
 */
final class CompactionSql {
  final boolean postgres;
  /**
   * PostgreSQL, one statement per window. Arguments: last type and id of the previous window, idle seconds, window
   * size. The DELETE re-checks each row's write time when a flush changed it meanwhile (READ COMMITTED), so a row
   * written during the fold is left alone, and a flush waiting on a deleted row inserts it anew: nothing is lost.
   * Result: counters in the window, the window's last type and id, counters folded, rows deleted.
   */
  final String foldWindow;
  /** MySQL: the next window of counters: type, id, slot rows, whether idle. */
  final String window;
  /** MySQL: locks a counter's rows (and, by next-key locks, the gaps new slots would go to); whether each is idle. */
  final String lockCounter;
  final String foldIntoSlotZero;
  final String deleteOtherSlots;

  private CompactionSql(boolean postgres, String table) {
    this.postgres = postgres;
    foldWindow = postgres ? """
      WITH w AS (
        SELECT record_type, record_id, count(*) AS slots, max(written_at) AS last_written FROM %1$s
        WHERE (record_type, record_id) > ($1, $2)
        GROUP BY record_type, record_id ORDER BY record_type, record_id LIMIT $4
      ), idle AS (
        SELECT record_type, record_id FROM w WHERE slots > 1 AND last_written < now() - make_interval(secs => $3)
      ), d AS (
        DELETE FROM %1$s c USING idle
        WHERE c.record_type = idle.record_type AND c.record_id = idle.record_id
          AND c.written_at < now() - make_interval(secs => $3)
        RETURNING c.record_type, c.record_id, c.count, c.dirty, c.written_at
      ), f AS (
        INSERT INTO %1$s AS c (record_type, record_id, slot, count, dirty, written_at)
        SELECT record_type, record_id, 0, SUM(count), bool_or(dirty), max(written_at) FROM d GROUP BY record_type, record_id
        ON CONFLICT (record_type, record_id, slot) DO UPDATE SET count = c.count + excluded.count,
          dirty = c.dirty OR excluded.dirty, written_at = greatest(c.written_at, excluded.written_at)
        RETURNING 1
      ), last AS (
        SELECT record_type, record_id FROM w ORDER BY record_type DESC, record_id DESC LIMIT 1
      )
      SELECT (SELECT count(*) FROM w), (SELECT record_type FROM last), (SELECT record_id FROM last),
        (SELECT count(*) FROM f), (SELECT count(*) FROM d)
      """.formatted(table) : null;
    window = """
      SELECT record_type, record_id, COUNT(*), MAX(written_at) < NOW(3) - INTERVAL ? SECOND FROM %1$s
      WHERE record_type > ? OR (record_type = ? AND record_id > ?)
      GROUP BY record_type, record_id ORDER BY record_type, record_id LIMIT ?
      """.formatted(table);
    lockCounter = "SELECT written_at < NOW(3) - INTERVAL ? SECOND FROM %s WHERE record_type = ? AND record_id = ? FOR UPDATE"
      .formatted(table);
    // slot 0 takes the whole total (not added to it: its own count is part of the SUM), then the others go
    foldIntoSlotZero = """
      INSERT INTO %1$s (record_type, record_id, slot, count, dirty, written_at)
      SELECT record_type, record_id, 0, SUM(count), MAX(dirty), MAX(written_at) FROM %1$s
      WHERE record_type = ? AND record_id = ? GROUP BY record_type, record_id
      ON DUPLICATE KEY UPDATE count = VALUES(count), dirty = VALUES(dirty), written_at = VALUES(written_at)
      """.formatted(table);
    deleteOtherSlots = "DELETE FROM %s WHERE record_type = ? AND record_id = ? AND slot <> 0".formatted(table);
  }

  static CompactionSql forDialect(boolean postgres, String table) {
    return new CompactionSql(postgres, table);
  }
}
