package io.countergateway.internal.store;

import io.vertx.sqlclient.DatabaseException;

import java.math.BigInteger;
import java.util.Set;

/**
 * Reads a failed write. The default is "outage": only an answer that proves the <em>values</em> are at fault
 * ({@link #isValueRefused}) is a verdict on the data. Everything else — a read-only database after a failover,
 * a cancelled statement, a dropped table, an unknown error, a bug of ours — says nothing about the values and
 * nothing about whether an earlier attempt committed, so the flush is retried as it is, under the same id.
 */
public final class Failures {
  /** MySQL/MariaDB data errors whose SQLSTATE is not of class 22 on every server version. */
  private static final Set<Integer> MYSQL_VALUE_ERRORS = Set.of(1690, 1264, 1406, 1366, 1292, 1265);
  /** Lock conflicts: PostgreSQL serialization failure, deadlock, lock not available; MySQL deadlock, lock wait timeout. */
  private static final Set<String> LOCK_CONFLICT_STATES = Set.of("40001", "40P01", "55P03");
  private static final Set<Integer> LOCK_CONFLICT_CODES = Set.of(1213, 1205);

  private Failures() {
  }

  /** The database refused a value outside BIGINT: PostgreSQL numeric_value_out_of_range, MySQL 1690 / 1264. */
  public static boolean isOverflow(Throwable failure) {
    return failure instanceof DatabaseException db
      && ("22003".equals(db.getSqlState()) || db.getErrorCode() == 1690 || db.getErrorCode() == 1264);
  }

  /**
   * The database answered that a value of the statement is wrong (SQLSTATE class 22, "data exception", on both
   * dialects). Such an answer proves that the statement failed, so its transaction — and the flush id written
   * first in it — did not commit; and the same values would fail again. Only then may a flush be split.
   */
  public static boolean isValueRefused(Throwable failure) {
    if (failure instanceof DatabaseException db) {
      String state = db.getSqlState();
      return state != null && state.startsWith("22") || MYSQL_VALUE_ERRORS.contains(db.getErrorCode());
    }
    return false;
  }

  /**
   * Two writers waited on each other's row locks. The connection is healthy; a retry (on other slots) is enough.
   * Any other outage may mean a connection that is stuck, broken or bound to a server that can no longer write.
   */
  public static boolean isLockConflict(Throwable failure) {
    return failure instanceof DatabaseException db
      && (db.getSqlState() != null && LOCK_CONFLICT_STATES.contains(db.getSqlState())
        || LOCK_CONFLICT_CODES.contains(db.getErrorCode()));
  }

  /**
   * The server gave up on a statement at its own timeout: PostgreSQL query_canceled (57014, statement_timeout),
   * MySQL 3024 (max_execution_time) and MariaDB 1969 (max_statement_time). The connection is healthy.
   */
  public static boolean isStatementTimeout(Throwable failure) {
    return failure instanceof DatabaseException db
      && ("57014".equals(db.getSqlState()) || db.getErrorCode() == 3024 || db.getErrorCode() == 1969);
  }

  /** A SUM over slots as a long; a sum beyond the 64-bit range is an error, never a wrapped value. */
  public static long exactLong(BigInteger exact) {
    if (exact.bitLength() > 63) {
      throw new ArithmeticException("counter value " + exact + " is beyond the 64-bit range");
    }
    return exact.longValue();
  }
}
