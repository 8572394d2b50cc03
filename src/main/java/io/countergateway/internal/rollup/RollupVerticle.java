package io.countergateway.internal.rollup;

import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.IdempotencyOptions;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.RollupOptions;
import io.countergateway.internal.store.BucketRetention;
import io.countergateway.internal.store.DatabaseLock;
import io.countergateway.internal.store.KeyedWrites;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.internal.time.Timers;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;

import java.util.ArrayList;
import java.util.List;

/**
 * The background jobs of one gateway: each configured roll-up on its interval, compaction, the expiry of
 * idempotency keys, and the retention of each windowed namespace's buckets (and of its visitor sketches and salts). Every replica runs
 * the timers; the database lock of each job lets one replica at a time do the work, and another takes over as
 * soon as that one stops (its session, and so its lock, ends).
 */
public class RollupVerticle extends VerticleBase {
  /** Keys deleted per statement: each statement stays short. */
  private static final int EXPIRY_BATCH = 5_000;

  private final GatewayServices services;
  private final List<Rollup> rollups = new ArrayList<>();
  private Jobs jobs;
  private Compaction compaction;
  private Pool pool;

  public RollupVerticle(GatewayServices services) {
    this.services = services;
  }

  @Override
  public Future<?> start() {
    GatewayConfig config = services.config();
    DatabaseOptions database = config.getDatabase();
    // a connection per job: a run holds its connection (and lock) from start to end
    pool = SqlStores.pool(vertx, database, config.getRollups().size() + 2
      + (int) config.getNamespaces().values().stream().filter(NamespaceOptions::isWindowed).count());
    Future<Void> checked = Future.succeededFuture();
    for (RollupOptions options : config.getRollups()) {
      checked = checked.compose(v -> RollupTarget.check(pool, database.isPostgres(), database.getName(), options)
        .map(integerKey -> {
          RollupSql sql = database.isPostgres() ? RollupSql.postgres(database.getTable(), options, integerKey)
            : RollupSql.mysql(database.getTable(), options, integerKey);
          rollups.add(new Rollup(pool, database.getTable(), options, sql, new RollupMetrics(services.registry(), options.getNamespace())));
          return null;
        }));
    }
    return checked.onSuccess(v -> {
      jobs = new Jobs(Timers.of(vertx));
      for (Rollup rollup : rollups) {
        jobs.every(rollup.options().getIntervalSeconds(), "roll-up " + rollup.options().name(),
          () -> rollup.runOnce().compose(run -> rollup.lagSeconds()).onSuccess(rollup::lag));
      }
      IdempotencyOptions idempotency = config.getIdempotency();
      jobs.every(idempotency.getExpiryIntervalSeconds(), "idempotency key expiry",
        () -> expireKeys(database, idempotency.getRetentionSeconds()));
      for (NamespaceOptions namespace : config.getNamespaces().values()) {
        if (namespace.isWindowed()) {
          BucketRetention retention = new BucketRetention(pool, database.isPostgres(), database.getTable(), namespace,
            services.clock(), BucketRetention.DEFAULT_BATCH, services.registry());
          jobs.every(namespace.getWindow().getExpiryIntervalSeconds(), "bucket retention of " + namespace.getName(),
            retention::runOnce);
        }
      }
      if (config.getCompaction().isEnabled()) {
        compaction = new Compaction(pool, database.isPostgres(), database.getTable(), config.getCompaction(), services.registry());
        jobs.every(config.getCompaction().getIntervalSeconds(), "compaction", compaction::runOnce);
      }
    }).recover(failure -> pool.close().transform(closed -> Future.failedFuture(failure)));
  }

  /** Deletes keys past the retention, in bounded statements, on one replica at a time. */
  private Future<Integer> expireKeys(DatabaseOptions database, int retentionSeconds) {
    return pool.withConnection(conn -> {
      DatabaseLock lock = new DatabaseLock(conn, database.isPostgres(), "counter-gateway:idempotency:" + database.getTable());
      return lock.tryAcquire().compose(held -> held
        ? expireBatches(conn, database, retentionSeconds, 0).eventually(lock::release) : Future.succeededFuture(0));
    });
  }

  private Future<Integer> expireBatches(SqlConnection conn, DatabaseOptions database, int retentionSeconds, int sofar) {
    return KeyedWrites.expire(conn, database.isPostgres(), database.getTable(), retentionSeconds, EXPIRY_BATCH)
      .compose(deleted -> deleted < EXPIRY_BATCH ? Future.succeededFuture(sofar + deleted)
        : expireBatches(conn, database, retentionSeconds, sofar + deleted));
  }

  @Override
  public Future<?> stop() {
    if (jobs != null) {
      jobs.cancel();
    }
    return pool.close();
  }
}
