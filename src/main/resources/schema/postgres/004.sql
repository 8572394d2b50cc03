-- Flush sources: one row per coalescer and process run; its fence lets the ids of its settled flushes be deleted.
-- A flush of a source writes only while its sequence is at or above the fence (see write/FlushSources); the fence
-- is the maximum BIGINT once the source was closed as dead.
CREATE TABLE IF NOT EXISTS ${table}_flush_sources (
  source       VARCHAR(64) NOT NULL PRIMARY KEY,
  fence        BIGINT      NOT NULL,
  heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The flush-id table is a queue: ids inserted and deleted about a second apart, thousands a second. Vacuum it as
-- soon as a few thousand dead ids wait, at full speed, so its size stays at a minute of flushes or so.
ALTER TABLE ${table}_flushes SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
  autovacuum_vacuum_cost_delay = 0)
