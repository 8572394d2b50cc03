-- Flush sources: one row per coalescer and process run; its fence lets the ids of its settled flushes be deleted.
-- A flush of a source writes only while its sequence is at or above the fence (see write/FlushSources); the fence
-- is the maximum BIGINT once the source was closed as dead.
CREATE TABLE IF NOT EXISTS ${table}_flush_sources (
  source       VARCHAR(64)  NOT NULL PRIMARY KEY,
  fence        BIGINT       NOT NULL,
  heartbeat_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB DEFAULT CHARSET=ascii
