package io.countergateway.internal.cluster;

import io.countergateway.internal.write.SlotPicker;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.Knobs;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.store.SqlStores;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.IntSupplier;

/**
 * The lanes one replica's coalescers write, leased in {@code <table>_lanes} (src/DESIGN.md §3, slot choice). A replica
 * takes the lowest free lane numbers (absent rows, or rows whose lease expired: a dead replica's lanes), renews
 * its leases every third of {@code lanes.lease}, and deletes them on a graceful stop. A lane lost anyway (the
 * database was unreachable for longer than the lease and another replica took it) is replaced at the next renewal.
 */
public final class ReplicaLanes {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicaLanes.class);
  /** Lane numbers end here; far beyond any sensible replicas × coalescers. */
  static final int MAX_LANES = 4096;
  private static final int CLAIM_ROUNDS = 20;
  private static final int ATTEMPTS = 3;
  private static final long ATTEMPT_SECONDS = 15;
  /** Without leases: a random slot offset per replica (replicas may then share slot rows). */
  private static final int UNLEASED_OFFSET_RANGE = 1024;

  private final Vertx vertx;
  private final Pool pool;
  private final LaneSql sql;
  private final String owner;
  private final int leaseMs;
  private final AtomicIntegerArray lanes;
  private long renewTimer = -1;
  private boolean renewing;
  private boolean renewFailed;
  /** The leased lanes these unleased ones became (see {@link #adopt}); null otherwise. */
  private volatile ReplicaLanes adopted;

  private ReplicaLanes(Vertx vertx, Pool pool, LaneSql sql, String owner, int leaseMs, int count) {
    this.vertx = vertx;
    this.pool = pool;
    this.sql = sql;
    this.owner = owner;
    this.leaseMs = leaseMs;
    this.lanes = new AtomicIntegerArray(count);
  }

  /**
   * Leases {@code count} lanes (one per coalescer) and keeps them renewed; with lanes switched off for a measurement
   * ({@link Knobs#LANES_ENABLED}), leases nothing.
   */
  public static Future<ReplicaLanes> lease(Vertx vertx, GatewayConfig config, int count) {
    if (!Knobs.lanesEnabled()) {
      return Future.succeededFuture(unleased(vertx, count));
    }
    return leaseAttempt(vertx, config, count, 1);
  }

  /**
   * Lanes at a random offset, leased from nobody: two replicas may then meet on a slot row now and then (a lock wait,
   * never a wrong count). For a start without the database, until {@link #adopt} hands over leased ones.
   */
  public static ReplicaLanes unleased(Vertx vertx, int count) {
    ReplicaLanes unleased = new ReplicaLanes(vertx, null, null, "", 0, count);
    int offset = ThreadLocalRandom.current().nextInt(UNLEASED_OFFSET_RANGE);
    for (int i = 0; i < count; i++) {
      unleased.lanes.set(i, offset + i);
    }
    return unleased;
  }

  /** These unleased lanes become {@code leased}'s, read by the coalescers from their next flush; released with them. */
  public void adopt(ReplicaLanes leased) {
    for (int i = 0; i < lanes.length(); i++) {
      lanes.set(i, leased.lanes.get(i));
    }
    adopted = leased;
  }

  /**
   * One attempt with its own pool and deadline: on a starved machine the 5.0.10 pool can lose a connection
   * timeout (a NullPointerException in its cancel path) and never complete, so a stuck attempt is abandoned.
   */
  private static Future<ReplicaLanes> leaseAttempt(Vertx vertx, GatewayConfig config, int count, int attempt) {
    DatabaseOptions database = config.getDatabase();
    ReplicaLanes replica = new ReplicaLanes(vertx, pool(vertx, database),
      LaneSql.forDialect(database.isPostgres(), database.getTable()), ownerName(), config.getLanes().getLeaseMs(), count);
    return replica.claim(new ArrayList<>(), CLAIM_ROUNDS)
      .timeout(ATTEMPT_SECONDS, TimeUnit.SECONDS)
      .map(held -> {
        for (int i = 0; i < count; i++) {
          replica.lanes.set(i, held.get(i));
        }
        replica.renewTimer = vertx.setPeriodic(Math.max(100, replica.leaseMs / 3), id -> replica.renew());
        replica.warnIfFewSlots(config);
        return replica;
      })
      .recover(failure -> {
        // leases this owner may have taken expire on their own
        replica.pool.close();
        if (attempt >= ATTEMPTS) {
          return Future.failedFuture(new IllegalStateException("cannot lease lanes in " + database.getTable()
            + "_lanes (with database.createSchema=false apply schema/<dialect>/005.sql): "
            + failure, failure));
        }
        LOG.warn("leasing lanes failed (attempt {} of {}), trying again: {}", attempt, ATTEMPTS, failure.toString());
        return leaseAttempt(vertx, config, count, attempt + 1);
      });
  }

  /** The lane coalescer {@code index} writes, read at every flush. */
  public IntSupplier lane(int index) {
    return () -> lanes.get(index);
  }

  public List<Integer> lanes() {
    List<Integer> list = new ArrayList<>();
    for (int i = 0; i < lanes.length(); i++) {
      list.add(lanes.get(i));
    }
    return list;
  }

  /** The name this replica's leases carry: the host (the pod name in Kubernetes), the process id and a random tag. */
  public String owner() {
    return owner;
  }

  /** Stops renewing and frees the lanes for the next replica at once. Call after the coalescers drained. */
  public Future<Void> release() {
    if (adopted != null) {
      return adopted.release();
    }
    if (pool == null) {
      return Future.succeededFuture();
    }
    vertx.cancelTimer(renewTimer);
    return pool.preparedQuery(sql.release()).execute(Tuple.of(owner))
      .timeout(leaseMs, TimeUnit.MILLISECONDS)
      .onSuccess(rows -> LOG.info("released lanes {}", lanes()))
      .onFailure(e -> LOG.warn("could not release lanes {} (they expire in {} ms): {}", lanes(), leaseMs, e.toString()))
      .<Void>mapEmpty()
      .recover(e -> Future.succeededFuture())
      // not waited for: a pool that lost a request may never finish closing (see leaseAttempt)
      .onComplete(done -> pool.close());
  }

  /**
   * Takes the lowest lanes that are free or expired until this owner holds as many as it has coalescers. Several
   * replicas starting together race for the same numbers; each statement takes one row atomically, so a lost race
   * just means another round. Returns the lanes held, lowest first.
   */
  private Future<List<Integer>> claim(List<Integer> alreadyHeld, int roundsLeft) {
    int wanted = lanes.length() - alreadyHeld.size();
    if (wanted <= 0) {
      return Future.succeededFuture(alreadyHeld);
    }
    if (roundsLeft == 0) {
      return Future.failedFuture(new IllegalStateException("could not lease " + lanes.length() + " lanes after "
        + CLAIM_ROUNDS + " rounds of races with other replicas"));
    }
    return pool.query(sql.list()).execute().compose(rows -> {
      Set<Integer> taken = new HashSet<>();
      Set<Integer> expired = new HashSet<>();
      for (Row row : rows) {
        int lane = row.getInteger(0);
        if (row.getInteger(2) == 1 && !owner.equals(row.getString(1))) {
          expired.add(lane);
        } else {
          taken.add(lane);
        }
      }
      List<Future<?>> attempts = new ArrayList<>();
      for (int lane = 0, tried = 0; lane < MAX_LANES && tried < wanted; lane++) {
        if (taken.contains(lane)) {
          continue;
        }
        tried++;
        attempts.add(expired.contains(lane)
          ? pool.preparedQuery(sql.takeIfExpired()).execute(Tuple.of(owner, leaseMs, lane))
          : pool.preparedQuery(sql.insertIfAbsent()).execute(Tuple.of(lane, owner, leaseMs)));
      }
      if (attempts.isEmpty()) {
        return Future.failedFuture(new IllegalStateException("all " + MAX_LANES + " lanes are leased"));
      }
      return Future.join(attempts).transform(done -> held())
        .compose(held -> held.size() >= lanes.length() ? Future.succeededFuture(held.subList(0, lanes.length()))
          : claim(held, roundsLeft - 1));
    });
  }

  private Future<List<Integer>> held() {
    return pool.preparedQuery(sql.held()).execute(Tuple.of(owner)).map(rows -> {
      List<Integer> held = new ArrayList<>();
      rows.forEach(row -> held.add(row.getInteger(0)));
      return held;
    });
  }

  /** Extends every lease of this owner; a lane another replica took meanwhile is replaced by a free one. */
  private void renew() {
    if (renewing) {
      return;
    }
    renewing = true;
    pool.preparedQuery(sql.renew()).execute(Tuple.of(leaseMs, owner))
      .compose(renewed -> held())
      .timeout(leaseMs, TimeUnit.MILLISECONDS)
      .compose(held -> {
        List<Integer> lost = lanes().stream().filter(lane -> !held.contains(lane)).toList();
        if (lost.isEmpty()) {
          return Future.succeededFuture();
        }
        LOG.warn("lanes {} were taken by another replica while this one could not renew them; leasing others", lost);
        List<Integer> kept = lanes().stream().filter(held::contains).toList();
        return claim(new ArrayList<>(kept), CLAIM_ROUNDS).onSuccess(now -> replaceLost(kept, now)).mapEmpty();
      })
      .onComplete(done -> {
        renewing = false;
        if (done.failed() && !renewFailed) {
          LOG.warn("could not renew lanes {} (leases last {} ms): {}", lanes(), leaseMs, done.cause().toString());
        } else if (done.succeeded() && renewFailed) {
          LOG.info("lanes {} renewed again", lanes());
        }
        renewFailed = done.failed();
      });
  }

  private void replaceLost(List<Integer> kept, List<Integer> held) {
    List<Integer> fresh = new ArrayList<>(held);
    fresh.removeAll(kept);
    for (int i = 0; i < lanes.length(); i++) {
      if (!kept.contains(lanes.get(i)) && !fresh.isEmpty()) {
        lanes.set(i, fresh.remove(0));
      }
    }
    LOG.info("now writing lanes {}", lanes());
  }

  /** Warns, per namespace, when its slots cannot give every lane in use a row of its own. */
  private void warnIfFewSlots(GatewayConfig config) {
    pool.query(sql.lanesInUse()).execute().onSuccess(rows -> {
      int inUse = rows.iterator().next().getNumeric(0).intValue();
      LOG.info("leased lanes {} as {}; {} lanes in use", lanes(), owner, inUse);
      for (String warning : slotShortfalls(config, inUse)) {
        LOG.warn(warning);
      }
    });
  }

  /** One message per namespace with fewer slots than {@code lanesInUse} lanes need. */
  public static List<String> slotShortfalls(GatewayConfig config, int lanesInUse) {
    int maxInFlight = config.getBatching().getMaxInFlight();
    int needed = SlotPicker.slotsNeeded(lanesInUse, maxInFlight);
    List<String> warnings = new ArrayList<>();
    for (NamespaceOptions namespace : config.getNamespaces().values()) {
      // a companion has its namespace's slots: the namespace's warning covers it
      if (namespace.getSlots() < needed && !namespace.isCompanion()) {
        warnings.add("namespace " + namespace.getName() + " has " + namespace.getSlots() + " slots but " + lanesInUse
          + " lanes are in use (replicas x ingest verticles), each writing " + SlotPicker.laneWidth(maxInFlight)
          + " slots (batching.maxInFlight + 1): writers will share slot rows and wait on each other's locks; set namespaces."
          + namespace.getName() + ".slots to at least " + needed);
      }
    }
    return warnings;
  }

  private static String ownerName() {
    String host = System.getenv().getOrDefault("HOSTNAME", "gateway");
    String name = host + "/" + ProcessHandle.current().pid() + "/"
      + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);
    return name.length() <= 64 ? name : name.substring(name.length() - 64);
  }

  private static Pool pool(Vertx vertx, DatabaseOptions database) {
    // no short connection timeout: the 5.0.10 pool loses the request whose wait times out (see leaseAttempt);
    // the attempt and renewal deadlines bound the waits instead
    // read committed: the renewal's search by owner must not lock the other replicas' lanes (and their gaps)
    return SqlStores.readCommittedPool(vertx, database, new PoolOptions().setName("lanes").setMaxSize(1));
  }
}
