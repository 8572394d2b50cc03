package io.countergateway.internal.rollup;

import io.countergateway.config.ConfigException;
import io.countergateway.config.RollupOptions;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Checks at start that a roll-up's table and columns exist with usable types, so a typo stops the gateway with one
 * line naming the key instead of failing every interval. Tells whether the key column is text or an integer.
 */
final class RollupTarget {
  private static final Set<String> INTEGER_TYPES = Set.of("smallint", "integer", "int", "bigint", "mediumint", "tinyint");
  private static final Set<String> TEXT_TYPES = Set.of("text", "character varying", "varchar", "character", "char",
    "tinytext", "mediumtext", "longtext");

  private RollupTarget() {
  }

  /** Succeeds with true for an integer key column, false for a text one; fails with a {@link ConfigException}. */
  static Future<Boolean> check(Pool pool, boolean postgres, String database, RollupOptions rollup) {
    String sql = postgres
      ? "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1"
      : "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?";
    // unquoted identifiers are folded to lower case by PostgreSQL; MySQL keeps them as written
    String table = postgres ? rollup.getTable().toLowerCase(Locale.ROOT) : rollup.getTable();
    return pool.preparedQuery(sql).execute(Tuple.of(table)).map(rows -> {
      Map<String, String> types = new HashMap<>();
      for (Row row : rows) {
        types.put(row.getString(0).toLowerCase(Locale.ROOT), row.getString(1).toLowerCase(Locale.ROOT));
      }
      if (types.isEmpty()) {
        throw new ConfigException(rollup.key() + ".table", "table '" + rollup.getTable() + "' does not exist in database "
          + database);
      }
      String keyType = type(types, rollup, "keyColumn", rollup.getKeyColumn());
      String valueType = type(types, rollup, "valueColumn", rollup.getValueColumn());
      if (!INTEGER_TYPES.contains(valueType) && !valueType.equals("numeric") && !valueType.equals("decimal")) {
        throw new ConfigException(rollup.key() + ".valueColumn", rollup.getTable() + "." + rollup.getValueColumn()
          + " is " + valueType + "; it must be an integer column (BIGINT holds any counter)");
      }
      if (INTEGER_TYPES.contains(keyType)) {
        return true;
      }
      if (TEXT_TYPES.contains(keyType)) {
        return false;
      }
      throw new ConfigException(rollup.key() + ".keyColumn", rollup.getTable() + "." + rollup.getKeyColumn()
        + " is " + keyType + "; it must be a text or integer column (it is matched to the counter id)");
    });
  }

  private static String type(Map<String, String> types, RollupOptions rollup, String option, String column) {
    String type = types.get(column.toLowerCase(Locale.ROOT));
    if (type == null) {
      throw new ConfigException(rollup.key() + "." + option, "column '" + column + "' does not exist in table "
        + rollup.getTable());
    }
    return type;
  }
}
