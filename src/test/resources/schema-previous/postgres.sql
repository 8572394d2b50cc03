-- Slotted counters (src/DESIGN.md §2). ${table} is replaced by database.table; statements are split on ';'.
CREATE TABLE IF NOT EXISTS ${table} (
  record_type VARCHAR(64)  NOT NULL,
  record_id   VARCHAR(255) NOT NULL,
  slot        SMALLINT     NOT NULL,
  count       BIGINT       NOT NULL,
  PRIMARY KEY (record_type, record_id, slot)
);
-- Committed flush ids: a retried flush whose id is here had committed already (exactly once).
CREATE TABLE IF NOT EXISTS ${table}_flushes (
  flush_id     VARCHAR(64) NOT NULL PRIMARY KEY,
  committed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS ${table}_flushes_committed_at ON ${table}_flushes (committed_at);

-- Replica lanes (scale-out): each coalescer of each replica leases one lane and writes only its lane's slots, so
-- concurrent writers never share a slot row; a lease not renewed by expires_at is free for the next replica.
CREATE TABLE IF NOT EXISTS ${table}_lanes (
  lane       SMALLINT    NOT NULL PRIMARY KEY,
  owner      VARCHAR(64) NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL
)
