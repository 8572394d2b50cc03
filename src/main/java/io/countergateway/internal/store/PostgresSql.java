package io.countergateway.internal.store;

import io.vertx.sqlclient.Tuple;

import java.util.List;

/** Every PostgreSQL statement the gateway issues, for a configurable table name. */
final class PostgresSql {
  /**
   * What a slot row that exists already gets: the delta, and the roll-up and compaction bookkeeping (schema step 002:
   * changed since its last roll-up, written now). A row found dirty stays dirty, so the update remains HOT.
   */
  static final String UPSERT_SET = "count = c.count + excluded.count, dirty = true, written_at = now()";
  /**
   * Whether a server of {@code database.hosts} refuses writes ({@link PrimaryTarget}): a standby in recovery. One
   * row; every column true means read-only for one reason.
   */
  static final String READ_ONLY_CHECK = "SELECT pg_is_in_recovery()";

  final String upsertFlush;
  /** The slot rows alone, no flush id: for increments that commit with a caller's transaction (see InTransactionWrites). */
  final String upsertPlain;
  final String upsertWindowedFlush;
  final String windowTotals;
  final String sumByIds;
  final String reset;
  final WindowStatements windows;
  final String pruneFlushIds;
  final String registerSource;
  final String raiseFence;
  final String deleteSettledIds;
  /** First in a void's and a closed source's transaction: the source's fence, the row held shared (see write/FlushSources). */
  final String lockSource;
  final String insertVoidedId;
  final String readVoided;
  final String committedIdsOfSource;
  final String deleteSource;
  final String deleteIdsOfSource;
  /**
   * The increments of one request that carries an idempotency key, committed in one statement with the key's row
   * (the key plays the flush id's part): a key already there inserts nothing and so writes nothing.
   */
  final String upsertKeyed;
  final String readKey;
  /** Deletes up to $2 keys older than $1 seconds. */
  final String expireKeys;

  PostgresSql(String table) {
    // One round trip whatever the batch size: the rows travel as four arrays. The flush id insert and the
    // upsert are one statement, so they commit together; a repeated id inserts nothing and so writes nothing.
    // The statement also takes its source's row shared and writes only at or above the fence (see
    // write/FlushSources). A source without a row, or closed as dead, fails the statement — with an unknown setting's error
    // (42704), an outage to the writer, never a refused value — rather than let it pass for already committed.
    String flushIdCtes = """
      WITH s AS (SELECT fence FROM %1$s_flush_sources WHERE source = $%2$d FOR SHARE),
      f AS (INSERT INTO %1$s_flushes (flush_id)
        SELECT $%3$d WHERE (SELECT CASE WHEN fence IS NULL OR fence = %5$d
            THEN current_setting('counter_gateway.flush_source_missing_or_closed')::bigint ELSE fence END
          FROM (SELECT (SELECT fence FROM s) AS fence) AS current) <= $%4$d
        ON CONFLICT DO NOTHING RETURNING 1)""";
    String guard = "WHERE EXISTS (SELECT 1 FROM f)";
    String plainUpsert = """
      INSERT INTO %1$s AS c (record_type, record_id, slot, count)
      SELECT u.t, u.i, u.s, u.n FROM UNNEST($1::text[], $2::text[], $3::int2[], $4::int8[]) AS u(t, i, s, n)
      %3$s
      ON CONFLICT (record_type, record_id, slot) DO UPDATE SET %2$s""".formatted(table, UPSERT_SET, guard);
    upsertFlush = flushIdCtes.formatted(table, 6, 5, 7, FlushSourceRow.CLOSED) + "\n" + plainUpsert;
    upsertPlain = plainUpsert.replace(guard, "");
    // A flush holding windowed counters: both tables in ONE statement, the bucket rows as five more arrays. The last
    // SELECT reads the flush-id insert, so an id already there (0) tells the retry it had committed.
    String windowedUpserts = """
      w AS (INSERT INTO %1$s_windows AS c (record_type, record_id, bucket_start, slot, count)
        SELECT u.t, u.i, u.b, u.s, u.n
        FROM UNNEST($5::text[], $6::text[], $7::int8[], $8::int2[], $9::int8[]) AS u(t, i, b, s, n)
        %2$s
        ON CONFLICT (record_type, record_id, bucket_start, slot) DO UPDATE SET count = c.count + excluded.count
        RETURNING 1),
      p AS (%3$s
        RETURNING 1)
      SELECT %4$s, (SELECT count(*) FROM w) + (SELECT count(*) FROM p)
      """.formatted(table, guard, plainUpsert.strip(), "(SELECT count(*) FROM f)");
    upsertWindowedFlush = flushIdCtes.formatted(table, 11, 10, 12, FlushSourceRow.CLOSED) + ",\n" + windowedUpserts;
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
    String resetWindows = "DELETE FROM %s_windows WHERE record_type = $1 AND record_id = $2".formatted(table);
    windowTotals = """
      SELECT record_id, SUM(count) FROM %s_windows
      WHERE record_type = $1 AND record_id = ANY($2) AND bucket_start >= $3 AND bucket_start < $4 GROUP BY record_id
      """.formatted(table);
    String windowBuckets = """
      SELECT bucket_start, SUM(count) FROM %s_windows
      WHERE record_type = $1 AND record_id = $2 AND bucket_start >= $3 AND bucket_start < $4
      GROUP BY bucket_start HAVING SUM(count) <> 0 ORDER BY bucket_start
      """.formatted(table);
    String windowTop = """
      SELECT record_id, SUM(count) AS total FROM %s_windows
      WHERE record_type = $1 AND bucket_start >= $2 AND bucket_start < $3
      GROUP BY record_id ORDER BY total DESC, record_id LIMIT $4
      """.formatted(table);
    // small batches by physical row id: each DELETE holds few row locks and a short transaction
    String expireBuckets = """
      DELETE FROM %1$s_windows WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM %1$s_windows WHERE record_type = $1 AND bucket_start < $2 LIMIT $3))
      """.formatted(table);
    String oldestBucket = "SELECT MIN(bucket_start) FROM %s_windows WHERE record_type = $1".formatted(table);
    // a plain counter's value is the SUM over its slots: ranked as the windowed top is
    String plainTop = """
      SELECT record_id, SUM(count) AS total FROM %s WHERE record_type = $1
      GROUP BY record_id ORDER BY total DESC, record_id LIMIT $2
      """.formatted(table);
    windows = new WindowStatements(windowBuckets, windowTop, expireBuckets, oldestBucket, resetWindows, plainTop);
    registerSource = "INSERT INTO %s_flush_sources (source, fence) VALUES ($1, 0) ON CONFLICT DO NOTHING".formatted(table);
    // the row held for this statement only: every flush statement of the source takes it shared and waits while it is
    // held, so the settled ids go by statements of their own (deleteSettledIds), tens of ms on a grown id table
    raiseFence = """
      UPDATE %s_flush_sources SET fence = GREATEST(fence, $2), heartbeat_at = now() WHERE source = $1 AND fence < $3
      """.formatted(table);
    deleteSettledIds = "DELETE FROM %s_flushes WHERE flush_id = ANY($1)".formatted(table);
    lockSource = "SELECT fence FROM %s_flush_sources WHERE source = $1 FOR SHARE".formatted(table);
    // a flush the database refused a value of: its id inserted as voided, so a late copy of an earlier attempt finds
    // it and writes nothing; if the id is there already, the next statement (a new snapshot, READ COMMITTED) reads
    // whose it is: ours from an earlier void attempt, or a late copy's that committed the flush whole
    insertVoidedId = "INSERT INTO %s_flushes (flush_id, voided) VALUES ($1, true) ON CONFLICT DO NOTHING RETURNING 1"
      .formatted(table);
    readVoided = "SELECT voided FROM %s_flushes WHERE flush_id = $1".formatted(table);
    committedIdsOfSource = "SELECT flush_id FROM %s_flushes WHERE split_part(flush_id, ':', 1) = $1 AND NOT voided"
      .formatted(table);
    // the row first: its lock waits for every flush statement holding it shared, and a later one finds no row and fails
    deleteSource = "DELETE FROM %s_flush_sources WHERE source = $1".formatted(table);
    deleteIdsOfSource = "DELETE FROM %s_flushes WHERE split_part(flush_id, ':', 1) = $1".formatted(table);
    // Sources silent for the retention are closed (their late flushes fail, see write/FlushSources) and keep their ids, for
    // their gateway to resolve its flushes by; closed for the retention (or closed by a gateway of the previous
    // version, which left no closed_at and deleted the ids itself) they go with their ids. Ids of no registered source
    // (written by a gateway of the previous version) go by age.
    pruneFlushIds = """
      WITH closed AS (
        UPDATE %1$s_flush_sources SET fence = $2, closed_at = now()
        WHERE heartbeat_at < now() - make_interval(secs => $1::int) AND fence < $2
        RETURNING source
      ), gone AS (
        DELETE FROM %1$s_flush_sources
        WHERE fence = $2 AND COALESCE(closed_at, heartbeat_at) < now() - make_interval(secs => $1::int)
        RETURNING source
      ), dead AS (
        DELETE FROM %1$s_flushes WHERE split_part(flush_id, ':', 1) IN (SELECT source FROM gone)
        RETURNING 1
      ), legacy AS (
        DELETE FROM %1$s_flushes f WHERE committed_at < now() - make_interval(secs => $1::int)
          AND NOT EXISTS (SELECT 1 FROM %1$s_flush_sources s WHERE s.source = split_part(f.flush_id, ':', 1))
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM dead) + (SELECT count(*) FROM legacy) + 0 * (SELECT count(*) FROM closed)
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

  /** The nine array arguments of {@link #upsertWindowedFlush}: the plain rows' four, then the bucket rows' five. */
  static Tuple plainAndWindowedArrays(List<FlushRow> rows) {
    List<FlushRow> plain = rows.stream().filter(row -> !row.windowed()).toList();
    List<FlushRow> windowed = rows.stream().filter(FlushRow::windowed).toList();
    Tuple tuple = rowArrays(plain);
    int n = windowed.size();
    String[] types = new String[n];
    String[] ids = new String[n];
    Long[] buckets = new Long[n];
    Short[] slots = new Short[n];
    Long[] deltas = new Long[n];
    for (int i = 0; i < n; i++) {
      FlushRow row = windowed.get(i);
      types[i] = row.type();
      ids[i] = row.id();
      buckets[i] = row.bucket();
      slots[i] = row.slot();
      deltas[i] = row.delta();
    }
    return tuple.addArrayOfString(types).addArrayOfString(ids).addArrayOfLong(buckets).addArrayOfShort(slots)
      .addArrayOfLong(deltas);
  }
}
