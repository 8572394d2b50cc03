-- A flush in one call (src/DESIGN.md §4): the source's fence, the flush id and the upserts in one round trip.
-- Sent as statements one after another (BEGIN, the fence row, the id, the upserts, COMMIT) a flush takes five round
-- trips, each paid again when the database is a network hop away. The rows come as JSON arrays,
-- [record_type, record_id, slot, delta] (plain) and [record_type, record_id, bucket_start, slot, delta] (windowed),
-- upserted in the order given, which is the flush's lock order. The outcomes other than committed are errors the
-- store reads: 1062 on the id (an earlier attempt committed), SQLSTATE 45000 'flush_behind_fence' (a late copy of a
-- flush settled long ago) and 'flush_source_missing_or_closed'; any other failure rolls back and is raised as it was.
-- The fence 9223372036854775807 is FlushSourceRow.CLOSED (Long.MAX_VALUE). JSON_TABLE's text columns are wider than
-- the table's, so an id too long is refused by the table (1406, a verdict on the data) rather than cut. Every text
-- parameter and column names its character set: one taken from the database's default (latin1 on many servers)
-- would refuse an emoji in a record id, or turn a CJK character into '?'. It runs with the caller's rights (SQL
-- SECURITY INVOKER): with its creator's, a procedure an administrator created would write through read_only on a
-- server that a failover has just made a replica.
DROP PROCEDURE IF EXISTS ${table}_write_flush;
DELIMITER //
CREATE PROCEDURE ${table}_write_flush(IN the_id VARCHAR(64) CHARACTER SET ascii,
                                      IN the_source VARCHAR(64) CHARACTER SET ascii, IN the_sequence BIGINT,
                                      IN plain_rows LONGTEXT CHARACTER SET utf8mb4,
                                      IN window_rows LONGTEXT CHARACTER SET utf8mb4)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  DECLARE the_fence BIGINT DEFAULT NULL;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SELECT fence INTO the_fence FROM ${table}_flush_sources WHERE source = the_source LOCK IN SHARE MODE;
  IF the_fence IS NULL OR the_fence = 9223372036854775807 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'flush_source_missing_or_closed';
  END IF;
  IF the_fence > the_sequence THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'flush_behind_fence';
  END IF;
  INSERT INTO ${table}_flushes (flush_id) VALUES (the_id);
  INSERT INTO ${table} (record_type, record_id, slot, count)
    SELECT r.t, r.i, r.s, r.n FROM JSON_TABLE(plain_rows, '$[*]' COLUMNS (o FOR ORDINALITY,
      t VARCHAR(1024) CHARACTER SET utf8mb4 PATH '$[0]' ERROR ON ERROR,
      i VARCHAR(1024) CHARACTER SET utf8mb4 PATH '$[1]' ERROR ON ERROR,
      s SMALLINT PATH '$[2]' ERROR ON ERROR, n BIGINT PATH '$[3]' ERROR ON ERROR)) r ORDER BY r.o
    ON DUPLICATE KEY UPDATE count = count + VALUES(count), dirty = TRUE, written_at = CURRENT_TIMESTAMP(3);
  INSERT INTO ${table}_windows (record_type, record_id, bucket_start, slot, count)
    SELECT r.t, r.i, r.b, r.s, r.n FROM JSON_TABLE(window_rows, '$[*]' COLUMNS (o FOR ORDINALITY,
      t VARCHAR(1024) CHARACTER SET utf8mb4 PATH '$[0]' ERROR ON ERROR,
      i VARCHAR(1024) CHARACTER SET utf8mb4 PATH '$[1]' ERROR ON ERROR,
      b BIGINT PATH '$[2]' ERROR ON ERROR, s SMALLINT PATH '$[3]' ERROR ON ERROR, n BIGINT PATH '$[4]' ERROR ON ERROR)) r
    ORDER BY r.o
    ON DUPLICATE KEY UPDATE count = count + VALUES(count);
  COMMIT;
END//
DELIMITER ;
