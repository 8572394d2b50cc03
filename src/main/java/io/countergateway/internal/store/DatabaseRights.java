package io.countergateway.internal.store;

import io.countergateway.config.ConfigException;
import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Future;
import io.vertx.mysqlclient.MySQLException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every right the gateway's statements use, checked once at start (docs/databases.md "The database user"): a user
 * that lacks one would start, answer 202 and 204, and fail every flush, which the writer can only take for an outage
 * and retry for ever. The start is refused instead, in one line naming {@code database.user} and what it lacks.
 *
 * <p>The rights: SELECT, INSERT, UPDATE and DELETE on every table of the schema (the write path upserts, deletes
 * settled flush ids and sources; the jobs fold, expire and prune), SELECT on {@code <table>_schema}; on MySQL /
 * MariaDB also EXECUTE on the flush procedure (step 009), which runs with its caller's rights. PostgreSQL's are read
 * with {@code has_table_privilege} (roles included); the gateway uses no sequence and no function of its own there.
 * MySQL's are tried: a statement that touches no row (a {@code WHERE 1 = 0}) is refused exactly when the right is
 * missing, however it was granted (global, database, table, role), and the procedure is called for a flush source
 * that cannot exist, which it refuses after the right was checked.
 */
public final class DatabaseRights {
  static final List<String> TABLE_RIGHTS = List.of("SELECT", "INSERT", "UPDATE", "DELETE");
  /** MySQL: the procedure's refusal of a source that has no row, which proves the call was allowed. */
  private static final String SOURCE_REFUSED = "flush_source_missing_or_closed";
  /** MySQL: execute command denied for a routine. */
  private static final int EXECUTE_DENIED = 1370;
  /** MySQL: a table command (SELECT, INSERT, …) denied. */
  private static final int TABLE_COMMAND_DENIED = 1142;
  /** MySQL: a column without a default left out of an INSERT (strict mode). */
  private static final int NO_DEFAULT = 1364;
  /** MySQL: a command denied on a column. */
  private static final int COLUMN_COMMAND_DENIED = 1143;

  private DatabaseRights() {
  }

  /** The rights each table needs, in the order they are reported. */
  static Map<String, List<String>> needed(String table) {
    Map<String, List<String>> needed = new LinkedHashMap<>();
    for (String each : SchemaUpgrade.tables(table)) {
      needed.put(each, each.equals(table + "_schema") ? List.of("SELECT") : TABLE_RIGHTS);
    }
    return needed;
  }

  /** Fails with a {@link ConfigException} naming {@code database.user} and every right it lacks. */
  public static Future<Void> check(Pool pool, DatabaseOptions options) {
    Future<List<String>> missing = options.isPostgres() ? postgresMissing(pool, options.getTable())
      : mysqlMissing(pool, options.getTable());
    return missing.compose(lacks -> lacks.isEmpty() ? Future.succeededFuture()
      : Future.failedFuture(refusal(options, lacks)));
  }

  /** The line that refuses the start: {@code lacks} as "RIGHT on object", grouped as a GRANT would take them. */
  static ConfigException refusal(DatabaseOptions options, List<String> lacks) {
    return new ConfigException(DatabaseOptions.USER.name(), "'" + options.getUser() + "' lacks " + String.join(", ", lacks)
      + " in database '" + options.getName() + "', which the gateway's statements use (without it the gateway would "
      + "take increments and never write them): grant " + (lacks.size() == 1 ? "it" : "them") + " to '"
      + options.getUser() + "', or set " + DatabaseOptions.USER.name() + " to a user that has them "
      + "(docs/databases.md)");
  }

  private static Future<List<String>> postgresMissing(Pool pool, String table) {
    List<String> tables = new ArrayList<>();
    List<String> rights = new ArrayList<>();
    needed(table).forEach((each, needs) -> needs.forEach(right -> {
      tables.add(each);
      rights.add(right);
    }));
    return pool.preparedQuery("SELECT r.tbl, r.priv FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS r(tbl, priv, n) "
        + "WHERE NOT has_table_privilege(r.tbl, r.priv) ORDER BY r.n")
      .execute(Tuple.tuple().addArrayOfString(tables.toArray(String[]::new))
        .addArrayOfString(rights.toArray(String[]::new)))
      .map(rows -> {
        List<String> lacks = new ArrayList<>();
        for (Row row : rows) {
          lacks.add(row.getString(1) + " on table " + row.getString(0));
        }
        return lacks;
      });
  }

  private static Future<List<String>> mysqlMissing(Pool pool, String table) {
    return pool.withConnection(conn -> {
      List<String> lacks = new ArrayList<>();
      Future<Void> chain = Future.succeededFuture();
      for (Map.Entry<String, List<String>> each : needed(table).entrySet()) {
        String name = each.getKey();
        chain = chain.compose(v -> conn.preparedQuery("SELECT COLUMN_NAME FROM information_schema.COLUMNS "
            + "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION LIMIT 1")
          .execute(Tuple.of(name)).map(rows -> rows.size() == 0 ? null : rows.iterator().next().getString(0)))
          .compose(column -> {
            if (column == null) {
              // no right at all on the table: information_schema shows a user only what it may touch
              each.getValue().forEach(right -> lacks.add(right + " on table " + name));
              return Future.succeededFuture();
            }
            Future<Void> rights = Future.succeededFuture();
            for (String right : each.getValue()) {
              String probe = mysqlProbe(name, right, column);
              rights = rights.compose(v -> conn.query(probe).execute().<Void>mapEmpty().recover(failure -> {
                if (denied(failure)) {
                  lacks.add(right + " on table " + name);
                  return Future.succeededFuture();
                }
                if (failure instanceof MySQLException refused && refused.getErrorCode() == NO_DEFAULT) {
                  return Future.succeededFuture(); // strict mode's complaint comes after the right was checked
                }
                return Future.failedFuture(failure);
              }));
            }
            return rights;
          });
      }
      String procedure = table + "_write_flush";
      return chain.compose(v -> conn.query("CALL " + procedure + "('rights-check:0', 'rights-check', 0, '[]', '[]')")
          .execute().<Void>mapEmpty()
          .recover(failure -> {
            if (failure instanceof MySQLException refused && refused.getErrorCode() == EXECUTE_DENIED) {
              lacks.add("EXECUTE on procedure " + procedure);
              return Future.succeededFuture();
            }
            if (String.valueOf(failure.getMessage()).contains(SOURCE_REFUSED)
              || denied(failure)) {
              return Future.succeededFuture(); // called: the procedure's own statements are the tables' rights above
            }
            return Future.failedFuture(failure);
          }))
        .map(v -> lacks);
    });
  }

  private static boolean denied(Throwable failure) {
    return failure instanceof MySQLException refused
      && (refused.getErrorCode() == TABLE_COMMAND_DENIED || refused.getErrorCode() == COLUMN_COMMAND_DENIED);
  }

  /** A statement that needs {@code right} on {@code table}, and no other right, and touches no row. */
  static String mysqlProbe(String table, String right, String column) {
    String some = "`" + column + "`";
    return switch (right) {
      case "SELECT" -> "SELECT 1 FROM " + table + " WHERE 1 = 0";
      case "INSERT" -> "INSERT INTO " + table + " (" + some + ") SELECT NULL FROM DUAL WHERE 1 = 0";
      case "UPDATE" -> "UPDATE " + table + " SET " + some + " = NULL WHERE 1 = 0";
      case "DELETE" -> "DELETE FROM " + table + " WHERE 1 = 0";
      default -> throw new IllegalArgumentException(right);
    };
  }
}
