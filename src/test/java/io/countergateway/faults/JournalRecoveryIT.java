package io.countergateway.faults;

import io.countergateway.config.ConfigLoader;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.JournalOptions;
import io.countergateway.faults.IncrementLoad.Outcome;
import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.JournalFaultShim;
import io.countergateway.testing.JournalSegments;
import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * src/DESIGN.md §4 "Journal" and "Replay, exactly once" where only the journal decides: a failing or full disk, a
 * damaged frame, and a start over a journal the configuration no longer matches. These run on embedded PostgreSQL
 * only: the database is there to take the writes (or refuse them, as an outage), and the rules under test are the
 * journal's and the start's, the same code whatever the dialect; the dialect-dependent recovery is in
 * {@link RecoveryContract}, run on both.
 */
@DisplayName("The journal's disk failing or filling, a damaged frame, and starts the journal must refuse, on embedded PostgreSQL")
class JournalRecoveryIT extends JournalProcessSuite {
  private static final Pattern LOST = Pattern.compile("damaged_frames=\"(\\d+)\".*damaged_increments=\"(\\d+)\"");
  private static final String DRAINED_ALL = "everything pending was flushed";

  @Override
  FaultDatabase database() {
    return FaultDatabase.POSTGRES;
  }

  /** Starts {@code config} as a second process on the same journal; answers its exit code, or null if it listened. */
  private static Integer startRefusedOrListening(GatewayProcess gateway) {
    try {
      gateway.awaitListening(Duration.ofSeconds(60));
      return null;
    } catch (IllegalStateException exited) {
      if (gateway.isAlive()) {
        throw exited;
      }
      return gateway.stopGracefully(Duration.ofSeconds(1));
    }
  }

  // --- a failed journal write or fsync ------------------------------------------------------------------------------

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {JournalFaultShim.WRITE_EIO, JournalFaultShim.SYNC_EIO})
  @DisplayName("a journal write or fsync that fails is never answered 202: 504 outcome_unknown for the increments it carried, 503 journal_unavailable after; after a restart every 202 is counted exactly once")
  void failedJournalIsNever202(String mode) {
    FaultDatabase db = database();
    String table = table("fault_jrec_eio");
    int port = FreePorts.take();
    JournalFaultShim shim = JournalFaultShim.create();
    JsonObject config = processConfig(db.config(), table, port);
    String prefix = Faults.uniquePrefix("eio");
    try (GatewayProcess gateway = GatewayProcess.start("journal-eio-" + mode, config, "256m", shim.launcher())) {
      gateway.awaitListening(Duration.ofSeconds(90));
      IncrementLoad load = new IncrementLoad(tools, port, "downloads", prefix, 8, 8, 100_000, 20_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 1_000);
      shim.set(mode);
      sleep(2_000);
      load.finish();
      await(loadDone, 60);
      OptionalLong failedAt = shim.firstFaultNanos();
      assertThat(failedAt).as("the journal's %s failed", mode.startsWith("write") ? "write" : "fsync").isPresent();
      // the shim holds its first failing call 500 ms: every answer an earlier, successful call allowed came before
      long after = failedAt.getAsLong() + TimeUnit.MILLISECONDS.toNanos(400);
      Map<String, Integer> answersAfter = new TreeMap<>();
      for (Outcome outcome : load.outcomes()) {
        if (outcome.answeredAt - after > 0) {
          answersAfter.merge(outcome.status + " " + outcome.error, 1, Integer::sum);
        }
      }
      gateway.kill();
      shim.clear();
      gateway.restart().awaitListening(Duration.ofSeconds(60));
      int ready = awaitReady(probe(port), 30_000);
      Ledger.Verdict verdict = settled(IncrementLoad.ledger("journal " + mode, load.outcomes()), table, "downloads",
        prefix, 20_000);
      System.out.println(verdict.summary() + " | answered after the failure: " + answersAfter + ", ready " + ready);
      assertThat(answersAfter).as("answers after the journal's %s failed", mode).isNotEmpty();
      assertThat(answersAfter.keySet()).as("answers after the journal's %s failed", mode)
        .noneMatch(answer -> answer.startsWith("202"))
        .anyMatch(answer -> answer.equals("503 journal_unavailable") || answer.equals("504 outcome_unknown"));
      verdict.assertHolds();
      assertThat(verdict.count("202")).as("202s before the failure").isPositive();
      assertThat(ready).as("/health/ready after the restart").isEqualTo(200);
    } finally {
      shim.clear();
    }
  }

  // --- the journal's directory removed under a running gateway -------------------------------------------------------

  /**
   * {@code rm -rf journal.dir} under load: accepted increments get 503 within the check's second, never 202 after it;
   * with the database healthy the stop writes everything held and exits 0, every 202 counted once; with the database
   * refusing writes at the stop, the stop says the held increments are lost and exits non-zero — never a clean stop.
   */
  @ParameterizedTest(name = "database refusing writes at the stop: {0}")
  @ValueSource(booleans = {false, true})
  @DisplayName("journal.dir removed under load: 503 journal_unavailable within a second and no 202 after; the stop writes what is held (exit 0, every 202 counted once) or, the database refusing, says what is lost and exits non-zero")
  void directoryRemoved(boolean databaseRefusing) throws IOException {
    FaultDatabase db = database();
    String table = table("fault_jrec_rmdir");
    int port = FreePorts.take();
    JsonObject config = processConfig(db.writerConfig(tools), table, port);
    Path dir = Path.of(config.getJsonObject("journal").getString("dir"));
    String prefix = Faults.uniquePrefix("rmdir");
    SqlConnection admin = await(db.connect(tools), 30);
    try (GatewayProcess gateway = GatewayProcess.start("journal-rmdir-" + databaseRefusing, config)) {
      gateway.awaitListening(Duration.ofSeconds(90));
      IncrementLoad load = new IncrementLoad(tools, port, "downloads", prefix, 8, 8, 100_000, 20_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 1_000);
      if (databaseRefusing) {
        await(db.readOnly(admin, true), 30); // what is answered from now on is held, in memory and the removed files
        sleep(300);
      }
      long removedAt = System.nanoTime();
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
      }
      sleep(2_500);
      load.finish();
      await(loadDone, 60);
      long noticedBy = removedAt + TimeUnit.MILLISECONDS.toNanos(1_500);
      Map<String, Integer> answersAfter = new TreeMap<>();
      for (Outcome outcome : load.outcomes()) {
        if (outcome.answeredAt - noticedBy > 0) {
          answersAfter.merge(outcome.status + " " + outcome.error, 1, Integer::sum);
        }
      }
      int exit = gateway.stopGracefully(Duration.ofSeconds(60));
      List<String> log = gateway.logLines();
      if (databaseRefusing) {
        await(db.readOnly(admin, false), 30);
      }
      Ledger.Verdict verdict = settled(IncrementLoad.ledger("journal.dir removed", load.outcomes()), table, "downloads",
        prefix, databaseRefusing ? 3_000 : 20_000);
      System.out.println(verdict.summary() + " | answered 1.5 s after the removal: " + answersAfter + ", exit " + exit
        + "\n" + gateway.logTail());
      assertThat(log).as("an ERROR naming the directory").anyMatch(line -> line.contains("journal_unreachable")
        && line.contains(dir.toAbsolutePath().normalize().toString()));
      assertThat(answersAfter.keySet()).as("answers 1.5 s after the removal").isNotEmpty()
        .noneMatch(answer -> answer.startsWith("202")).contains("503 journal_unavailable");
      assertThat(verdict.overCounted).as("counted twice").isZero();
      if (databaseRefusing) {
        assertThat(exit).as("the stop that could not keep what it held").isNotZero();
        assertThat(log).as("the stop's line").anyMatch(line -> line.contains("stopped_with_loss"));
      } else {
        assertThat(exit).as("the stop that wrote everything").isZero();
        verdict.assertHoldsAllAnswered();
      }
    } finally {
      await(db.readOnly(admin, false).eventually(admin::close), 30);
    }
  }

  // --- one damaged frame --------------------------------------------------------------------------------------------

  @Test
  @DisplayName("one flipped byte in a frame in the middle of a segment, database healthy: it costs that frame only, nothing is counted twice, and the replay log reports the loss")
  void flippedByteHealthy() {
    flippedByte(false);
  }

  @Test
  @DisplayName("one flipped byte in a frame in the middle of a segment, during an outage: it costs that frame only, every other 202 is counted once, and the replay log reports the loss")
  void flippedByteDuringOutage() {
    flippedByte(true);
  }

  private void flippedByte(boolean outage) {
    FaultDatabase db = database();
    String table = table("fault_jrec_flip");
    int port = FreePorts.take();
    JsonObject config = processConfig(outage ? db.writerConfig(tools) : db.config(), table, port);
    // flushes of many increments each: the flush formed after the damaged frame takes increments journaled before it
    config.getJsonObject("batching").put("maxDelay", "50ms");
    config.getJsonObject("journal").put("fsync", "everyMs");
    String dir = config.getJsonObject("journal").getString("dir");
    String prefix = Faults.uniquePrefix("flip");
    SqlConnection admin = await(db.connect(tools), 30);
    try (GatewayProcess gateway = GatewayProcess.start("journal-flip" + (outage ? "-outage" : ""), config)) {
      gateway.awaitListening(Duration.ofSeconds(90));
      if (outage) {
        await(db.readOnly(admin, true), 30);
      }
      IncrementLoad load = new IncrementLoad(tools, port, "downloads", prefix, 16, 16, 150, 20_000);
      await(load.start(), 60);
      gateway.kill();

      // a frame of one request's increment, in the middle of the segment with the most frames
      Pattern ids = Pattern.compile(Pattern.quote(prefix) + "\\d+");
      List<JournalSegments.Frame> frames = JournalSegments.files(dir).stream().map(JournalSegments::frames)
        .max((a, b) -> Integer.compare(a.size(), b.size())).orElseThrow();
      JournalSegments.Frame damaged = null;
      Set<String> damagedIds = new TreeSet<>();
      for (int i = frames.size() / 2; i < frames.size() - 2 && damaged == null; i++) {
        JournalSegments.Frame frame = frames.get(i);
        Set<String> named = new TreeSet<>();
        Matcher matcher = ids.matcher(frame.text());
        while (matcher.find()) {
          named.add(matcher.group());
        }
        if (frame.payload()[0] == 1 && named.size() == 1) {
          damaged = frame;
          damagedIds = named;
        }
      }
      assertThat(damaged).as("a frame of one increment in the middle of a segment of %d frames", frames.size())
        .isNotNull();
      int framesAfter = frames.size() - frames.indexOf(damaged) - 1;
      JournalSegments.flipByte(damaged, damaged.payload().length / 2);

      if (outage) {
        await(db.readOnly(admin, false), 30);
      }
      gateway.restart().awaitListening(Duration.ofSeconds(60));
      int ready = awaitReady(probe(port), 30_000);
      Set<String> spared = damagedIds;
      // settled once every id but the damaged frame's is in the table: that one may never land
      Ledger.Verdict verdict = settled(IncrementLoad.ledger("one flipped byte" + (outage ? " during an outage" : ""),
        load.outcomes()), table, "downloads", prefix, 20_000, settled -> beyond(settled, spared).isEmpty());
      String replay = gateway.logLines().stream().filter(line -> line.contains("event=\"journal_replay\""))
        .reduce((a, b) -> b).orElse("");
      Matcher lost = LOST.matcher(replay);
      System.out.println(verdict.summary() + " | damaged " + damagedIds + " with " + framesAfter
        + " frames after it in the segment; ready " + ready + "; " + replay);
      List<String> beyondTheFrame = beyond(verdict, spared);
      assertThat(beyondTheFrame).as("%s: what the damaged frame %s does not explain", verdict.summary(), damagedIds)
        .isEmpty();
      assertThat(verdict.overCounted).as("ids counted twice").isZero();
      assertThat(lost.find()).as("the replay log reports the loss: %s", replay).isTrue();
      assertThat(lost.group(1)).as("frames lost, as the replay log reports them").isEqualTo("1");
      assertThat(lost.group(2)).as("increments lost, as the replay log reports them").isEqualTo("1");
      assertThat(ready).as("/health/ready after the restart").isEqualTo(200);
    } finally {
      await(db.readOnly(admin, false).eventually(admin::close), 30);
    }
  }

  /** The violations of ids other than {@code spared}. */
  private static List<String> beyond(Ledger.Verdict verdict, Set<String> spared) {
    return verdict.violations.stream().filter(v -> spared.stream().noneMatch(id -> v.startsWith(id + " "))).toList();
  }

  // --- a full disk --------------------------------------------------------------------------------------------------

  @Test
  @DisplayName("a full disk under the journal: new accepted increments get 503 and readiness says so, everything drains when the database returns, SIGTERM does not say everything pending was flushed while the journal holds increments, and the restart works")
  void fullDisk() throws IOException, InterruptedException {
    Path mount = Files.createDirectories(Path.of("target", "journal-tmpfs", UUID.randomUUID().toString().substring(0, 8)))
      .toAbsolutePath();
    Process mounting = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount.toString())
      .redirectErrorStream(true).start();
    assumeTrue(mounting.waitFor(30, TimeUnit.SECONDS) && mounting.exitValue() == 0,
      "a 1 MiB tmpfs needs root: " + new String(mounting.getInputStream().readAllBytes()));
    FaultDatabase db = database();
    String table = table("fault_jrec_full");
    int port = FreePorts.take();
    JsonObject config = processConfig(db.writerConfig(tools), table, port);
    config.getJsonObject("journal").put("dir", mount.toString()).put("segmentBytes", 65_536).put("fsync", "everyMs");
    String prefix = Faults.uniquePrefix("full");
    Ledger ledger = Ledger.named("journal on a full disk");
    SqlConnection admin = await(db.connect(tools), 30);
    try (GatewayProcess gateway = GatewayProcess.start("journal-full-disk", config)) {
      gateway.awaitListening(Duration.ofSeconds(90));
      WebClient probe = probe(port);
      await(db.readOnly(admin, true), 30);
      JournalLoad load = new JournalLoad(tools, port, "downloads", ledger);
      // frames of 50 new counters each until the 1 MiB is taken: what a flush of them must record grows with it
      load.freshBatches(prefix, 600, 50, 40, 2);
      Ledger.Verdict full = ledger.against(Map.of());
      int readyFull = Faults.ready(probe);
      int acceptingFull = Faults.accepting(probe);
      await(db.readOnly(admin, false), 30);
      Ledger.Verdict drained = settled(ledger, table, "downloads", prefix, 20_000);
      int readyDrained = awaitReady(probe, 10_000);
      load.close();
      int exit = gateway.stopGracefully(Duration.ofSeconds(60));
      boolean claimedAll = gateway.logLines().stream().anyMatch(line -> line.contains(DRAINED_ALL));
      Ledger.Verdict atStop = ledger.against(await(db.sums(tools, table, "downloads", prefix), 30));
      String restart = "listening";
      try {
        gateway.restart().awaitListening(Duration.ofSeconds(60));
      } catch (IllegalStateException refused) {
        restart = gateway.logLines().stream().filter(line -> line.contains("cannot start")).reduce((a, b) -> b)
          .orElse(refused.getMessage());
      }
      int readyRestart = awaitReady(probe, restart.equals("listening") ? 30_000 : 0);
      Ledger.Verdict restarted = settled(ledger, table, "downloads", prefix, restart.equals("listening") ? 20_000 : 0);
      System.out.println(restarted.summary() + " | while full " + full.answers + ", ready " + readyFull + ", accepting "
        + acceptingFull + "; SUM once the database returned " + drained.sum + " of " + drained.answered + ", ready "
        + readyDrained + "; stop " + exit + ", claimed everything flushed " + claimedAll + " with SUM " + atStop.sum
        + "; restart " + restart + ", ready " + readyRestart);
      assertThat(full.count("503 journal_no_room")).as("accepted increments refused for want of room").isPositive();
      assertThat(full.answers.keySet()).as("answers while the disk filled").containsOnly("202", "503 journal_no_room");
      assertThat(readyFull).as("/health/ready while the journal has no room").isEqualTo(503);
      assertThat(acceptingFull).as("/health/accepting while the journal has no room").isEqualTo(503);
      drained.assertHoldsAllAnswered();
      assertThat(readyDrained).as("/health/ready once everything drained").isEqualTo(200);
      assertThat(exit).as("exit code of SIGTERM").isZero();
      if (claimedAll) {
        atStop.assertHolds();
      }
      assertThat(restart).as("the restart on the full disk").isEqualTo("listening");
      assertThat(readyRestart).as("/health/ready after the restart").isEqualTo(200);
      restarted.assertHoldsAllAnswered();
    } finally {
      await(db.readOnly(admin, false).eventually(admin::close), 30);
      new ProcessBuilder("umount", "-l", mount.toString()).start().waitFor(30, TimeUnit.SECONDS);
    }
  }

  // --- starts over a journal the configuration no longer matches ----------------------------------------------------

  /** What a gateway stopped during an outage left in its journal. */
  private record Held(GatewayProcess gateway, JsonObject config, Ledger downloads, Ledger likes, String prefix) {
  }

  /** A gateway takes {@code downloads} and {@code likes} increments during an outage; SIGTERM, or kill -9 if {@code kill}. */
  private Held heldAcrossStop(String name, String table, boolean kill) {
    FaultDatabase db = database();
    int port = FreePorts.take();
    JsonObject config = processConfig(db.writerConfig(tools), table, port);
    String prefix = Faults.uniquePrefix(name);
    Ledger downloads = Ledger.named(name + " downloads");
    Ledger likes = Ledger.named(name + " likes");
    SqlConnection admin = await(db.connect(tools), 30);
    GatewayProcess gateway = GatewayProcess.start(name, config);
    try {
      gateway.awaitListening(Duration.ofSeconds(90));
      await(db.readOnly(admin, true), 30);
      JournalLoad onLikes = new JournalLoad(tools, port, "likes", likes);
      JournalLoad onDownloads = new JournalLoad(tools, port, "downloads", downloads);
      onLikes.singles(prefix + "a", 50, 8);
      onDownloads.singles(prefix, 500, 8);
      onLikes.singles(prefix + "b", 50, 8);
      onDownloads.close();
      onLikes.close();
      sleep(300);
      if (kill) {
        gateway.kill();
      } else {
        assertThat(gateway.stopGracefully(Duration.ofSeconds(60))).as("exit code of SIGTERM").isZero();
      }
    } finally {
      await(db.readOnly(admin, false).eventually(admin::close), 30);
    }
    return new Held(gateway, config, downloads, likes, prefix);
  }

  /** Restarts the original configuration and holds both namespaces' answers against the table. */
  private void nothingLost(Held held, String table) {
    held.gateway.restart().awaitListening(Duration.ofSeconds(60));
    int port = held.config.getJsonObject("http").getInteger("port");
    assertThat(awaitReady(probe(port), 30_000)).as("/health/ready with the original configuration").isEqualTo(200);
    Ledger.Verdict downloads = settled(held.downloads, table, "downloads", held.prefix, 20_000);
    Ledger.Verdict likes = settled(held.likes, table, "likes", held.prefix, 20_000);
    System.out.println(downloads.summary() + "\n" + likes.summary());
    downloads.assertHoldsAllAnswered();
    likes.assertHoldsAllAnswered();
    assertThat(downloads.count("202") + likes.count("202")).as("202s").isEqualTo(600);
    assertThat(held.gateway.stopGracefully(Duration.ofSeconds(60))).isZero();
  }

  @Test
  @DisplayName("a namespace removed from the config while the journal holds its increments: the start is refused in one line naming namespaces.likes and the count, and no namespace's increments are lost")
  void namespaceRemovedWithIncrementsHeld() {
    String table = table("fault_jrec_ns");
    Held held = heldAcrossStop("journal-ns-removed", table, false);
    JsonObject without = held.config.copy();
    without.getJsonObject("namespaces").remove("likes");
    String latePrefix = Faults.uniquePrefix("late");
    Ledger late = Ledger.named("downloads taken by the start without likes");
    try (GatewayProcess second = GatewayProcess.start("journal-ns-removed-without-likes", without)) {
      Integer exit = startRefusedOrListening(second);
      if (exit == null) {
        // what it does with the journal it took, and with new increments
        JournalLoad more = new JournalLoad(tools, without.getJsonObject("http").getInteger("port"), "downloads", late);
        more.singles(latePrefix, 20, 4);
        more.close();
        sleep(3_000);
        second.stopGracefully(Duration.ofSeconds(60));
      }
      List<String> naming = second.logLines().stream().filter(line -> line.contains("namespaces.likes")).toList();
      System.out.println("start without likes: exit " + exit + ", lines naming namespaces.likes " + naming + "\n"
        + second.logTail());
      nothingLost(held, table);
      Ledger.Verdict taken = late.against(await(database().sums(tools, table, "downloads", latePrefix), 30));
      System.out.println(taken.summary());
      taken.assertHoldsAllAnswered();
      assertThat(exit).as("the start without likes is refused (%s)", second.logTail()).isNotNull().isNotZero();
      assertThat(naming).as("a line naming namespaces.likes and the 100 increments held").isNotEmpty()
        .anyMatch(line -> line.matches(".*\\b100\\b.*"));
    }
  }

  /**
   * Two starts over one journal killed during an outage (so it holds increments and flushes formed but not settled):
   * each refused start must leave the journal as it was, so the second sees what the first did.
   */
  @Test
  @DisplayName("starts the journal must refuse: journal.enabled false over a journal that holds increments, and database.table changed while it holds unsettled flushes; each refused naming its key, nothing written to the new table, nothing lost")
  void refusedOverHeldJournal() {
    String table = table("fault_jrec_refuse");
    Held held = heldAcrossStop("journal-refused", table, true);
    JsonObject disabled = held.config.copy();
    disabled.getJsonObject("journal").put("enabled", false);
    Integer disabledExit;
    List<String> disabledLog;
    try (GatewayProcess second = GatewayProcess.start("journal-refused-disabled", disabled)) {
      disabledExit = startRefusedOrListening(second);
      if (disabledExit == null) {
        second.stopGracefully(Duration.ofSeconds(60));
      }
      disabledLog = second.logLines();
      System.out.println("start with journal.enabled false: exit " + disabledExit + "\n" + second.logTail());
    }
    String other = table + "_new";
    JsonObject moved = held.config.copy();
    moved.getJsonObject("database").put("table", other);
    Integer movedExit;
    List<String> movedLog;
    long inNewTable = 0;
    try (GatewayProcess third = GatewayProcess.start("journal-refused-table", moved)) {
      movedExit = startRefusedOrListening(third);
      if (movedExit == null) {
        sleep(3_000); // what it does with the flushes it took
        third.stopGracefully(Duration.ofSeconds(60));
      }
      movedLog = third.logLines();
      try {
        inNewTable = await(database().sums(tools, other, "downloads", held.prefix), 30).values().stream()
          .mapToLong(Long::longValue).sum();
      } catch (IllegalStateException noTable) {
        // the refused start made no table
      }
      System.out.println("start on table " + other + ": exit " + movedExit + ", SUM written there " + inNewTable
        + "\n" + third.logTail());
    }
    nothingLost(held, table);
    assertThat(disabledExit).as("the start with the journal disabled is refused").isNotNull().isNotZero();
    assertThat(disabledLog).as("a line naming journal.enabled").anyMatch(line -> line.contains("journal.enabled"));
    assertThat(inNewTable).as("increments the journal held for %s written into %s", table, other).isZero();
    assertThat(movedExit).as("the start on another table is refused").isNotNull().isNotZero();
    assertThat(movedLog).as("a line naming database.table").anyMatch(line -> line.contains("database.table"));
  }

  /**
   * A journal killed during an outage (increments and flushes formed but not settled), then started against another
   * database — MariaDB instead of PostgreSQL, another database name on the same server — and with a namespace made
   * windowed: each start refused in one line naming its key and the counts held, and the original configuration then
   * writes every 202 once.
   */
  @Test
  @DisplayName("another database (database.kind, database.name) or a namespace made windowed while the journal holds work: each start refused naming its key and the counts held, nothing lost")
  void otherDatabaseOrWindowRefused() {
    String table = table("fault_jrec_target");
    Held held = heldAcrossStop("journal-target", table, true);
    JsonObject mariadb = held.config.copy();
    mariadb.put("database", FaultDatabase.MARIADB.config().copy().put("table", table));
    JsonObject otherName = held.config.copy();
    otherName.getJsonObject("database").put("name", "postgres");
    JsonObject windowed = held.config.copy();
    windowed.getJsonObject("namespaces").put("likes", new JsonObject().put("window", new JsonObject()
      .put("bucket", "hour")));
    Map<String, List<String>> logs = new TreeMap<>();
    Map<String, Integer> exits = new TreeMap<>();
    for (Map.Entry<String, JsonObject> start : Map.of("database.kind", mariadb, "database.name", otherName,
      "namespaces.likes.window", windowed).entrySet()) {
      try (GatewayProcess other = GatewayProcess.start("journal-target-" + start.getKey(), start.getValue())) {
        Integer exit = startRefusedOrListening(other);
        if (exit == null) {
          sleep(3_000); // what it does with what the journal held
          other.stopGracefully(Duration.ofSeconds(60));
        }
        exits.put(start.getKey(), exit);
        logs.put(start.getKey(), other.logLines());
        System.out.println("start moving " + start.getKey() + ": exit " + exit + "\n" + other.logTail());
      }
    }
    nothingLost(held, table);
    logs.forEach((key, log) -> {
      assertThat(exits.get(key)).as("the start moving %s is refused", key).isNotNull().isNotZero();
      assertThat(log).as("one line naming %s and what the journal holds", key)
        .anyMatch(line -> line.contains(key + ": ") && line.contains("counters and") && line.contains("flushes"));
    });
  }

  @Test
  @DisplayName("journal.fsync: off written unquoted, as YAML reads it (false), is accepted as the policy off")
  void unquotedFsyncOff() throws IOException {
    Path file = Files.createDirectories(Path.of("target", "journal-config")).resolve("fsync-off.yaml");
    Files.writeString(file, "namespaces:\n  downloads: {}\njournal:\n  fsync: off\n");
    GatewayConfig config = await(ConfigLoader.load(tools, file.toString()), 30);
    assertThat(config.getJournal().getFsync()).isEqualTo(JournalOptions.Fsync.OFF);
  }
}
