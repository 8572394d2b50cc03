package io.countergateway.store;

import io.vertx.sqlclient.DatabaseException;
import io.vertx.sqlclient.data.Numeric;

import java.math.BigInteger;

import java.util.Set;

/** Which database failures are worth retrying: lock conflicts and lost connections, never bad data. */
public final class Failures {
  /** PostgreSQL: serialization failure, deadlock, lock not available, shutdown / cannot connect now, too many connections. */
  private static final Set<String> RETRYABLE_SQL_STATES = Set.of("40001", "40P01", "55P03", "57P01", "57P02", "57P03", "53300");
  /** MySQL/MariaDB: deadlock, lock wait timeout, too many connections, server shutdown, gone away, lost, killed, interrupted. */
  private static final Set<Integer> RETRYABLE_MYSQL_CODES = Set.of(1213, 1205, 1040, 1053, 2006, 2013, 1927, 1317, 1158, 1159, 1160, 1161);

  private Failures() {
  }

  /** The database refused a value outside BIGINT: PostgreSQL numeric_value_out_of_range, MySQL 1690 / 1264. */
  public static boolean isOverflow(Throwable failure) {
    return failure instanceof DatabaseException db
      && ("22003".equals(db.getSqlState()) || db.getErrorCode() == 1690 || db.getErrorCode() == 1264);
  }

  /** A SUM over slots as a long; a sum beyond the 64-bit range is an error, never a wrapped value. */
  public static long exactLong(Numeric sum) {
    BigInteger exact = sum.bigIntegerValue();
    if (exact.bitLength() > 63) {
      throw new ArithmeticException("counter value " + exact + " is beyond the 64-bit range");
    }
    return exact.longValue();
  }

  public static boolean isRetryable(Throwable failure) {
    if (failure instanceof DatabaseException db) {
      String state = db.getSqlState();
      if (state != null && (RETRYABLE_SQL_STATES.contains(state) || state.startsWith("08"))) {
        return true;
      }
      return RETRYABLE_MYSQL_CODES.contains(db.getErrorCode());
    }
    // not an answer from the database: the connection, the pool or the network failed, the data did not
    return !(failure instanceof IllegalArgumentException) && !(failure instanceof ClassCastException)
      && !(failure instanceof NullPointerException) && !(failure instanceof ArithmeticException);
  }
}
