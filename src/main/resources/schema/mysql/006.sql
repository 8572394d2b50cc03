-- Time-windowed counters: one row per counter, UTC bucket (minute, hour or day) and slot.
-- bucket_start is the bucket's start in seconds since the epoch: one integer on both dialects, free of time zones.
-- The primary key serves the range reads of one counter; the second index serves top-N over a range and the
-- retention job.
CREATE TABLE IF NOT EXISTS ${table}_windows (
  record_type  VARCHAR(64)  NOT NULL,
  record_id    VARCHAR(255) NOT NULL,
  bucket_start BIGINT       NOT NULL,
  slot         SMALLINT     NOT NULL,
  count        BIGINT       NOT NULL,
  PRIMARY KEY (record_type, record_id, bucket_start, slot),
  KEY ${table}_windows_by_bucket (record_type, bucket_start)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
