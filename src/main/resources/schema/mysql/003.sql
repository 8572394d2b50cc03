-- Idempotency keys: each committed with the increments it guards, in the same transaction.
-- A repeat of the key finds its row and gets the stored answer; the expiry job deletes rows older than
-- idempotency.retentionSeconds.
CREATE TABLE IF NOT EXISTS ${table}_idempotency (
  idem_key    VARCHAR(255) NOT NULL PRIMARY KEY,
  fingerprint VARCHAR(64)  NOT NULL,
  status      SMALLINT     NOT NULL,
  answer      TEXT         NOT NULL,
  created_at  TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY ${table}_idempotency_created_at (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
