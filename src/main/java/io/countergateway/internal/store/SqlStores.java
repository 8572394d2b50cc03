package io.countergateway.internal.store;

import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.mysqlclient.MySQLConnection;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.ClientBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.SqlConnectOptions;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** Builds the store for the configured dialect, with its own small pool bound to the calling verticle. */
public final class SqlStores {
  /**
   * Statements per connection the MySQL client may send before the first answer arrives: one. When a connection dies,
   * the MySQL client (5.0.10) fails the first command in flight and never answers those written after it: a pipelined
   * prepare + execute of a flush on a killed session would wait out the whole attempt timeout (15 s by default), its
   * flush stuck and the writer failing long after the database is back. A flush is one statement on a connection of
   * its own; pipelining would save only the first prepare's round trip of each connection.
   */
  static final int MYSQL_PIPELINING_LIMIT = 1;
  static final int CONNECT_TIMEOUT_MS = 2_000;
  /** The MySQL server ends a session idle this long, in a transaction or not, at the least. */
  static final int MIN_SERVER_IDLE_SECONDS = 10;
  private static final Logger LOG = LoggerFactory.getLogger(SqlStores.class);
  /**
   * The isolation of every MySQL session that writes increments, fences and lanes: PostgreSQL's default, which the
   * statements are written for (each one locks what it reads). REPEATABLE READ, InnoDB's default, adds gap locks to
   * every range and point search; on a Galera cluster another node's replicated write that meets one must abort the
   * local transaction holding it, and a missed abort (MariaDB 10.11 has no applier lock-wait timeout) stalls the
   * whole cluster (docs/scaling.md "MariaDB Galera"). The roll-up and compaction jobs, which rely on next-key locks,
   * keep the server's default on their own pool.
   */
  static final String READ_COMMITTED = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

  private SqlStores() {
  }

  private static NetClientOptions netOptions() {
    // keepalive: the kernel notices a peer that vanished from an idle connection; a stuck busy one is the attempt
    // timeout's job (BoundedPool)
    return new NetClientOptions().setConnectTimeout(CONNECT_TIMEOUT_MS).setTcpNoDelay(true).setTcpKeepAlive(true);
  }

  /**
   * Call from the verticle that will use the store, so its connections live on that verticle's event loop.
   * {@code attemptTimeoutMs} bounds each write or read attempt; see {@link BoundedPool}.
   */
  public static CounterStore create(Vertx vertx, DatabaseOptions options, int poolSize, long attemptTimeoutMs) {
    return create(vertx, options, "store", poolSize, attemptTimeoutMs);
  }

  /**
   * {@code poolName} labels the pool's meters ({@code vertx_pool_*{pool_name}}): pools of one purpose add up under one
   * name (writes, reads, …).
   */
  public static CounterStore create(Vertx vertx, DatabaseOptions options, String poolName, int poolSize,
                                    long attemptTimeoutMs) {
    Supplier<Pool> pools = pools(vertx, options, poolName, poolSize, attemptTimeoutMs);
    return options.isPostgres()
      ? new PostgresStore(vertx, pools, attemptTimeoutMs, new PostgresSql(options.getTable()), options.getTable())
      : new MySqlStore(vertx, pools, attemptTimeoutMs, new MySqlSql(options.getTable()), options.getTable());
  }

  /**
   * A store for reads ({@code poolName} labels its meters): as {@link #create}, except that a read that times out is a
   * failed read, not a lost connection, so the pool and the other reads in flight on it are kept.
   */
  public static CounterStore createForReads(Vertx vertx, DatabaseOptions options, String poolName, int poolSize,
                                            long attemptTimeoutMs) {
    CounterStore store = create(vertx, options, poolName, poolSize, attemptTimeoutMs);
    ((PooledCounterStore) store).keepPoolOnTimeout();
    return store;
  }

  /** Bounded attempts on the store's kind of pool, for a second write path (idempotency keys). */
  static BoundedPool boundedPool(Vertx vertx, DatabaseOptions options, String poolName, int poolSize,
                                 long attemptTimeoutMs) {
    return new BoundedPool(vertx, pools(vertx, options, poolName, poolSize, attemptTimeoutMs), attemptTimeoutMs);
  }

  /** Makes the pools of a store: each with the session settings that go with {@code attemptTimeoutMs}. */
  private static Supplier<Pool> pools(Vertx vertx, DatabaseOptions options, String poolName, int poolSize,
                                      long attemptTimeoutMs) {
    PoolOptions poolOptions = new PoolOptions()
      .setName(poolName)
      .setMaxSize(poolSize)
      // a dead database must not park flushes forever: the coalescer retries with backoff instead
      .setConnectionTimeout(CONNECT_TIMEOUT_MS).setConnectionTimeoutUnit(TimeUnit.MILLISECONDS)
      .setMaxWaitQueueSize(1_000);
    long lockWaitMs = Math.max(1_000, attemptTimeoutMs / 3);
    int serverIdleSeconds = (int) Math.max(MIN_SERVER_IDLE_SECONDS, 2 * attemptTimeoutMs / 1000);
    if (options.isPostgres()) {
      // the server gives up on a statement we no longer wait for, and a flush waiting on a row lock fails (55P03,
      // retried on other slots) well before that
      PgSession session = new PgSession(options, attemptTimeoutMs, lockWaitMs);
      return () -> session.apply(connecting(PgBuilder.pool(), poolOptions, vertx, options, session.connect()))
        .using(vertx).build();
    }
    MySQLConnectOptions connect = mysqlConnect(options).setPipeliningLimit(MYSQL_PIPELINING_LIMIT);
    // A gateway that dies or is cut off between its upserts and COMMIT leaves its row locks — and its uncommitted
    // flush id, which the retry of the same flush must wait for — to the server until the session ends: wait_timeout
    // ends it (default 8 hours; here twice the attempt timeout). Our own flushes give up waiting for such a lock after
    // a third of the attempt timeout (1205, retried on other slots), not after innodb_lock_wait_timeout's 50 s.
    String session = "SET SESSION innodb_lock_wait_timeout = " + Math.max(1, lockWaitMs / 1000)
      + ", wait_timeout = " + serverIdleSeconds;
    // idle connections are closed by us before the server's wait_timeout closes them under our feet
    poolOptions.setIdleTimeout(serverIdleSeconds / 2).setIdleTimeoutUnit(TimeUnit.SECONDS);
    // ONE statement with the isolation in it: every statement a new connection runs before it is handed out is one
    // more round trip that a lost answer can leave waiting, and a connection waiting there holds up the flushes
    // behind it (MariaDbConnectionKillIT drops answers to new connections)
    return () -> connecting(MySQLBuilder.pool(), poolOptions, vertx, options, connect)
      .withConnectHandler(conn -> applySession(conn, List.of(session + ", " + readCommittedVariable(conn))))
      .using(vertx).build();
  }

  /**
   * {@link #READ_COMMITTED} as a session variable, to set in the same statement as others: MariaDB names it
   * {@code tx_isolation} (and {@code transaction_isolation} only from 11.1), MySQL 8 only {@code transaction_isolation}.
   */
  private static String readCommittedVariable(SqlConnection conn) {
    boolean mariaDb = conn.databaseMetadata().fullVersion().contains("MariaDB");
    return (mariaDb ? "tx_isolation" : "transaction_isolation") + " = 'READ-COMMITTED'";
  }

  /**
   * {@code builder} with {@code poolOptions}, connecting with {@code connect}: to its server, or, with
   * {@code database.hosts}, to the one of them that takes writes, found again for every new connection
   * ({@link PrimaryTarget}) and at least every {@link PrimaryTarget#RETARGET_SECONDS}, as a connection lives no longer.
   * A primary demoted in place ({@code read_only}) keeps answering reads and refuses writes on the connections it
   * holds: a write attempt that fails so replaces its pool, but reads would go on reading a server that no longer
   * follows the writes, and the lanes' leases would fail, for as long as their connections stay busy.
   */
  private static ClientBuilder<Pool> connecting(ClientBuilder<Pool> builder, PoolOptions poolOptions, Vertx vertx,
                                                DatabaseOptions options, SqlConnectOptions connect) {
    if (options.getHosts().isEmpty()) {
      return builder.with(poolOptions).with(netOptions()).connectingTo(connect);
    }
    long lifetimeMs = poolOptions.getMaxLifetimeUnit().toMillis(poolOptions.getMaxLifetime());
    long retargetMs = TimeUnit.SECONDS.toMillis(PrimaryTarget.RETARGET_SECONDS);
    PoolOptions retargeted = new PoolOptions(poolOptions).setMaxLifetimeUnit(TimeUnit.MILLISECONDS)
      .setMaxLifetime((int) (lifetimeMs > 0 ? Math.min(lifetimeMs, retargetMs) : retargetMs));
    return builder.with(retargeted).with(netOptions()).connectingTo(PrimaryTarget.of(vertx, options, connect));
  }

  /** As {@link #connecting}, for one connection outside any pool: the settings of the server to open it to. */
  static Future<SqlConnectOptions> target(Vertx vertx, DatabaseOptions options, SqlConnectOptions connect) {
    return options.getHosts().isEmpty() ? Future.succeededFuture(connect)
      : PrimaryTarget.of(vertx, options, connect).get();
  }

  /** A pool builder whose every new connection first runs {@code statements} (its session settings) before use. */
  static ClientBuilder<Pool> settingEachSession(ClientBuilder<Pool> builder, List<String> statements) {
    return builder.withConnectHandler(conn -> applySession(conn, statements));
  }

  /**
   * Runs {@code statements} on a new pooled connection, then hands it to the pool: a statement that fails is logged
   * and the others still run (the connection works with the server's defaults).
   */
  private static void applySession(SqlConnection conn, List<String> statements) {
    Future<?> chain = Future.succeededFuture();
    for (String statement : statements) {
      chain = chain.transform(previous -> conn.query(statement).execute().onFailure(failure ->
        LOG.warn("could not apply the session setting ({}): {}", statement, failure.toString())));
    }
    chain.onComplete(done -> conn.close());
  }

  /** A small plain pool on the configured database, for background jobs (roll-ups, compaction) that run their own SQL. */
  public static Pool pool(Vertx vertx, DatabaseOptions options, int poolSize) {
    return pool(vertx, options, "jobs", poolSize);
  }

  public static Pool pool(Vertx vertx, DatabaseOptions options, String poolName, int poolSize) {
    PoolOptions poolOptions = new PoolOptions().setName(poolName).setMaxSize(poolSize)
      .setConnectionTimeout(CONNECT_TIMEOUT_MS).setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
    return plainPool(vertx, options, poolOptions);
  }

  /**
   * A pool of {@code poolOptions} on the configured database with nothing but the connection settings every pool of
   * the gateway shares ({@link #pgConnect}, {@link #mysqlConnect}): server, credentials and TLS.
   */
  public static Pool plainPool(Vertx vertx, DatabaseOptions options, PoolOptions poolOptions) {
    if (options.isPostgres()) {
      return connecting(PgBuilder.pool(), poolOptions, vertx, options, pgConnect(options)).using(vertx).build();
    }
    return connecting(MySQLBuilder.pool(), poolOptions, vertx, options, mysqlConnect(options)).using(vertx).build();
  }

  /**
   * As {@link #plainPool}, with MySQL sessions at {@link #READ_COMMITTED}: for statements that lock only the rows they
   * change (the replica-lane leases), so that they hold no gap locks.
   */
  public static Pool readCommittedPool(Vertx vertx, DatabaseOptions options, PoolOptions poolOptions) {
    if (options.isPostgres()) {
      return plainPool(vertx, options, poolOptions);
    }
    return settingEachSession(connecting(MySQLBuilder.pool(), poolOptions, vertx, options, mysqlConnect(options)),
      List.of(READ_COMMITTED)).using(vertx).build();
  }

  /** What the start learns of the database: the id it keeps in its schema, and what a failover of it can lose. */
  public record Identified(String id, ReplicationSetup replication) {
  }

  /**
   * Once the schema is there: every right the gateway's statements use ({@link DatabaseRights}, refused naming
   * {@code database.user}), then the database's identity ({@link SchemaUpgrade#identity}), which the journal records
   * beside what it holds, and its replication set-up ({@link ReplicationSetup}). One connection, closed after.
   */
  public static Future<Identified> checkRightsAndIdentify(Vertx vertx, DatabaseOptions options) {
    Pool pool = pool(vertx, options, "start-checks", 1);
    return DatabaseRights.check(pool, options)
      .compose(v -> new SchemaUpgrade(options.isPostgres(), options.getTable()).identity(pool))
      .compose(id -> ReplicationSetup.read(pool, options.isPostgres(), options.isKeepUntilReplicated()).map(setup -> new Identified(id, setup)))
      .compose(identified -> PrimaryTarget.warnIfReadOnlyBypassed(pool, options).map(identified))
      .eventually(pool::close);
  }

  /**
   * Opens one connection outside any pool and closes it (PostgreSQL: four, see {@link PoolerProbe}): whether the
   * configured server answers in the configured protocol and takes the credentials, before any pool is made.
   * Bounded by {@code timeoutMs} whatever the server does: a PostgreSQL port waits for the client to speak first, as
   * a MySQL client waits for the server, so a protocol mismatch in that direction is silence, and a 5.0.10 pool that
   * times out waiting loses the failure (a NullPointerException in its cancel path) instead of reporting it.
   */
  public static Future<Void> probe(Vertx vertx, DatabaseOptions options, long timeoutMs) {
    if (options.isPostgres()) {
      // also what lies between: a pooler that refuses or drops the session settings, or shares server sessions
      return PoolerProbe.check(vertx, new PgSession(options, timeoutMs, timeoutMs / 3))
        .timeout(timeoutMs, TimeUnit.MILLISECONDS);
    }
    Future<? extends SqlConnection> connecting = target(vertx, options, mysqlConnect(options))
      .compose(connect -> MySQLConnection.connect(vertx, (MySQLConnectOptions) connect));
    // also a connection that is made only after the deadline
    connecting.onSuccess(SqlConnection::close);
    return connecting.<Void>mapEmpty().timeout(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /**
   * How every PostgreSQL connection of the gateway reaches the server: one place, so no pool (writes, reads, jobs,
   * lanes, schema) can be built without the configured TLS.
   */
  static PgConnectOptions pgConnect(DatabaseOptions options) {
    return server(new PgConnectOptions(), options).setSslMode(switch (options.getSslMode()) {
      case DISABLE -> io.vertx.pgclient.SslMode.DISABLE;
      case REQUIRE -> io.vertx.pgclient.SslMode.REQUIRE;
      case VERIFY_CA -> io.vertx.pgclient.SslMode.VERIFY_CA;
      case VERIFY_FULL -> io.vertx.pgclient.SslMode.VERIFY_FULL;
    });
  }

  /** As {@link #pgConnect}, for MySQL / MariaDB (whose names for the same modes differ). */
  static MySQLConnectOptions mysqlConnect(DatabaseOptions options) {
    return server(new MySQLConnectOptions(), options).setSslMode(switch (options.getSslMode()) {
      case DISABLE -> io.vertx.mysqlclient.SslMode.DISABLED;
      case REQUIRE -> io.vertx.mysqlclient.SslMode.REQUIRED;
      case VERIFY_CA -> io.vertx.mysqlclient.SslMode.VERIFY_CA;
      case VERIFY_FULL -> io.vertx.mysqlclient.SslMode.VERIFY_IDENTITY;
    });
  }

  /** The server, the credentials and the TLS trust, the same for both dialects. */
  private static <T extends SqlConnectOptions> T server(T connect, DatabaseOptions options) {
    connect.setHost(options.getHost()).setPort(options.getPort()).setDatabase(options.getName())
      .setUser(options.getUser()).setPassword(options.getPassword())
      .setCachePreparedStatements(true);
    if (options.getSslMode() != DatabaseOptions.SslMode.DISABLE) {
      connect.setSslOptions(sslOptions(options));
    }
    return connect;
  }

  /**
   * libpq's meaning of the modes, for both dialects: {@code require} without a CA file encrypts and checks nothing;
   * with one (and in the verify modes) the chain must lead to it; {@code verify-full} also checks that the certificate
   * names the host (RFC 2818 rules, as HTTPS).
   */
  private static ClientSSLOptions sslOptions(DatabaseOptions options) {
    ClientSSLOptions ssl = new ClientSSLOptions()
      .setHostnameVerificationAlgorithm(options.getSslMode() == DatabaseOptions.SslMode.VERIFY_FULL ? "HTTPS" : "");
    if (options.getSslCaFile() != null) {
      ssl.setTrustOptions(new PemTrustOptions().addCertPath(options.getSslCaFile()));
    } else {
      ssl.setTrustAll(true);
    }
    return ssl;
  }

  /**
   * A failure to reach the database at start, said in one line that names the TLS settings where they are the likely
   * cause: a certificate the CA file does not vouch for, or a server that wants TLS from a client that has it off.
   */
  public static Throwable explainStartFailure(DatabaseOptions options, Throwable failure) {
    String mode = DatabaseOptions.SSL_MODE.name() + " " + options.getSslMode().text();
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      String message = String.valueOf(cause.getMessage());
      // the PostgreSQL client reports a refused certificate as a VertxException without its cause
      if (cause instanceof SSLException || message.contains("SSL handshake failed")) {
        return new IllegalStateException("TLS to the database " + options.endpointText()
          + " failed (" + mode + (options.getSslCaFile() == null ? "" : ", " + DatabaseOptions.SSL_CA_FILE.name() + " "
          + options.getSslCaFile()) + "): " + oneLine(cause), failure);
      }
      if (options.getSslMode() == DatabaseOptions.SslMode.DISABLE && (message.contains("no encryption")
        || message.contains("SSL") || message.contains("secure transport"))) {
        return new IllegalStateException("the database " + options.endpointText()
          + " refused a connection without TLS (" + mode + "; set require, verify-ca or verify-full): "
          + oneLine(cause), failure);
      }
    }
    return failure;
  }

  private static String oneLine(Throwable cause) {
    return String.valueOf(cause.getMessage()).replaceAll("\\s+", " ").trim();
  }
}
