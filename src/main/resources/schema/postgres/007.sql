-- Unique visitors: HyperLogLog sketches per counter, bucket and slot, and the daily visitor salts.
-- A sketch row is slotted like the windows table's counts (one writer lane per slot), merged on read. The salt of a
-- UTC day (epoch day) is a random secret that keys the visitor hash; it is deleted 48 hours after its day began, after
-- which nothing can link a stored sketch to an IP address and User-Agent.
CREATE TABLE IF NOT EXISTS ${table}_uniques (
  record_type  VARCHAR(64)  NOT NULL,
  record_id    VARCHAR(255) NOT NULL,
  bucket_start BIGINT       NOT NULL,
  slot         SMALLINT     NOT NULL,
  sketch       BYTEA        NOT NULL,
  PRIMARY KEY (record_type, record_id, bucket_start, slot)
);
CREATE INDEX IF NOT EXISTS ${table}_uniques_by_bucket ON ${table}_uniques (record_type, bucket_start);
CREATE TABLE IF NOT EXISTS ${table}_visitor_salts (
  day        BIGINT      NOT NULL PRIMARY KEY,
  salt       BYTEA       NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
)
