package io.countergateway.internal.store;

import io.vertx.core.Future;
import io.vertx.sqlclient.DatabaseException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;

/**
 * Brings the database to the schema this gateway was built with (src/DESIGN.md §2): the numbered steps of
 * {@link SchemaScript} not yet recorded in {@code <table>_schema} are applied in order, by one replica at a time
 * (the others wait on the schema lock, then find nothing left to do). A database whose recorded version is newer
 * than the steps this gateway knows is refused: an older gateway must not write to a layout it does not know.
 */
public final class SchemaUpgrade {
  private static final Logger LOG = LoggerFactory.getLogger(SchemaUpgrade.class);
  /** How long a starting replica waits for another one's upgrade. */
  private static final int LOCK_TIMEOUT_SECONDS = 50;
  /**
   * MySQL DDL commits on its own, so a step interrupted half-way is run again whole: table exists (1050), duplicate
   * column (1060), duplicate key name (1061) mean that statement was applied by the earlier run.
   */
  private static final Set<Integer> MYSQL_ALREADY_APPLIED = Set.of(1050, 1060, 1061);

  private final boolean postgres;
  private final String table;
  private final List<SchemaScript.Step> steps;

  public SchemaUpgrade(boolean postgres, String table) {
    this.postgres = postgres;
    this.table = table;
    this.steps = SchemaScript.steps(dialect(), table);
  }

  private String dialect() {
    return postgres ? "postgres" : "mysql";
  }

  /**
   * Every table the schema steps create for {@code table}, the counters table last: for tools that start from an
   * empty database (benchmarks). A step that adds a table adds it here.
   */
  public static List<String> tables(String table) {
    return List.of(table + "_schema", table + "_flushes", table + "_flush_sources", table + "_rollups",
      table + "_idempotency", table + "_lanes", table + "_windows", table + "_uniques", table + "_visitor_salts",
      table + "_identity", table);
  }

  /**
   * The id the database keeps in {@code <table>_identity} (step 010): made at random once, so it names this database's
   * data wherever it is reached from, and differs for any other database, or one made anew.
   */
  public Future<String> identity(Pool pool) {
    return pool.query("SELECT id FROM " + table + "_identity WHERE singleton = 1").execute().compose(rows -> rows.size() == 1
      ? Future.succeededFuture(rows.iterator().next().getString(0))
      : Future.failedFuture(new IllegalStateException(table + "_identity holds no row: apply "
        + "src/main/resources" + SchemaScript.resource(dialect(), 10) + " again (it adds the row when missing)")));
  }

  /** The version this gateway brings the database to. */
  public int latestVersion() {
    return steps.size();
  }

  /** Applies the missing steps under the schema lock; fails on a database newer than this gateway. */
  public Future<Void> upgrade(Pool pool) {
    return pool.withConnection(conn -> {
      DatabaseLock lock = new DatabaseLock(conn, postgres, "counter-gateway:schema:" + table);
      Future<Void> quiet = postgres
        ? conn.query("SET client_min_messages = warning").execute().mapEmpty() : Future.succeededFuture();
      return quiet
        .compose(v -> lock.acquire(LOCK_TIMEOUT_SECONDS))
        .compose(locked -> conn.query(createVersionTable()).execute()
          .compose(created -> currentVersion(conn))
          .compose(current -> applyFrom(conn, current))
          .eventually(lock::release));
    });
  }

  /** For {@code database.createSchema=false}: the database must already be at exactly this gateway's version. */
  public Future<Void> check(Pool pool) {
    return pool.withConnection(conn -> currentVersion(conn).recover(missing -> Future.failedFuture(new IllegalStateException(
      "database.createSchema is false and the database has no " + table + "_schema table: apply " + files(1)
        + " by hand (or set database.createSchema=true)", missing))))
      .compose(current -> {
        refuseNewer(current);
        if (current < latestVersion()) {
          return Future.failedFuture(new IllegalStateException("database.createSchema is false and the schema of "
            + table + " is at version " + current + ": apply " + files(current + 1)
            + " by hand (or set database.createSchema=true)"));
        }
        return Future.succeededFuture();
      });
  }

  private String files(int from) {
    return from == latestVersion() ? "src/main/resources" + SchemaScript.resource(dialect(), from)
      : "src/main/resources" + SchemaScript.resource(dialect(), from) + " to " + "%03d.sql".formatted(latestVersion());
  }

  private String createVersionTable() {
    return postgres
      ? "CREATE TABLE IF NOT EXISTS " + table + "_schema (version INT NOT NULL PRIMARY KEY, "
        + "description VARCHAR(255) NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
      : "CREATE TABLE IF NOT EXISTS " + table + "_schema (version INT NOT NULL PRIMARY KEY, "
        + "description VARCHAR(255) NOT NULL, applied_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)) "
        + "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";
  }

  private Future<Integer> currentVersion(SqlConnection conn) {
    return conn.query("SELECT COALESCE(MAX(version), 0) FROM " + table + "_schema").execute()
      .map(rows -> ((Number) rows.iterator().next().getValue(0)).intValue());
  }

  private void refuseNewer(int current) {
    if (current > latestVersion()) {
      throw new IllegalStateException("the schema of " + table + " is at version " + current
        + ", newer than this gateway (which knows versions up to " + latestVersion()
        + "): run a gateway at least as new as the one that upgraded it");
    }
  }

  private Future<Void> applyFrom(SqlConnection conn, int current) {
    refuseNewer(current);
    Future<Void> chain = Future.succeededFuture();
    for (SchemaScript.Step step : steps.subList(current, steps.size())) {
      chain = chain.compose(v -> apply(conn, step))
        .onSuccess(v -> LOG.info("schema of {}: applied step {} ({})", table, step.version(), step.description()));
    }
    return chain;
  }

  /** PostgreSQL runs a step and its version row in one transaction; MySQL cannot (DDL commits), hence the tolerance. */
  private Future<Void> apply(SqlConnection conn, SchemaScript.Step step) {
    if (!postgres) {
      return statementsAndRecord(conn, step);
    }
    return conn.begin().compose(tx -> statementsAndRecord(conn, step)
      .compose(v -> tx.commit())
      .recover(failure -> tx.rollback().transform(rolledBack -> Future.failedFuture(failure))));
  }

  private Future<Void> statementsAndRecord(SqlConnection conn, SchemaScript.Step step) {
    String record = "INSERT INTO " + table + "_schema (version, description) VALUES (" + (postgres ? "$1, $2" : "?, ?") + ")";
    Future<?> chain = Future.succeededFuture();
    for (String statement : step.statements()) {
      chain = chain.compose(v -> conn.query(statement).execute().recover(failure -> postgres || !alreadyApplied(failure)
        ? Future.failedFuture(new IllegalStateException("schema step " + SchemaScript.resource(dialect(), step.version())
          + " failed: " + failure.getMessage(), failure))
        : Future.succeededFuture()));
    }
    return chain.compose(v -> conn.preparedQuery(record).execute(Tuple.of(step.version(), step.description()))).mapEmpty();
  }

  private static boolean alreadyApplied(Throwable failure) {
    return failure instanceof DatabaseException db && MYSQL_ALREADY_APPLIED.contains(db.getErrorCode());
  }
}
