-- Unique visitors: HyperLogLog sketches per counter, bucket and slot, and the daily visitor salts.
-- A sketch row is slotted like the windows table's counts (one writer lane per slot), merged on read. The salt of a
-- UTC day (epoch day) is a random secret that keys the visitor hash; it is deleted 48 hours after its day began, after
-- which nothing can link a stored sketch to an IP address and User-Agent.
CREATE TABLE IF NOT EXISTS ${table}_uniques (
  record_type  VARCHAR(64)  NOT NULL,
  record_id    VARCHAR(255) NOT NULL,
  bucket_start BIGINT       NOT NULL,
  slot         SMALLINT     NOT NULL,
  sketch       MEDIUMBLOB   NOT NULL,
  PRIMARY KEY (record_type, record_id, bucket_start, slot),
  KEY ${table}_uniques_by_bucket (record_type, bucket_start)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ${table}_visitor_salts (
  day        BIGINT       NOT NULL PRIMARY KEY,
  salt       VARBINARY(32) NOT NULL,
  created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB
