package io.countergateway.internal.cluster;

/**
 * The lease statements on {@code <table>_lanes}, per dialect. Every time is the database's own clock, so replicas
 * with skewed clocks still agree on which lease has expired. Each statement changes one row atomically: two
 * replicas racing for a lane cannot both win it.
 */
record LaneSql(String list, String insertIfAbsent, String takeIfExpired, String renew, String held, String release,
               String lanesInUse) {

  /**
   * Parameters, in this order: insertIfAbsent (lane, owner, leaseMs), takeIfExpired (owner, leaseMs, lane),
   * renew (leaseMs, owner), held and release (owner).
   */
  static LaneSql forDialect(boolean postgres, String table) {
    String lanes = table + "_lanes";
    String now = "CURRENT_TIMESTAMP(3)";
    String[] p = postgres ? new String[] {"$1", "$2", "$3"} : new String[] {"?", "?", "?"};
    String expiryAt1 = postgres ? now + " + $1::int * interval '1 millisecond'" : now + " + INTERVAL ? * 1000 MICROSECOND";
    String expiryAt2 = expiryAt1.replace("$1", "$2");
    String expiryAt3 = expiryAt1.replace("$1", "$3");
    // a no-op update on a duplicate in MySQL, not INSERT IGNORE, which would also swallow unrelated errors
    String onDuplicate = postgres ? " ON CONFLICT (lane) DO NOTHING" : " ON DUPLICATE KEY UPDATE lane = lane";
    return new LaneSql(
      "SELECT lane, owner, CASE WHEN expires_at < " + now + " THEN 1 ELSE 0 END FROM " + lanes + " ORDER BY lane",
      "INSERT INTO " + lanes + " (lane, owner, expires_at) VALUES (" + p[0] + ", " + p[1] + ", " + expiryAt3 + ")" + onDuplicate,
      "UPDATE " + lanes + " SET owner = " + p[0] + ", expires_at = " + expiryAt2 + " WHERE lane = " + p[2]
        + " AND expires_at < " + now,
      "UPDATE " + lanes + " SET expires_at = " + expiryAt1 + " WHERE owner = " + p[1],
      "SELECT lane FROM " + lanes + " WHERE owner = " + p[0] + " ORDER BY lane",
      "DELETE FROM " + lanes + " WHERE owner = " + p[0],
      "SELECT COALESCE(MAX(lane) + 1, 0) FROM " + lanes + " WHERE expires_at >= " + now);
  }
}
