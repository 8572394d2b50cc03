-- Idempotency keys: each committed with the increments it guards, in the same statement.
-- A repeat of the key finds its row and gets the stored answer; the expiry job deletes rows older than
-- idempotency.retentionSeconds.
CREATE TABLE IF NOT EXISTS ${table}_idempotency (
  idem_key    VARCHAR(255) NOT NULL PRIMARY KEY,
  fingerprint VARCHAR(64)  NOT NULL,
  status      SMALLINT     NOT NULL,
  answer      TEXT         NOT NULL,
  created_at  TIMESTAMPTZ  NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS ${table}_idempotency_created_at ON ${table}_idempotency (created_at)
