package io.countergateway.store;

import io.countergateway.batch.FlushRow;
import io.vertx.sqlclient.Tuple;

import java.util.List;

/** Every PostgreSQL statement the gateway issues, for a configurable table name. */
final class PostgresSql {
  /**
   * What a slot row that exists already gets: the delta, and the roll-up and compaction bookkeeping (schema step 002:
   * changed since its last roll-up, written now). A row found dirty stays dirty, so the update remains HOT.
   */
  static final String UPSERT_SET = "count = c.count + excluded.count, dirty = true, written_at = now()";

  final String upsertFlush;
  final String sumByIds;
  final String reset;
  final String pruneFlushIds;
  final String registerSource;
  final String raiseFence;
  final String deleteFlushIds;
  final boolean exactlyOnce;
  /**
   * The increments of one request that carries an idempotency key, committed in one statement with the key's row
   * (the key plays the flush id's part): a key already there inserts nothing and so writes nothing.
   */
  final String upsertKeyed;
  final String readKey;
  /** Deletes up to $2 keys older than $1 seconds. */
  final String expireKeys;

  PostgresSql(String table, boolean exactlyOnce) {
    // One round trip whatever the batch size: the rows travel as four arrays. The flush id insert and the
    // upsert are one statement, so they commit together; a repeated id inserts nothing and so writes nothing.
    // With flush ids, the statement also takes its source's row shared and writes only at or above the fence (see
    // FlushFence). A source without a row, or closed as dead, fails the statement — with an unknown setting's error
    // (42704), an outage to the writer, never a refused value — rather than let it pass for already committed.
    upsertFlush = exactlyOnce ? """
      WITH s AS (SELECT fence FROM %1$s_flush_sources WHERE source = $6 FOR SHARE),
      f AS (INSERT INTO %1$s_flushes (flush_id)
        SELECT $5 WHERE (SELECT CASE WHEN fence IS NULL OR fence = %3$d
            THEN current_setting('counter_gateway.flush_source_missing_or_closed')::bigint ELSE fence END
          FROM (SELECT (SELECT fence FROM s) AS fence) AS current) <= $7
        ON CONFLICT DO NOTHING RETURNING 1)
      INSERT INTO %1$s AS c (record_type, record_id, slot, count)
      SELECT u.t, u.i, u.s, u.n FROM UNNEST($1::text[], $2::text[], $3::int2[], $4::int8[]) AS u(t, i, s, n)
      WHERE EXISTS (SELECT 1 FROM f)
      ON CONFLICT (record_type, record_id, slot) DO UPDATE SET %2$s
      """.formatted(table, UPSERT_SET, FlushFence.CLOSED) : """
      INSERT INTO %1$s AS c (record_type, record_id, slot, count)
      SELECT u.t, u.i, u.s, u.n FROM UNNEST($1::text[], $2::text[], $3::int2[], $4::int8[]) AS u(t, i, s, n)
      ON CONFLICT (record_type, record_id, slot) DO UPDATE SET %2$s
      """.formatted(table, UPSERT_SET);
    this.exactlyOnce = exactlyOnce;
    upsertKeyed = """
      WITH k AS (INSERT INTO %1$s_idempotency (idem_key, fingerprint, status, answer) VALUES ($5, $6, $7, $8)
        ON CONFLICT DO NOTHING RETURNING 1)
      INSERT INTO %1$s AS c (record_type, record_id, slot, count)
      SELECT u.t, u.i, u.s, u.n FROM UNNEST($1::text[], $2::text[], $3::int2[], $4::int8[]) AS u(t, i, s, n)
      WHERE EXISTS (SELECT 1 FROM k)
      ON CONFLICT (record_type, record_id, slot) DO UPDATE SET %2$s
      """.formatted(table, UPSERT_SET);
    readKey = "SELECT fingerprint, status, answer FROM %s_idempotency WHERE idem_key = $1".formatted(table);
    expireKeys = """
      DELETE FROM %1$s_idempotency WHERE idem_key IN (SELECT idem_key FROM %1$s_idempotency
        WHERE created_at < now() - make_interval(secs => $1::int) LIMIT $2)
      """.formatted(table);
    sumByIds = "SELECT record_id, SUM(count) FROM %s WHERE record_type = $1 AND record_id = ANY($2) GROUP BY record_id"
      .formatted(table);
    reset = "DELETE FROM %s WHERE record_type = $1 AND record_id = $2".formatted(table);
    registerSource = "INSERT INTO %s_flush_sources (source, fence) VALUES ($1, 0) ON CONFLICT DO NOTHING".formatted(table);
    // first statement of the fence transaction: it waits for every flush statement holding the row shared
    raiseFence = "UPDATE %s_flush_sources SET fence = GREATEST(fence, $2), heartbeat_at = now() WHERE source = $1 AND fence < $3"
      .formatted(table);
    deleteFlushIds = "DELETE FROM %s_flushes WHERE flush_id = ANY($1)".formatted(table);
    // Sources silent for the retention are closed (their late flushes fail, see FlushFence) and lose their ids; ids
    // of no registered source (written by a gateway of the previous version) go by age, as they always did.
    pruneFlushIds = """
      WITH closed AS (
        UPDATE %1$s_flush_sources SET fence = $2 WHERE heartbeat_at < now() - make_interval(secs => $1::int) AND fence < $2
        RETURNING source
      ), dead AS (
        DELETE FROM %1$s_flushes WHERE split_part(flush_id, ':', 1) IN (
          SELECT source FROM closed UNION ALL SELECT source FROM %1$s_flush_sources WHERE fence = $2)
        RETURNING 1
      ), legacy AS (
        DELETE FROM %1$s_flushes f WHERE committed_at < now() - make_interval(secs => $1::int)
          AND NOT EXISTS (SELECT 1 FROM %1$s_flush_sources s WHERE s.source = split_part(f.flush_id, ':', 1))
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM dead) + (SELECT count(*) FROM legacy)
      """.formatted(table);
  }

  /** The first four arguments of the UNNEST upserts: the rows as arrays of types, ids, slots and deltas. */
  static Tuple rowArrays(List<FlushRow> rows) {
    int n = rows.size();
    String[] types = new String[n];
    String[] ids = new String[n];
    Short[] slots = new Short[n];
    Long[] deltas = new Long[n];
    for (int i = 0; i < n; i++) {
      FlushRow row = rows.get(i);
      types[i] = row.type();
      ids[i] = row.id();
      slots[i] = row.slot();
      deltas[i] = row.delta();
    }
    return Tuple.of(types, ids, slots, deltas);
  }
}
