-- Roll-up and compaction bookkeeping: a dirty mark and the last write time on every slot row.
-- dirty: changed since its counter was last rolled up; written_at: for compaction, which folds idle counters.
-- MySQL 8 has no ADD COLUMN IF NOT EXISTS: a statement that fails with "duplicate column/key name" (1060, 1061) or
-- "table exists" (1050) because an interrupted earlier run already applied it counts as applied.
-- Existing rows start dirty, so the first roll-up writes every counter once.
ALTER TABLE ${table} ADD COLUMN dirty BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE ${table} ADD COLUMN written_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3);
ALTER TABLE ${table} ADD KEY ${table}_dirty (record_type, dirty, record_id);
-- One row per roll-up: when its last complete run started and finished, read by every replica for the lag metric.
CREATE TABLE IF NOT EXISTS ${table}_rollups (
  name             VARCHAR(255) NOT NULL PRIMARY KEY,
  last_started_at  TIMESTAMP(3) NOT NULL,
  last_finished_at TIMESTAMP(3) NOT NULL,
  counters_rolled  BIGINT       NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
