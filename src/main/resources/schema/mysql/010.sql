-- The database's identity (src/DESIGN.md §4 "Journal"): one row with an id made at random once, with the schema.
-- The journal records it beside what it holds, and a start whose database keeps another id (a switch of
-- database.kind, host, port or name; a database made anew) is refused while the journal holds work written for the
-- first. A row of the database, not @@server_uuid (which MariaDB lacks, and which differs on every node of a Galera
-- cluster and on every replica): it follows the data through replication, failover and a restore, and reads with
-- SELECT only. INSERT IGNORE: a step run again keeps the first id.
CREATE TABLE IF NOT EXISTS ${table}_identity (singleton SMALLINT NOT NULL PRIMARY KEY,
  id VARCHAR(64) CHARACTER SET ascii NOT NULL, created_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3))
  ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
INSERT IGNORE INTO ${table}_identity (singleton, id) VALUES (1, REPLACE(UUID(), '-', ''))
