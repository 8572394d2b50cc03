package io.countergateway;

import io.countergateway.config.ConfigException;
import io.countergateway.config.ConfigLoader;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.store.PrimaryTarget;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.internal.write.journal.JournalInUse;
import io.vertx.sqlclient.ClosedConnectionException;
import io.vertx.sqlclient.DatabaseException;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;

import java.net.BindException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * What stopped a start, as the one line an operator reads: the key, the file or the endpoint at fault, and what to do.
 * Every failure of a start is put into words here, so none reaches the operator as a stack trace or a bare exception
 * name (the stack is logged at DEBUG).
 */
final class StartFailures {
  /** How long the database may take to accept one connection at start (see {@link io.countergateway.internal.store.SqlStores#probe}). */
  public static final long DATABASE_PROBE_MS = 10_000;
  /**
   * PostgreSQL: read-only transaction (a standby), the server starting up, shutting down or restarting, too many
   * connections.
   */
  private static final Set<String> OUTAGE_SQLSTATES = Set.of("25006", "57P01", "57P02", "57P03", "53300");
  /** MySQL / MariaDB: read-only (1290, 1836), too many connections (1040), shutting down (1053), lost (2013). */
  private static final Set<Integer> MYSQL_OUTAGE_ERRORS = Set.of(1290, 1836, 1040, 1053, 2013);
  /** PostgreSQL: invalid_authorization_specification, invalid_password. */
  private static final Set<String> PG_CREDENTIALS_REFUSED = Set.of("28000", "28P01");
  /** MySQL / MariaDB: access denied for user, access denied to the database for user. */
  private static final Set<Integer> MYSQL_CREDENTIALS_REFUSED = Set.of(1045, 1044, 1698);
  private static final int MYSQL_UNKNOWN_DATABASE = 1049;
  private static final String PG_UNKNOWN_DATABASE = "3D000";
  /** PgBouncer's answer to a start-up parameter it does not track: the gateway's timeouts, meant for PostgreSQL. */
  private static final String PG_POOLER_REFUSED_PARAMETER = "unsupported startup parameter";
  /** What Linux calls EADDRINUSE, in Java's BindException and in Netty's native one alike. */
  private static final String ADDRESS_IN_USE = "Address already in use";

  private StartFailures() {
  }

  /** A start that stopped, with the line that says why; what {@code Gateway.start} fails with. */
  public static final class StartFailure extends RuntimeException {
    public StartFailure(String line, Throwable cause) {
      super(line, cause);
    }
  }

  /** The configuration file at {@code path} could not be loaded: missing, unreadable, not YAML, or a bad value. */
  public static String configFile(Throwable failure, String path) {
    if (failure instanceof ConfigException) {
      return "configuration error: " + failure.getMessage();
    }
    Path file = Path.of(path).toAbsolutePath().normalize();
    String ways = "; start from the directory that holds conf/, or name the file with --config or "
      + ConfigLoader.CONFIG_FILE_VARIABLE;
    if (!Files.exists(file)) {
      return "configuration file " + file + " does not exist (working directory "
        + Path.of("").toAbsolutePath() + ")" + ways;
    }
    if (Files.isDirectory(file)) {
      return "configuration file " + file + " is a directory" + ways;
    }
    if (!Files.isReadable(file)) {
      return "configuration file " + file + " cannot be read by user " + System.getProperty("user.name")
        + ": make it readable (chmod/chown) or name another file with --config";
    }
    MarkedYAMLException yaml = find(failure, MarkedYAMLException.class);
    if (yaml != null) {
      Mark mark = yaml.getProblemMark() != null ? yaml.getProblemMark() : yaml.getContextMark();
      String where = mark == null ? "" : " at line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1);
      return "configuration file " + file + " is not valid YAML" + where + ": " + oneLine(yaml.getProblem())
        + "; fix the file (a value holding ': ', ' #' or starting with a special character needs quotes)";
    }
    return "configuration file " + file + " could not be read: " + oneLine(rootCause(failure).toString());
  }

  /** The database of {@code database} could not be reached, or did not take the gateway's first connection. */
  public static String database(Throwable failure, DatabaseOptions database) {
    Throwable tls = SqlStores.explainStartFailure(database, failure);
    if (tls != failure) {
      return tls.getMessage(); // a certificate refused, or a server that wants TLS: database.ssl.* is what to fix
    }
    if (failure instanceof StartFailure || failure instanceof ConfigException) {
      return failure.getMessage();
    }
    PrimaryTarget.NoPrimaryException noPrimary = find(failure, PrimaryTarget.NoPrimaryException.class);
    if (noPrimary != null) {
      return noPrimary.getMessage() + "; start or promote the primary, or fix " + DatabaseOptions.HOSTS.name();
    }
    String endpoint = database.endpointText();
    String protocol = database.isPostgres() ? "PostgreSQL" : "MySQL / MariaDB";
    DatabaseException refused = find(failure, DatabaseException.class);
    if (refused != null) {
      String answer = oneLine(refused.getMessage());
      if (PG_CREDENTIALS_REFUSED.contains(refused.getSqlState())
        || MYSQL_CREDENTIALS_REFUSED.contains(refused.getErrorCode())) {
        String credentials = "database.user / database.password: the database at " + endpoint + " refused user '"
          + database.getUser() + "' (" + answer + "); fix database.user and database.password (or database.passwordFile)";
        // MariaDB refuses a connection without TLS under require_secure_transport with the same access denied
        return database.isPostgres() || database.getSslMode() != DatabaseOptions.SslMode.DISABLE ? credentials
          : credentials + ", or, if the server refused a connection without TLS (MariaDB's require_secure_transport"
            + " says access denied), set " + DatabaseOptions.SSL_MODE.name() + " require, verify-ca or verify-full (now "
            + DatabaseOptions.SSL_MODE.name() + " " + database.getSslMode().text() + ")";
      }
      if (database.isPostgres() && answer.contains(PG_POOLER_REFUSED_PARAMETER)) {
        return "database.pooler: the database endpoint " + endpoint + " refused a start-up parameter, as PgBouncer does ("
          + answer + "); set database.pooler: session";
      }
      if (PG_UNKNOWN_DATABASE.equals(refused.getSqlState()) || refused.getErrorCode() == MYSQL_UNKNOWN_DATABASE) {
        return "database.name: the server at " + endpoint + " has no database '" + database.getName()
          + "'; create it or fix database.name";
      }
      return "the database at " + endpoint + " refused the start: " + answer;
    }
    if (find(failure, UnknownHostException.class) != null) {
      return "database.host: the host '" + database.getHost() + "' is unknown; fix database.host";
    }
    if (find(failure, ConnectException.class) != null) {
      return "database.host / database.port: nothing accepts connections at " + endpoint
        + " (connection refused); start the " + protocol + " server or fix database.host and database.port";
    }
    if (find(failure, TimeoutException.class) != null) {
      return "database.host / database.port: no " + protocol + " answer from " + endpoint + " within "
        + DATABASE_PROBE_MS / 1000 + " s; is a " + protocol + " server listening there (database.kind: "
        + kindName(database) + ")? fix database.host, database.port or database.kind";
    }
    return "database.kind / database.host / database.port: the server at " + endpoint + " did not complete a "
      + protocol + " handshake (" + oneLine(rootCause(failure).toString()) + "); is it a " + protocol
      + " server (database.kind: " + kindName(database) + ")? fix database.kind, database.host or database.port";
  }

  /**
   * The database is away, not misconfigured: nothing accepts connections at its endpoint, it does not answer in time,
   * a connection to it was lost, or it answers read-only or not yet (a failover or a restart in progress). A refused
   * login, an unknown host or database, another protocol or a TLS mismatch is a mistake to fix, never an outage.
   */
  public static boolean isOutage(Throwable failure) {
    DatabaseException refused = find(failure, DatabaseException.class);
    if (refused != null) {
      return OUTAGE_SQLSTATES.contains(refused.getSqlState()) || MYSQL_OUTAGE_ERRORS.contains(refused.getErrorCode());
    }
    // no host of database.hosts takes writes: a failover under way
    if (find(failure, PrimaryTarget.NoPrimaryException.class) != null) {
      return true;
    }
    return find(failure, UnknownHostException.class) == null && (find(failure, ConnectException.class) != null
      || find(failure, TimeoutException.class) != null || find(failure, ClosedConnectionException.class) != null);
  }

  /** Whatever else stopped a start once the database had answered: the HTTP port, the schema, the cluster. */
  public static String starting(Throwable failure, GatewayConfig config) {
    if (failure instanceof StartFailure || failure instanceof ConfigException) {
      return failure.getMessage();
    }
    JournalInUse journalInUse = find(failure, JournalInUse.class);
    if (journalInUse != null) {
      // another start took the journal since this one checked it (Gateway.checkWhatOthersMayHold)
      return journalDirectoryInUse(journalInUse.lockFile().getParent().toAbsolutePath().normalize(),
        LocalProcesses.lockingFile(journalInUse.lockFile()));
    }
    Throwable bind = bindFailure(failure);
    if (bind != null) {
      return httpPort(config, oneLine(bind.getMessage()), null);
    }
    DatabaseException refused = find(failure, DatabaseException.class);
    if (refused != null) {
      DatabaseOptions database = config.getDatabase();
      return "the database at " + database.endpointText() + " refused the start: "
        + oneLine(refused.getMessage());
    }
    return "cannot start: " + cause(failure);
  }

  /**
   * The HTTP port could not be taken: {@code problem} is the system's word for it ("Address already in use"), and
   * {@code holder} the process listening there when known ({@code LocalProcesses}).
   */
  static String httpPort(GatewayConfig config, String problem, String holder) {
    String endpoint = config.getHttp().getHost() + ":" + config.getHttp().getPort();
    if (problem.contains(ADDRESS_IN_USE)) {
      return "http.port: " + endpoint + " is in use" + (holder == null ? "" : " by " + holder)
        + "; stop what listens there, or set http.port (CG_HTTP_PORT) to a free port";
    }
    return "http.host / http.port: cannot listen on " + endpoint + " (" + problem + "); fix http.host or http.port";
  }

  /** The embedded database's data directory is locked by a live process: another gateway runs there. */
  static String dataDirectoryInUse(Path dataDirectory, String holder) {
    return "database.dataDir: another gateway uses " + dataDirectory + (holder == null ? "" : " (" + holder + ")")
      + "; stop it, or give this one a database.dataDir (CG_DATABASE_DATA_DIR) of its own";
  }

  /** A stream lock of the journal directory is held by a live process: another gateway runs on it. */
  static String journalDirectoryInUse(Path journalDirectory, String holder) {
    return "journal.dir: another gateway uses " + journalDirectory + (holder == null ? "" : " (" + holder + ")")
      + "; stop it, or give this one a journal.dir (CG_JOURNAL_DIR) of its own";
  }

  /**
   * A failed bind: Java's {@link BindException}, or the native transport's exception (Netty's {@code
   * NativeIoException}, an {@code IOException} whose message reads "bind(..) failed: Address already in use").
   */
  private static Throwable bindFailure(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof BindException || (t.getMessage() != null && t.getMessage().startsWith("bind("))) {
        return t;
      }
    }
    return null;
  }

  /** The innermost cause of {@code failure} on one line: what a failure that no rule here knows is reported by. */
  public static String cause(Throwable failure) {
    return oneLine(rootCause(failure).toString());
  }

  private static String kindName(DatabaseOptions database) {
    return switch (database.getKind()) {
      case MYSQL -> "mysql";
      case POSTGRES -> "postgres";
      case EMBEDDED_POSTGRES -> "embedded-postgres";
    };
  }

  private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }

  private static Throwable rootCause(Throwable failure) {
    Throwable root = failure;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }

  /** Server messages and exceptions can span lines; the operator gets one. */
  private static String oneLine(String text) {
    return text == null ? "" : text.strip().replaceAll("\\s*\\R\\s*", " ");
  }
}
