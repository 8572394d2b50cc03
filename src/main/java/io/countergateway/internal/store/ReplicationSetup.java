package io.countergateway.internal.store;

import io.countergateway.config.ConfigException;
import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What a failover of the database can take from what the gateway answered (docs/guarantees.md "Replicated databases:
 * what a failover keeps"), read at start from the server the gateway writes to, and the commit level its own write
 * sessions need so that a 200 survives the loss of that server.
 *
 * <p>A 200 is sent after COMMIT returns. On PostgreSQL, COMMIT returns once a synchronous standby has flushed the
 * commit only at {@code synchronous_commit} {@code on} or {@code remote_apply}; below that ({@code remote_write},
 * {@code local}, {@code off}) a standby promoted after the primary is lost may lack it. So with a synchronous standby the
 * gateway's sessions are raised to {@code on}: enough for the commit to survive, as the gateway reads from the primary
 * it writes to, never from a standby; {@code remote_apply} would also make it visible on the standby at once, for the
 * price of waiting for the replay of every flush. A server's {@code on} or {@code remote_apply} is kept.
 *
 * @param kind        what a failover can lose
 * @param commitLevel the {@code synchronous_commit} the write sessions set; null keeps the server's
 * @param line        the one line the start logs
 */
public record ReplicationSetup(Kind kind, String commitLevel, String line) {
  public enum Kind {
    /** Every commit answered is on a standby (or another node) that a failover promotes. */
    NONE_LOST,
    /** Standbys receive commits after they are answered: a failover can lose the last ones. */
    RECENT_LOST,
    /** Nothing streams from this server: a failover has nothing to promote. */
    NO_STANDBY,
    /** Standbys stream, but the gateway's user cannot see whether they are synchronous. */
    UNSEEN,
    /**
     * Asynchronous standbys, and the gateway holds each flush until they have it (database.keepUntilReplicated): a
     * failover loses no 202, nor a 200 while the gateway runs on.
     */
    KEPT_UNTIL_REPLICATED
  }

  /** The commit levels at which COMMIT waits for a synchronous standby to have flushed it. */
  private static final Set<String> SURVIVES_PRIMARY_LOSS = Set.of("on", "remote_apply");

  /**
   * One statement: the server's commit level and synchronous standby names as the gateway's user sees them, and the
   * standbys streaming from it by whether they are synchronous ({@code sync_state} is null to a user without
   * {@code pg_read_all_stats}).
   */
  static final String POSTGRES_QUERY = "SELECT current_setting('synchronous_commit'), "
    + "current_setting('synchronous_standby_names'), "
    + "(SELECT count(*) FROM pg_stat_replication), "
    + "(SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')), "
    + "(SELECT count(*) FROM pg_stat_replication WHERE sync_state IS NULL)";

  /** {@link #postgres(String, String, long, long, long, boolean)} without database.keepUntilReplicated. */
  public static ReplicationSetup postgres(String synchronousCommit, String standbyNames, long standbys,
                                          long synchronous, long hidden) {
    return postgres(synchronousCommit, standbyNames, standbys, synchronous, hidden, false);
  }

  /**
   * Classifies a PostgreSQL primary: its {@code synchronous_commit}, the standbys streaming from it, and whether the
   * gateway holds each flush until every standby has it ({@code keep}: database.keepUntilReplicated). With
   * {@code keep}, standbys the user cannot see are refused naming the key: it would wait for them for ever.
   */
  public static ReplicationSetup postgres(String synchronousCommit, String standbyNames, long standbys,
                                          long synchronous, long hidden, boolean keep) {
    String level = synchronousCommit.trim().toLowerCase(Locale.ROOT);
    boolean named = !standbyNames.isBlank();
    if (synchronous > 0) {
      boolean raise = !SURVIVES_PRIMARY_LOSS.contains(level);
      String commits = raise ? "the gateway's sessions commit at synchronous_commit on (the server's is " + level + ")"
        : "commits wait for them (synchronous_commit " + level + ")";
      return new ReplicationSetup(Kind.NONE_LOST, raise ? "on" : null, "replication: " + synchronous
        + " synchronous standby(s) of " + standbys + ", " + commits + ": a failover to a synchronous standby loses "
        + "none of the increments answered" + (standbys <= synchronous ? "" : keep ? "; one to an asynchronous "
        + "standby loses none either: " + KEPT : "; one to an asynchronous standby can lose those answered in its last "
        + "moments"));
    }
    if (hidden > 0 && keep) {
      throw new ConfigException(DatabaseOptions.KEEP_UNTIL_REPLICATED.name(), "needs to see how far each standby "
        + "has flushed: " + hidden + " standby(s) stream from this server, but database.user cannot see their "
        + "positions in pg_stat_replication (grant it pg_monitor)");
    }
    if (hidden > 0) {
      return new ReplicationSetup(Kind.UNSEEN, null, "replication: " + standbys + " standby(s) stream "
        + "from this server, but database.user cannot see whether they are synchronous (grant it pg_monitor): a "
        + "failover can lose increments answered in its last moments unless synchronous_standby_names ('"
        + standbyNames + "') names the one promoted");
    }
    if (standbys > 0 && keep) {
      return new ReplicationSetup(Kind.KEPT_UNTIL_REPLICATED, null, "replication: " + standbys + " asynchronous "
        + "standby(s): " + KEPT);
    }
    if (standbys > 0) {
      return new ReplicationSetup(Kind.RECENT_LOST, null, "replication: " + standbys + " asynchronous standby(s): a "
        + "failover can lose increments answered in its last moments (200 and 202 alike: those the promoted standby had "
        + "not received); name it in synchronous_standby_names, or set database.keepUntilReplicated, to lose none "
        + "(docs/guarantees.md)");
    }
    return new ReplicationSetup(Kind.NO_STANDBY, null, "replication: no standby streams from this server, so a "
      + "failover has nothing to promote: the increments answered are as safe as this server's disks"
      + (named ? " (synchronous_standby_names is set: commits wait until a standby it names connects)" : "")
      + (level.equals("off") ? "; at synchronous_commit off a crash can lose the last ones" : "")
      + (keep ? "; database.keepUntilReplicated holds flushes for standbys once one streams" : ""));
  }

  /** What database.keepUntilReplicated makes of a failover to an asynchronous standby. */
  private static final String KEPT = "database.keepUntilReplicated holds each flush until every standby has flushed "
    + "it, and after a failover writes again, under the same flush ids, what the promoted one lacks: a failover loses "
    + "no 202, and no 200 while this gateway runs on (a 200 is held in memory, a 202 in the journal)";

  /**
   * Classifies a MySQL / MariaDB primary from its global variables and status ({@code SHOW GLOBAL ...}, lower-case
   * names): Galera ({@code wsrep_on}) certifies a commit on every node before it is answered; semi-synchronous
   * replication waits for a replica's receipt until its timeout; plain binlog replication answers first.
   * {@code replicas}: the binlog dump threads the user sees (all of them only with the PROCESS privilege).
   */
  public static ReplicationSetup mysql(Map<String, String> variables, Map<String, String> status, long replicas) {
    if ("on".equalsIgnoreCase(variables.getOrDefault("wsrep_on", "off"))) {
      return new ReplicationSetup(Kind.NONE_LOST, null, "replication: a Galera cluster (wsrep_on): every node "
        + "certifies a commit before it is answered, so losing one node loses none of the increments answered");
    }
    String enabled = first(variables, "rpl_semi_sync_master_enabled", "rpl_semi_sync_source_enabled");
    long clients = parse(first(status, "rpl_semi_sync_master_clients", "rpl_semi_sync_source_clients"));
    if ("on".equalsIgnoreCase(enabled) && clients > 0) {
      String timeout = first(variables, "rpl_semi_sync_master_timeout", "rpl_semi_sync_source_timeout");
      return new ReplicationSetup(Kind.NONE_LOST, null, "replication: " + clients + " semi-synchronous replica(s): "
        + "a commit is answered once one has received it, so a failover to it loses none of the increments answered, "
        + "as long as one acknowledges within rpl_semi_sync_master_timeout (" + timeout + " ms; past it commits go "
        + "on asynchronously and a failover can lose the last ones)");
    }
    if (replicas > 0) {
      return new ReplicationSetup(Kind.RECENT_LOST, null, "replication: " + replicas + " asynchronous replica(s): a "
        + "failover can lose increments answered in its last moments; semi-synchronous replication "
        + "(rpl_semi_sync_master_enabled) loses none (docs/guarantees.md)");
    }
    return new ReplicationSetup(Kind.NO_STANDBY, null, "replication: no replica seen (database.user sees them with "
      + "the PROCESS privilege): a failover to an asynchronous replica can lose increments answered in its last "
      + "moments; semi-synchronous replication (rpl_semi_sync_master_enabled) or Galera loses none");
  }

  /** Reads the set-up on one connection of {@code pool}. */
  static Future<ReplicationSetup> read(Pool pool, boolean postgres, boolean keep) {
    if (postgres) {
      return pool.query(POSTGRES_QUERY).execute().map(rows -> {
        Row row = rows.iterator().next();
        return postgres(row.getString(0), row.getString(1), row.getLong(2), row.getLong(3), row.getLong(4), keep);
      });
    }
    return pool.withConnection(conn -> conn.query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', "
        + "'rpl_semi_sync_master_enabled', 'rpl_semi_sync_source_enabled', 'rpl_semi_sync_master_timeout', "
        + "'rpl_semi_sync_source_timeout')").execute()
      .compose(variables -> conn.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_clients', "
        + "'Rpl_semi_sync_source_clients')").execute()
        .compose(status -> conn.query("SELECT COUNT(*) FROM information_schema.PROCESSLIST "
            + "WHERE COMMAND LIKE 'Binlog Dump%'").execute()
          .map(dumps -> mysql(names(variables), names(status), dumps.iterator().next().getLong(0))))));
  }

  private static Map<String, String> names(Iterable<Row> rows) {
    Map<String, String> values = new HashMap<>();
    rows.forEach(row -> values.put(row.getString(0).toLowerCase(Locale.ROOT), row.getString(1)));
    return values;
  }

  private static String first(Map<String, String> values, String name, String otherName) {
    String value = values.get(name);
    return value != null ? value : values.getOrDefault(otherName, "");
  }

  private static long parse(String number) {
    try {
      return Long.parseLong(number.trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
