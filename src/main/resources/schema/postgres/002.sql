-- Roll-up and compaction bookkeeping: a dirty mark and the last write time on every slot row.
-- dirty: changed since its counter was last rolled up; written_at: for compaction, which folds idle counters.
-- Both columns have constant defaults, so adding them to a large table rewrites nothing (PostgreSQL 11+); existing
-- rows start dirty, so the first roll-up writes every counter once.
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS dirty BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS written_at TIMESTAMPTZ NOT NULL DEFAULT now();
-- Only the rows still to roll up are indexed; a flush that finds its row already dirty stays a HOT update.
CREATE INDEX IF NOT EXISTS ${table}_dirty ON ${table} (record_type, record_id) WHERE dirty;
-- One row per roll-up: when its last complete run started and finished, read by every replica for the lag metric.
CREATE TABLE IF NOT EXISTS ${table}_rollups (
  name             VARCHAR(255) NOT NULL PRIMARY KEY,
  last_started_at  TIMESTAMPTZ  NOT NULL,
  last_finished_at TIMESTAMPTZ  NOT NULL,
  counters_rolled  BIGINT       NOT NULL
)
