package io.countergateway.internal.store;

import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A named lock held by one database session: a PostgreSQL advisory lock or a MySQL {@code GET_LOCK}. It is held as
 * long as the connection that took it, so a replica that dies (or loses its connection) lets go of it at once, and
 * another replica can take over. Only one replica at a time runs a schema upgrade, a roll-up or a cleanup job.
 */
public final class DatabaseLock {
  /** MySQL lock names are at most 64 characters, and global to the server. */
  private static final int MAX_NAME = 64;

  private final SqlConnection conn;
  private final boolean postgres;
  private final String name;

  public DatabaseLock(SqlConnection conn, boolean postgres, String name) {
    this.conn = conn;
    this.postgres = postgres;
    this.name = shortName(name);
  }

  /** True when this session now holds the lock; false at once when another session does. */
  public Future<Boolean> tryAcquire() {
    String sql = postgres ? "SELECT pg_try_advisory_lock(hashtext($1))" : "SELECT GET_LOCK(?, 0)";
    return conn.preparedQuery(sql).execute(Tuple.of(name)).map(rows -> held(rows.iterator().next()));
  }

  /** Waits (in the database) up to {@code timeoutSeconds} for the lock; fails if it is still held elsewhere. */
  public Future<Void> acquire(int timeoutSeconds) {
    // lock_timeout bounds the advisory wait as it bounds any lock wait; SET LOCAL needs a transaction, so SET it is
    Future<?> wait = postgres
      ? conn.query("SET lock_timeout = '" + timeoutSeconds + "s'").execute()
        .compose(v -> conn.preparedQuery("SELECT pg_advisory_lock(hashtext($1)), true").execute(Tuple.of(name)))
        .compose(v -> conn.query("RESET lock_timeout").execute())
      : conn.preparedQuery("SELECT GET_LOCK(?, ?)").execute(Tuple.of(name, timeoutSeconds)).compose(rows -> held(rows.iterator().next())
        ? Future.succeededFuture() : Future.failedFuture(new IllegalStateException(
          "another gateway held the database lock '" + name + "' for more than " + timeoutSeconds + " s")));
    return wait.mapEmpty();
  }

  public Future<Void> release() {
    String sql = postgres ? "SELECT pg_advisory_unlock(hashtext($1))" : "SELECT RELEASE_LOCK(?)";
    return conn.preparedQuery(sql).execute(Tuple.of(name)).mapEmpty();
  }

  private static boolean held(Row row) {
    Object value = row.getValue(0);
    return value instanceof Boolean b ? b : value instanceof Number n && n.intValue() == 1;
  }

  static String shortName(String name) {
    if (name.length() <= MAX_NAME) {
      return name;
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
      return name.substring(0, MAX_NAME - 33) + ":" + HexFormat.of().formatHex(digest, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
