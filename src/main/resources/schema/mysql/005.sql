-- Replica lanes (scale-out): each coalescer of each replica leases one lane and writes only its lane's slots.
-- Concurrent writers never share a slot row; a lease not renewed by expires_at is free for the next replica.
CREATE TABLE IF NOT EXISTS ${table}_lanes (
  lane       SMALLINT     NOT NULL PRIMARY KEY,
  owner      VARCHAR(64)  NOT NULL,
  expires_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB DEFAULT CHARSET=ascii
