package io.countergateway.faults;

import io.countergateway.faults.IncrementLoad.Outcome;
import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.JournalFaultShim;
import io.countergateway.testing.JournalSegments;
import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.millisSince;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * src/DESIGN.md §4 "Replay, exactly once" and "Sources that recover", where the database matters: a gateway in its
 * own JVM is killed or stopped with a journal that holds flushes, and what it answered is held against the table by
 * the suite's one oracle ({@link Ledger}) after the restart. A start after a crash is bounded whatever the journal
 * holds (T7), and a replayed flush whose flush source row is gone is never written again: its outcome can no longer
 * be known, so it is logged and dropped, never guessed.
 */
abstract class RecoveryContract extends JournalProcessSuite {
  private static final long CLOSED = Long.MAX_VALUE;
  private static final long SEGMENT_BYTES = 16L * 1024 * 1024;
  /** T7: a start after kill -9 with full 16 MiB segments is ready (or, during an outage, accepting) within this. */
  private static final long BOUNDED_START_MS = 10_000;
  private static final Pattern REPLAY = Pattern.compile("event=\"journal_replay\".*frames=\"(\\d+)\".*duration_ms=\"(\\d+)\"");

  private List<String> sources(String table, String where) {
    return FlushSourceContract.sql(tools, database(), conn -> conn.query("SELECT source FROM " + table
      + "_flush_sources" + where).execute().map(rows -> {
        List<String> sources = new ArrayList<>();
        for (Row row : rows) {
          sources.add(row.getString(0));
        }
        return sources;
      }));
  }

  private void update(String statement) {
    FlushSourceContract.sql(tools, database(), conn -> conn.query(statement).execute().mapEmpty());
  }

  private String minus(String column, int seconds) {
    return database() == FaultDatabase.POSTGRES ? column + " - interval '" + seconds + " seconds'"
      : column + " - INTERVAL " + seconds + " SECOND";
  }

  private static String inList(List<String> sources) {
    return sources.stream().map(s -> "'" + s + "'").reduce((a, b) -> a + ", " + b).orElse("''");
  }

  /**
   * Another replica, pruning every second: the dead sources' heartbeats and closings are moved a retention back, so
   * that its prune closes them and then deletes them with their ids, as two retentions of waiting would.
   */
  private void pruneAsAnotherReplica(String table, List<String> dead) {
    FaultDatabase db = database();
    JsonObject replica = FlushSourceContract.gatewayConfig(db.config(), table);
    replica.getJsonObject("batching").put("flushIdRetention", "1m").put("pruneInterval", "1s")
      .put("writeTimeout", "300ms").put("retryBackoffMax", "300ms");
    GatewayFixture other = GatewayFixture.start(replica);
    try {
      update("UPDATE " + table + "_flush_sources SET heartbeat_at = " + minus("heartbeat_at", 120)
        + " WHERE source IN (" + inList(dead) + ")");
      long since = System.nanoTime();
      while (sources(table, " WHERE fence = " + CLOSED).size() < dead.size() && millisSince(since) < 10_000) {
        sleep(200);
      }
      assertThat(sources(table, " WHERE fence = " + CLOSED)).as("sources the replica's prune closed")
        .containsExactlyInAnyOrderElementsOf(dead);
      update("UPDATE " + table + "_flush_sources SET closed_at = " + minus("closed_at", 120)
        + " WHERE source IN (" + inList(dead) + ")");
      since = System.nanoTime();
      while (!sources(table, " WHERE source IN (" + inList(dead) + ")").isEmpty() && millisSince(since) < 10_000) {
        sleep(200);
      }
      assertThat(sources(table, " WHERE source IN (" + inList(dead) + ")")).as("sources the replica's prune deleted")
        .isEmpty();
    } finally {
      stopQuietly(other);
      await(other.vertx.close(), 30);
    }
  }

  private static String replayLine(GatewayProcess gateway, int start) {
    List<String> lines = gateway.logLines();
    String found = null;
    int starts = 0;
    for (String line : lines) {
      if (line.contains("counter-gateway listening on")) {
        starts++;
      }
      if (starts >= start - 1 && line.contains("event=\"journal_replay\"")) {
        found = line;
      }
    }
    return found;
  }

  @Test
  @DisplayName("kill -9 after a load that grew the journal's segments to 16 MiB, database healthy: the restart is ready within 10 s and every 202 is counted exactly once")
  void boundedStartHealthy() {
    boundedStart(false);
  }

  @Test
  @DisplayName("kill -9 after a load that grew the journal's segments to 16 MiB, during an outage: the restart listens and accepts within 10 s, and once the database is back every 202 is counted exactly once")
  void boundedStartDuringOutage() {
    boundedStart(true);
  }

  private void boundedStart(boolean outage) {
    FaultDatabase db = database();
    int port = FreePorts.take();
    String table = table("fault_rec_t7");
    JsonObject config = processConfig(outage ? db.writerConfig(tools) : db.config(), table, port);
    // frames are the same under every policy; everyMs only makes the load that writes them quicker
    config.getJsonObject("journal").put("fsync", "everyMs");
    String dir = config.getJsonObject("journal").getString("dir");
    String prefix = Faults.uniquePrefix("t7");
    SqlConnection admin = await(db.connect(tools), 30);
    String label = db.label + " bounded start" + (outage ? " during an outage" : "");
    String name = "recovery-t7-" + (outage ? "outage-" : "") + db.name().toLowerCase();
    Ledger ledger = Ledger.named(label);
    try (GatewayProcess gateway = GatewayProcess.start(name, config, "512m")) {
      gateway.awaitListening(Duration.ofSeconds(90));
      WebClient probe = probe(port);
      if (outage) {
        await(db.readOnly(admin, true), 30);
      }
      JournalLoad load = new JournalLoad(tools, port, "downloads", ledger);
      // ~20 MB in large frames: the segments grow 256 KiB, 512 KiB … to 16 MiB, the last one a quarter full
      load.batches(prefix + "b", 46, 2_000, 200, 4);
      long largest = JournalSegments.files(dir).stream().mapToLong(f -> f.toFile().length()).max().orElse(0);
      // then thousands of small frames in the 16 MiB segment, each one a request
      load.singles(prefix + "s", 6_000, 16);
      load.close();
      gateway.kill();
      long written = JournalSegments.writtenBytes(dir);
      long onDisk = JournalSegments.fileBytes(dir);
      int frames = JournalSegments.files(dir).stream().mapToInt(f -> JournalSegments.frames(f).size()).sum();
      assertThat(largest).as("the journal's segments grew to journal.segmentBytes").isEqualTo(SEGMENT_BYTES);

      long restartAt = System.nanoTime();
      gateway.restart();
      int health = awaitHealth(probe, outage, 30_000);
      long startMs = millisSince(restartAt);
      String replay = replayLine(gateway, 2);
      Matcher figures = replay == null ? null : REPLAY.matcher(replay);
      long replayMs = figures != null && figures.find() ? Long.parseLong(figures.group(2)) : -1;
      System.out.printf("[%s] journal at kill -9: %,d bytes written in %,d frames, %,d bytes of segment files;"
          + " restart %s %d in %,d ms; replay %,d ms (%.1f MB/s written, %.1f MB/s of files): %s%n", label,
        written, frames, onDisk, outage ? "accepting" : "ready", health, startMs, replayMs,
        replayMs > 0 ? written / 1e3 / replayMs : Double.NaN, replayMs > 0 ? onDisk / 1e3 / replayMs : Double.NaN,
        replay);
      assertThat(health).as("%s within 30 s of the restart (%s)", outage ? "/health/accepting" : "/health/ready",
        gateway.logTail()).isEqualTo(200);
      assertThat(startMs).as("ms from the restart to %s (T7)", outage ? "accepting" : "ready")
        .isLessThanOrEqualTo(BOUNDED_START_MS);

      if (outage) {
        await(db.readOnly(admin, false), 30);
      }
      Ledger.Verdict verdict = settled(ledger, table, "downloads", prefix, 60_000);
      System.out.println(verdict.summary());
      verdict.assertHoldsAllAnswered();
      assertThat(verdict.count("202")).as("202s").isPositive();
    } finally {
      await(db.readOnly(admin, false).eventually(admin::close), 30);
    }
  }

  @Test
  @DisplayName("a flush whose source another replica's prune closed and deleted (the gateway down two retentions) is not written again after the restart: it is logged with its count, and every 202 is counted exactly once")
  void replayAfterPruneDeletedTheSource() {
    FaultDatabase db = database();
    String table = table("fault_rec_pruned");
    int port = FreePorts.take();
    ChaosProxy proxy = new ChaosProxy(tools, db.config().getInteger("port"), db == FaultDatabase.POSTGRES);
    int proxyPort = await(proxy.start(), 30);
    JsonObject config = processConfig(db.config().copy().put("port", proxyPort), table, port);
    String prefix = Faults.uniquePrefix("pruned");
    try (GatewayProcess gateway = GatewayProcess.start("recovery-pruned-" + db.name().toLowerCase(), config)) {
      gateway.awaitListening(Duration.ofSeconds(90));
      // one commit first: the flush source is registered, so the next committed write the proxy sees is a flush
      IncrementLoad warmUp = new IncrementLoad(tools, port, "downloads", prefix + "w", 1, 0, 1, 10_000);
      await(warmUp.start(), 30);
      IncrementLoad load = new IncrementLoad(tools, port, "downloads", prefix, 8, 8, 100_000, 20_000);
      Future<Void> loadDone = load.start();
      sleep(500);
      // a flush commits and the gateway dies before it hears so: its journal holds the flush formed, not settled
      proxy.dropNextCommittedAnswer(gateway::kill);
      long since = System.nanoTime();
      while (proxy.ambiguousCommits.get() == 0 && millisSince(since) < 10_000) {
        sleep(50);
      }
      load.finish();
      await(loadDone, 60);
      assertThat(proxy.ambiguousCommits.get()).as("flushes committed whose answer the killed gateway never got")
        .isEqualTo(1);
      List<Outcome> outcomes = new ArrayList<>(warmUp.outcomes());
      outcomes.addAll(load.outcomes());
      List<String> dead = sources(table, "");
      assertThat(dead).as("the killed gateway's flush sources").isNotEmpty();

      pruneAsAnotherReplica(table, dead);

      gateway.restart().awaitListening(Duration.ofSeconds(60));
      WebClient probe = probe(port);
      int ready = awaitReady(probe, 30_000);
      Ledger.Verdict verdict = settled(IncrementLoad.ledger(db.label + " replay after the prune", outcomes),
        table, "downloads", prefix, 20_000);
      List<String> unknown = gateway.logLines().stream()
        .filter(line -> line.matches("(?i).*\\b(WARN|ERROR)\\b.*outcome.unknown.*\\d.*")).toList();
      System.out.println(verdict.summary() + " | ready " + ready + ", dead sources " + dead + ", logged " + unknown);
      verdict.assertHolds();
      assertThat(unknown).as("a loud line of the replayed flush whose outcome can no longer be known, with its count")
        .isNotEmpty();
      assertThat(verdict.count("202")).as("202s").isPositive();
      assertThat(ready).as("/health/ready after the restart").isEqualTo(200);
      assertThat(gateway.stopGracefully(Duration.ofSeconds(60))).isZero();
    } finally {
      await(proxy.close(), 30);
    }
  }

  @Test
  @DisplayName("the database unreachable at connect longer than two retentions, the gateway killed and its flush source pruned and deleted: the restart writes every flush that never reached the database, SUM = every 202, nothing outcome unknown")
  void neverSentAfterALongOutage() {
    FaultDatabase db = database();
    String table = table("fault_rec_neversent");
    int port = FreePorts.take();
    RefusingProxy proxy = new RefusingProxy(tools, db.config().getInteger("port"), FreePorts.take());
    int proxyPort = proxyPort(proxy);
    JsonObject config = processConfig(db.config().copy().put("port", proxyPort), table, port);
    String prefix = Faults.uniquePrefix("neversent");
    try (GatewayProcess gateway = GatewayProcess.start("recovery-neversent-" + db.name().toLowerCase(), config)) {
      gateway.awaitListening(Duration.ofSeconds(90));
      // one commit first: the flush source is registered before the database goes away
      IncrementLoad warmUp = new IncrementLoad(tools, port, "downloads", prefix + "w", 1, 0, 1, 10_000);
      await(warmUp.start(), 30);
      await(proxy.refuse(), 30);
      sleep(500);
      IncrementLoad load = new IncrementLoad(tools, port, "downloads", prefix, 8, 8, 100_000, 3_000);
      await(load.start(), 60);
      gateway.kill();
      List<Outcome> outcomes = new ArrayList<>(warmUp.outcomes());
      outcomes.addAll(load.outcomes());
      List<String> dead = sources(table, "");
      assertThat(dead).as("the killed gateway's flush sources").isNotEmpty();
      pruneAsAnotherReplica(table, dead);

      await(proxy.listen(), 30);
      gateway.restart().awaitListening(Duration.ofSeconds(60));
      int ready = awaitReady(probe(port), 30_000);
      Ledger.Verdict verdict = settled(IncrementLoad.ledger(db.label + " never sent, source pruned", outcomes),
        table, "downloads", prefix, 20_000);
      List<String> gone = gateway.logLines().stream().filter(line -> line.contains("flush_source_gone")).toList();
      System.out.println(verdict.summary() + " | ready " + ready + ", dead sources " + dead + ", " + gone);
      verdict.assertHolds();
      assertThat(verdict.count("202")).as("202s during the outage").isPositive();
      assertThat(verdict.lost).as("acknowledged increments lost").isZero();
      assertThat(gone).as("the replay found the source gone").isNotEmpty()
        .allMatch(line -> line.contains("flushes_outcome_unknown=\"0\""));
      assertThat(gateway.logLines()).noneMatch(line -> line.contains("event=\"flush_outcome_unknown\""));
      assertThat(ready).as("/health/ready after the restart").isEqualTo(200);
      assertThat(gateway.stopGracefully(Duration.ofSeconds(60))).isZero();
    } finally {
      await(proxy.close(), 30);
    }
  }

  private int proxyPort(RefusingProxy proxy) {
    await(proxy.listen(), 30);
    return proxy.port();
  }

  @Test
  @DisplayName("a journal fsync fails (EIO): the gateway drains and exits with 75 by itself, and the restart counts every 202 exactly once with no step by hand")
  void crashOnlyAfterJournalFailure() {
    FaultDatabase db = database();
    String table = table("fault_rec_crashonly");
    int port = FreePorts.take();
    JournalFaultShim shim = JournalFaultShim.create();
    JsonObject config = processConfig(db.config(), table, port);
    String prefix = Faults.uniquePrefix("crashonly");
    try (GatewayProcess gateway = GatewayProcess.start("recovery-crashonly-" + db.name().toLowerCase(), config,
      "256m", shim.launcher())) {
      gateway.awaitListening(Duration.ofSeconds(90));
      IncrementLoad load = new IncrementLoad(tools, port, "downloads", prefix, 8, 8, 100_000, 20_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 1_500);
      shim.set(JournalFaultShim.SYNC_EIO);
      int exit = gateway.awaitExit(Duration.ofSeconds(60));
      load.finish();
      await(loadDone, 60);
      shim.clear();
      assertThat(shim.firstFaultNanos()).as("the journal's fsync failed").isPresent();
      assertThat(exit).as("the exit status a supervisor restarts on").isEqualTo(75);

      gateway.restart().awaitListening(Duration.ofSeconds(60));
      int ready = awaitReady(probe(port), 30_000);
      Ledger.Verdict verdict = settled(IncrementLoad.ledger(db.label + " exit after a journal failure",
        load.outcomes()), table, "downloads", prefix, 20_000);
      System.out.println(verdict.summary() + " | exit " + exit + ", ready " + ready);
      verdict.assertHolds();
      assertThat(verdict.count("202")).as("202s before the failure").isPositive();
      assertThat(ready).as("/health/ready after the restart").isEqualTo(200);
      assertThat(gateway.stopGracefully(Duration.ofSeconds(60))).isZero();
    } finally {
      shim.clear();
    }
  }

  @Test
  @DisplayName("SIGTERM after the journal failed (fsync EIO) does not delete the flush sources whose settlements never reached the disk: after the restart every 202 is counted exactly once")
  void stopAfterJournalFailure() {
    FaultDatabase db = database();
    String table = table("fault_rec_jfail");
    int port = FreePorts.take();
    JournalFaultShim shim = JournalFaultShim.create();
    ChaosProxy proxy = new ChaosProxy(tools, db.config().getInteger("port"), db == FaultDatabase.POSTGRES);
    int proxyPort = await(proxy.start(), 30);
    JsonObject config = processConfig(db.config().copy().put("port", proxyPort), table, port);
    String prefix = Faults.uniquePrefix("jfail");
    try (GatewayProcess gateway = GatewayProcess.start("recovery-jfail-" + db.name().toLowerCase(), config, "256m",
      shim.launcher())) {
      gateway.awaitListening(Duration.ofSeconds(90));
      // flushes take 300 ms: when the journal fails, some are in flight and settle after it
      proxy.latency(300);
      IncrementLoad load = new IncrementLoad(tools, port, "downloads", prefix, 8, 8, 100_000, 20_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 1_500);
      shim.set(JournalFaultShim.SYNC_EIO);
      sleep(2_000);
      int exit = gateway.stopGracefully(Duration.ofSeconds(60));
      load.finish();
      await(loadDone, 60);
      shim.clear();
      proxy.latency(0);
      assertThat(shim.firstFaultNanos()).as("the journal's fsync failed").isPresent();

      gateway.restart().awaitListening(Duration.ofSeconds(60));
      int ready = awaitReady(probe(port), 30_000);
      Ledger.Verdict verdict = settled(IncrementLoad.ledger(db.label + " SIGTERM after a journal failure", load.outcomes()),
        table, "downloads", prefix, 20_000);
      System.out.println(verdict.summary() + " | exit " + exit + ", ready " + ready);
      verdict.assertHolds();
      assertThat(verdict.count("202")).as("202s before the failure").isPositive();
      assertThat(ready).as("/health/ready after the restart").isEqualTo(200);
      assertThat(gateway.stopGracefully(Duration.ofSeconds(60))).isZero();
    } finally {
      await(proxy.close(), 30);
    }
  }

  @Test
  @DisplayName("kill -9 while a replay's journal writes stall after its snapshot: the next restart counts every answered increment once")
  void crashRightAfterReplay() {
    FaultDatabase db = database();
    String table = table("fault_rec_rereplay");
    int port = FreePorts.take();
    JournalFaultShim shim = JournalFaultShim.create();
    JsonObject config = processConfig(db.writerConfig(tools), table, port);
    String prefix = Faults.uniquePrefix("rereplay");
    SqlConnection admin = await(db.connect(tools), 30);
    Ledger ledger = Ledger.named(db.label + " kill -9 right after a replay");
    try (GatewayProcess gateway = GatewayProcess.start("recovery-rereplay-" + db.name().toLowerCase(), config,
      "256m", shim.launcher())) {
      gateway.awaitListening(Duration.ofSeconds(90));
      await(db.readOnly(admin, true), 30);
      JournalLoad load = new JournalLoad(tools, port, "downloads", ledger);
      // the first flush takes the whole batch and fails against the read-only database, the singles wait behind it
      load.batches(prefix + "b", 1, 500, 40, 1);
      load.singles(prefix, 100, 8);
      load.close();
      sleep(500);
      gateway.kill();
      await(db.readOnly(admin, false), 30);

      // the replay's snapshot (the first frame of a new segment) reaches the disk, nothing written after it does: the
      // flushes formed from what it holds are never forced, so never attempted, and the kill finds them only journaled.
      // The kill between a replayed flush's commit and its settlement reaching the disk is the crash-point harness's
      // (RecoveryPropertiesTest kills each replay at any statement and file operation)
      shim.set(JournalFaultShim.WRITE_STALL);
      gateway.restart().awaitListening(Duration.ofSeconds(60));
      long since = System.nanoTime();
      long replayedAt = -1;
      while (millisSince(since) < 10_000) {
        if (gateway.logLines().stream().anyMatch(line -> line.contains("event=\"journal_replay_end\""))) {
          replayedAt = millisSince(since);
          sleep(500);
          break;
        }
        sleep(20);
      }
      gateway.kill();
      shim.clear();
      long afterFirstReplay = await(db.sums(tools, table, "downloads", prefix), 30).values().stream()
        .mapToLong(Long::longValue).sum();

      gateway.restart().awaitListening(Duration.ofSeconds(60));
      int ready = awaitReady(probe(port), 30_000);
      Ledger.Verdict verdict = settled(ledger, table, "downloads", prefix, 20_000);
      System.out.println(verdict.summary() + " | SUM after the first replay " + afterFirstReplay
        + ", the replay over " + replayedAt + " ms into it, ready " + ready);
      verdict.assertHoldsAllAnswered();
      assertThat(verdict.count("202")).as("202s").isEqualTo(600);
      assertThat(ready).as("/health/ready after the second restart").isEqualTo(200);
      assertThat(gateway.stopGracefully(Duration.ofSeconds(60))).isZero();
    } finally {
      shim.clear();
      await(db.readOnly(admin, false).eventually(admin::close), 30);
    }
  }
}
