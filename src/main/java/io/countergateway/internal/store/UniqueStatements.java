package io.countergateway.internal.store;

/**
 * The statements on the sketch and salt tables (schema step 007), with plain positional arguments. A sketch row is
 * merged as read–union–write under its row lock: {@code insertEmpty} makes sure the row exists (and, on MySQL, takes
 * its exclusive lock at once, so two writers never both hold it shared and deadlock upgrading), {@code lock} reads it
 * {@code FOR UPDATE}, {@code update} writes the union back.
 */
record UniqueStatements(String insertEmpty, String lock, String update, String read, String expire, String reset,
                        String insertSalt, String readSalt, String expireSalts) {

  static UniqueStatements postgres(String table) {
    String key = "record_type = $%d AND record_id = $%d AND bucket_start = $%d AND slot = $%d";
    return new UniqueStatements(
      "INSERT INTO %s_uniques (record_type, record_id, bucket_start, slot, sketch) VALUES ($1, $2, $3, $4, ''::bytea) "
        .formatted(table) + "ON CONFLICT DO NOTHING",
      "SELECT sketch FROM %s_uniques WHERE ".formatted(table) + key.formatted(1, 2, 3, 4) + " FOR UPDATE",
      "UPDATE %s_uniques SET sketch = $1 WHERE ".formatted(table) + key.formatted(2, 3, 4, 5),
      "SELECT sketch, bucket_start FROM %s_uniques WHERE record_type = $1 AND record_id = $2 AND bucket_start >= $3 AND bucket_start < $4"
        .formatted(table),
      // small batches by physical row id, as for the bucket rows
      """
        DELETE FROM %1$s_uniques WHERE ctid = ANY(ARRAY(
          SELECT ctid FROM %1$s_uniques WHERE record_type = $1 AND bucket_start < $2 LIMIT $3))
        """.formatted(table),
      "DELETE FROM %s_uniques WHERE record_type = $1 AND record_id = $2".formatted(table),
      "INSERT INTO %s_visitor_salts (day, salt) VALUES ($1, $2) ON CONFLICT DO NOTHING".formatted(table),
      "SELECT salt FROM %s_visitor_salts WHERE day = $1".formatted(table),
      "DELETE FROM %s_visitor_salts WHERE day < $1".formatted(table));
  }

  static UniqueStatements mysql(String table) {
    String key = "record_type = ? AND record_id = ? AND bucket_start = ? AND slot = ?";
    return new UniqueStatements(
      "INSERT INTO %s_uniques (record_type, record_id, bucket_start, slot, sketch) VALUES (?, ?, ?, ?, x'') "
        .formatted(table) + "ON DUPLICATE KEY UPDATE sketch = sketch",
      "SELECT sketch FROM %s_uniques WHERE ".formatted(table) + key + " FOR UPDATE",
      "UPDATE %s_uniques SET sketch = ? WHERE ".formatted(table) + key,
      "SELECT sketch, bucket_start FROM %s_uniques WHERE record_type = ? AND record_id = ? AND bucket_start >= ? AND bucket_start < ?"
        .formatted(table),
      "DELETE FROM %s_uniques WHERE record_type = ? AND bucket_start < ? LIMIT ?".formatted(table),
      "DELETE FROM %s_uniques WHERE record_type = ? AND record_id = ?".formatted(table),
      "INSERT IGNORE INTO %s_visitor_salts (day, salt) VALUES (?, ?)".formatted(table),
      "SELECT salt FROM %s_visitor_salts WHERE day = ?".formatted(table),
      "DELETE FROM %s_visitor_salts WHERE day < ?".formatted(table));
  }
}
