-- The database's identity (src/DESIGN.md §4 "Journal"): one row with an id made at random once, with the schema.
-- The journal records it beside what it holds, and a start whose database keeps another id (a switch of
-- database.kind, host, port or name; a database made anew) is refused while the journal holds work written for the
-- first. A row of the database, not the server's own identity: it follows the data through replication, failover and
-- a restore, is the same on every node of a cluster, and reads alike on both dialects with SELECT only.
CREATE TABLE IF NOT EXISTS ${table}_identity (singleton SMALLINT NOT NULL PRIMARY KEY CHECK (singleton = 1),
  id VARCHAR(64) NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now());
INSERT INTO ${table}_identity (singleton, id) VALUES (1, md5(random()::text || clock_timestamp()::text))
  ON CONFLICT (singleton) DO NOTHING
