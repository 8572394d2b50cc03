package io.countergateway.internal.write;

import io.countergateway.internal.model.Increment;
import io.countergateway.testing.HarnessShare;
import io.countergateway.testing.Ledger;
import io.countergateway.testing.ScriptedStore;
import io.countergateway.internal.write.journal.FaultingFiles;
import io.countergateway.internal.write.journal.ReplayReport;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;
import net.jqwik.api.statistics.Statistics;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The crash-point harness of the write path (src/DESIGN.md §4): random workloads of accepted and committed increments
 * against a scripted database with its own faults (an answer lost after COMMIT, a lost connection, an attempt held and
 * landing late), a process killed at any statement it sends, the database's prune closing or deleting the dead run's
 * flush sources, a second kill during the replay; after every recovery one oracle ({@link Ledger}) checks per counter
 * {@code answered ≤ SUM ≤ answered + unanswered}, and that the start and the drain finished.
 */
@Label("The write path across crashes at every statement, on a scripted database")
class RecoveryPropertiesTest {
  /** What a workload does, in order. */
  sealed interface Op permits Accept, Commit, Fault, Pause {
  }

  /** ack=accepted (a beacon, or a batch of them): answered once journaled. */
  record Accept(List<String> ids) implements Op {
  }

  /** ack=commit: answered once committed. */
  record Commit(List<String> ids, long delta) implements Op {
  }

  /** The database's next answer goes wrong as {@code kind} says. */
  record Fault(FaultKind kind) implements Op {
  }

  record Pause(int millis) implements Op {
  }

  enum FaultKind { LOSE_ANSWER_AFTER_COMMIT, LOSE_CONNECTION, HOLD_UNTIL_AFTER_THE_CRASH }

  /** What the database's prune does to the dead run's flush sources while it is down. */
  enum Downtime {
    /** Back within the retention: the sources are as it left them. */
    SHORT,
    /** Down longer than the retention: another replica's prune closed them, keeping their ids. */
    PAST_RETENTION,
    /** Down longer than twice the retention: closed, then deleted with their ids. */
    PAST_TWO_RETENTIONS
  }

  /**
   * How the first run dies: at its {@code killAt}-th statement, or at its {@code crashAtFileOp}-th file operation when
   * that comes first (0: not there); what of the unforced writes the disk keeps ({@code machine}: only what was forced,
   * else all of it, as after a process's death). {@code maxInFlight}: {@code batching.maxInFlight} of every run, so
   * flushes of one source are open side by side (1 is the default; a database a hop away is run with 2 to 4).
   */
  record Scenario(List<Op> ops, long killAt, long crashAtFileOp, boolean machine, Downtime downtime, long killReplayAt,
                  String fsync, DiskFault disk, int maxInFlight) {
  }

  /** What else goes wrong with the journal's disk. */
  enum DiskFault {
    NONE,
    /** The 3rd write fails (EIO): the journal's run ends, nothing more is answered 202 from it. */
    WRITE_FAILS,
    /** The 2nd fsync fails (EIO), and what it should have written is dropped. */
    FORCE_FAILS,
    /** A disk with room for the journal's first segments and no more (448 KiB), in this run and the next. */
    FULL,
    /** One byte of a written segment flipped while the gateway is down. */
    FLIPPED_BYTE
  }

  @Provide
  Arbitrary<Scenario> scenarios() {
    Arbitrary<String> id = Arbitraries.of("a", "b", "c", "d", "e");
    Arbitrary<List<String>> ids = id.list().ofMinSize(1).ofMaxSize(3).uniqueElements();
    Arbitrary<Op> op = Arbitraries.frequencyOf(
      net.jqwik.api.Tuple.of(6, ids.map(Accept::new)),
      net.jqwik.api.Tuple.of(4, Combinators.combine(ids, Arbitraries.longs().between(1, 3)).as(Commit::new)),
      net.jqwik.api.Tuple.of(2, Arbitraries.of(FaultKind.class).map(Fault::new)),
      net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0, 3).map(Pause::new)));
    return Combinators.combine(op.list().ofMinSize(3).ofMaxSize(25), Arbitraries.longs().between(1, 15),
        Arbitraries.longs().between(0, 60), Arbitraries.of(false, true), Arbitraries.of(Downtime.class),
        Arbitraries.longs().between(0, 12).injectNull(0).map(n -> n == null ? 0L : n),
        Arbitraries.of("always", "everyMs", "off"),
        Combinators.combine(Arbitraries.of(DiskFault.class), Arbitraries.of(IN_FLIGHT)).as(net.jqwik.api.Tuple::of))
      .as((ops, killAt, crashAt, machine, downtime, killReplayAt, fsync, diskAndInFlight) -> new Scenario(ops, killAt,
        crashAt, machine, downtime, killReplayAt, fsync, diskAndInFlight.get1(), diskAndInFlight.get2()))
      // a machine's crash loses what was only in the page cache: only fsync always answered nothing from there
      .filter(scenario -> !scenario.machine() || scenario.fsync().equals("always"));
  }

  /** The tries of a normal run ({@code -Dharness.tries} runs fewer: {@link HarnessShare}). */
  private static final int TRIES = HarnessShare.TRIES;
  /** The {@code batching.maxInFlight} drawn; {@code -Dharness.maxInFlight} plays only that one. */
  private static final List<Integer> IN_FLIGHT = Integer.getInteger("harness.maxInFlight") == null ? List.of(1, 2, 4)
    : List.of(Integer.getInteger("harness.maxInFlight"));

  /** The tries of a normal run of the two verticles' property. */
  private static final int TWO_VERTICLES_TRIES = 150;

  /**
   * Sets the property's tries (its own, scaled as {@code -Dharness.tries} says) and seed from the system properties,
   * when they are given.
   */
  static final class TriesOfThisRun implements AroundPropertyHook {
    @Override
    public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
      context.attributes().setTries(HarnessShare.of(context.attributes().tries().orElse(TRIES)));
      String seed = HarnessShare.seed();
      if (seed != null) {
        context.attributes().setSeed(seed);
      }
      return property.execute();
    }
  }

  /**
   * Each scenario's share is a fifth or more but for a replay not killed (one in thirteen): 300 tries draw every kind of
   * kill, crash, disk fault, downtime, flushes in flight and replay dozens of times, and {@link #everyKindDrawn} fails a run that did not.
   */
  @Property(tries = TRIES, shrinking = ShrinkingMode.BOUNDED)
  @AddLifecycleHook(TriesOfThisRun.class)
  @Label("a kill at any statement, any downtime, a kill during the replay: every answered increment counted once")
  void killedAnywhere(@ForAll("scenarios") Scenario scenario) {
    play(scenario);
  }

  /**
   * A scenario played by two ingest verticles on one loop, as two event loops of one process: each request goes to
   * the verticle its bit of {@code verticleBits} names, so their journal frames interleave and a kill or a crash at
   * a file operation falls between any two of them; the run after the crash has {@code verticlesAfter} (1: one
   * verticle takes over both streams).
   */
  record TwoVerticles(Scenario scenario, long verticleBits, int verticlesAfter) {
  }

  @Provide
  Arbitrary<TwoVerticles> twoVerticles() {
    return Combinators.combine(scenarios(), Arbitraries.longs().between(0, (1L << 25) - 1), Arbitraries.of(1, 2))
      .as(TwoVerticles::new);
  }

  /**
   * 150 tries, a few seconds: every kind is drawn at least {@link #TWO_VERTICLES_DRAWN_AT_LEAST} times (the rarest, a
   * replay not killed, about 11 times on average: fewer than 2 in about one run of 8,000).
   */
  @Property(tries = TWO_VERTICLES_TRIES, shrinking = ShrinkingMode.BOUNDED)
  @AddLifecycleHook(TriesOfThisRun.class)
  @Label("two verticles appending interleaved, a kill or crash between any two of their frames: every answered "
    + "increment counted once")
  void twoVerticlesKilledAnywhere(@ForAll("twoVerticles") TwoVerticles two) {
    play(two.scenario(), two.verticleBits(), 2, two.verticlesAfter());
  }

  /** One Vert.x for every run of every scenario: each run has its own journal, timers and clock, none of its Vert.x. */
  private static RecoveryWorld.Machine machine;

  @BeforeContainer
  static void startMachine() {
    machine = new RecoveryWorld.Machine();
  }

  @AfterContainer
  static void stopMachine() {
    machine.close();
  }

  private void play(Scenario scenario) {
    play(scenario, 0, 1, 1);
  }

  /**
   * Plays {@code scenario} on a first run of {@code verticles} ingest verticles (request {@code i} to the verticle
   * bit {@code i} of {@code verticleBits} names) and recovers with {@code verticlesAfter}.
   */
  private void play(Scenario scenario, long verticleBits, int verticles, int verticlesAfter) {
    RecoveryWorld world = new RecoveryWorld(machine, scenario.toString(), scenario.fsync(), scenario.maxInFlight());
    if (scenario.crashAtFileOp() > 0) {
      world.files.crashAt(scenario.crashAtFileOp());
    }
    // each stream needs room of its own: the disk is full for as many streams as either run has
    long fullDisk = FULL_DISK * Math.max(verticles, verticlesAfter);
    if (scenario.disk() == DiskFault.FULL) {
      world.files.budget(fullDisk);
    }
    FaultingFiles.Survival survival = scenario.machine() ? FaultingFiles.Survival.NONE : FaultingFiles.Survival.ALL;
    RecoveryWorld.Run first = world.startThroughCrashes(scenario.killAt(), survival, verticles);
    // once started: the journal's answers are what a failed write or fsync must not turn into 202
    if (scenario.disk() == DiskFault.WRITE_FAILS) {
      first.disk.failAt(FaultingFiles.Op.WRITE, first.disk.count(FaultingFiles.Op.WRITE) + 3, "EIO");
    } else if (scenario.disk() == DiskFault.FORCE_FAILS) {
      first.disk.failAt(FaultingFiles.Op.FORCE, first.disk.count(FaultingFiles.Op.FORCE) + 2, "EIO");
    }
    play(world, first, scenario.ops(), verticleBits, verticles);
    first.dieAtTheKillStatement();
    world.crash(survival);
    world.store.clearScript();
    afterDowntime(world, scenario.downtime());
    if (scenario.disk() == DiskFault.FULL) {
      world.files.budget(fullDisk);
    } else if (scenario.disk() == DiskFault.FLIPPED_BYTE) {
      flipOneByte(world.files, new java.util.Random(scenario.toString().hashCode()));
    }

    RecoveryWorld.Run recovering = world.startThroughCrashes(scenario.killReplayAt(), FaultingFiles.Survival.ALL,
      verticlesAfter);
    boolean mayHaveLost = recovering.replays().stream().anyMatch(ReplayReport::mayHaveLost);
    String replayed = recovering.replays().stream().map(report -> report.describe() + " " + report).toList()
      .toString();
    // late copies of the dead run's attempts reach the database while the next run replays
    while (recovering.onLoop(() -> releaseOne(world.store))) {
      // each held attempt lands now
    }
    if (scenario.killReplayAt() > 0) {
      recovering.dieAtTheKillStatement();
      world.crash(FaultingFiles.Survival.ALL);
      recovering = world.start(0, verticlesAfter);
    }
    recovering.awaitReplayed();
    recovering.drainAndStop();

    Ledger.Verdict verdict = world.verdict();
    Statistics.label("killed").collect(first.death().label);
    Statistics.label("disk").collect(scenario.machine() ? "machine crash" : "process crash");
    Statistics.label("disk fault").collect(scenario.disk());
    Statistics.label("replay reported a possible loss").collect(mayHaveLost);
    Statistics.label("replay killed").collect(scenario.killReplayAt() > 0);
    Statistics.label("outcomes").collect(verdict.unknown > 0 ? "some unknown" : "all answered");
    Statistics.label("downtime").collect(scenario.downtime());
    Statistics.label("flushes in flight").collect(scenario.maxInFlight());
    everyKindDrawn(verticles == 1 ? DRAWN_AT_LEAST : TWO_VERTICLES_DRAWN_AT_LEAST);
    assertThat(verdict.overCounted).as("%s: counted twice or counted though refused: %s; the replay: %s",
      verdict.summary(), verdict.violations, replayed).isZero();
    // what these cost is reported, never counted twice (docs/guarantees.md): a source gone with its ids, damaged
    // bytes, and, when answers did not wait for the fsync, a failed fsync (the kernel may drop what it did not write)
    boolean lossAllowed = scenario.downtime() == Downtime.PAST_TWO_RETENTIONS || mayHaveLost
      || scenario.disk() == DiskFault.FORCE_FAILS && !scenario.fsync().equals("always");
    if (!lossAllowed) {
      org.assertj.core.api.Assertions.assertThat(verdict.violations).as("%s; the replay: %s", verdict.summary(), replayed)
        .isEmpty();
    }
  }

  /**
   * Fewer than this many tries of one kind of scenario in a run: the run did not test that kind (5 of 300 tries, and at
   * least one in a shorter run).
   */
  private static final int DRAWN_AT_LEAST = HarnessShare.of(5);
  /** The same for the two verticles' property, of fewer tries (2 of 150, and at least one in a shorter run). */
  private static final int TWO_VERTICLES_DRAWN_AT_LEAST = Math.max(1, 2 * HarnessShare.of(TWO_VERTICLES_TRIES)
    / TWO_VERTICLES_TRIES);

  /** Every kind of kill, crash, disk fault, downtime and replay was tried often enough in this run. */
  private static void everyKindDrawn(int drawnAtLeast) {
    Statistics.label("killed").coverage(coverage -> List.of("at a file operation", "at a statement", "after the workload")
      .forEach(kind -> coverage.check(kind).count(n -> n >= drawnAtLeast)));
    Statistics.label("disk").coverage(coverage -> List.of("machine crash", "process crash")
      .forEach(kind -> coverage.check(kind).count(n -> n >= drawnAtLeast)));
    Statistics.label("disk fault").coverage(coverage -> List.of(DiskFault.values())
      .forEach(kind -> coverage.check(kind).count(n -> n >= drawnAtLeast)));
    Statistics.label("replay killed").coverage(coverage -> List.of(true, false)
      .forEach(kind -> coverage.check(kind).count(n -> n >= drawnAtLeast)));
    Statistics.label("downtime").coverage(coverage -> List.of(Downtime.values())
      .forEach(kind -> coverage.check(kind).count(n -> n >= drawnAtLeast)));
    Statistics.label("flushes in flight").coverage(coverage -> IN_FLIGHT
      .forEach(kind -> coverage.check(kind).count(n -> n >= drawnAtLeast)));
  }

  private static void play(RecoveryWorld world, RecoveryWorld.Run run, List<Op> ops, long verticleBits,
                           int verticles) {
    for (int i = 0; i < ops.size(); i++) {
      Op op = ops.get(i);
      int verticle = (int) (verticleBits >>> i & 1) % verticles;
      if (run.killed()) {
        return;
      }
      if (op instanceof Accept accept) {
        run.send(increments(accept.ids(), 1), AckMode.ACCEPTED, verticle);
      } else if (op instanceof Commit commit) {
        run.send(increments(commit.ids(), commit.delta()), AckMode.COMMIT, verticle);
      } else if (op instanceof Fault fault) {
        run.onLoop(() -> world.store.then(switch (fault.kind()) {
          case LOSE_ANSWER_AFTER_COMMIT -> new ScriptedStore.CommitThenLoseAnswer();
          case LOSE_CONNECTION -> new ScriptedStore.Fail(ScriptedStore.connectionLost());
          case HOLD_UNTIL_AFTER_THE_CRASH -> new ScriptedStore.Hold();
        }));
      } else if (op instanceof Pause pause) {
        run.pass(pause.millis());
      }
    }
    run.pass(5);
  }

  /** Per stream: the replay's segment, the reserve (4 segments), the restart room and one spare of 64 KiB: no more. */
  private static final long FULL_DISK = 448 * 1024;

  /** One byte of a written segment, past its header, flipped on the disk (bit rot while the gateway is down). */
  private static void flipOneByte(FaultingFiles files, java.util.Random random) {
    List<java.util.Map.Entry<java.nio.file.Path, byte[]>> written = files.files().entrySet().stream()
      .filter(file -> file.getKey().toString().endsWith(".seg") && lastNonZero(file.getValue()) > 128).toList();
    if (written.isEmpty()) {
      return;
    }
    java.util.Map.Entry<java.nio.file.Path, byte[]> file = written.get(random.nextInt(written.size()));
    files.flip(file.getKey(), 96 + random.nextInt(lastNonZero(file.getValue()) - 96));
  }

  private static int lastNonZero(byte[] bytes) {
    int end = bytes.length;
    while (end > 0 && bytes[end - 1] == 0) {
      end--;
    }
    return end;
  }

  /** One held attempt lands; its answer goes to a run that is gone. */
  private static boolean releaseOne(ScriptedStore store) {
    try {
      return store.release();
    } catch (java.util.concurrent.RejectedExecutionException answerToADeadRun) {
      return true;
    }
  }

  /** One increment per counter, as the doors hand a batch over (a batch naming a counter twice is summed first). */
  private static List<Increment> increments(List<String> ids, long delta) {
    List<Increment> increments = new ArrayList<>();
    for (String id : new java.util.LinkedHashSet<>(ids)) {
      increments.add(RecoveryWorld.increment(id, delta));
    }
    return increments;
  }

  private static void afterDowntime(RecoveryWorld world, Downtime downtime) {
    List<String> sources = new ArrayList<>(world.store.sources.keySet());
    for (String source : sources) {
      switch (downtime) {
        case SHORT -> {
        }
        case PAST_RETENTION -> world.store.closeSource(source);
        case PAST_TWO_RETENTIONS -> world.store.dropSource(source);
      }
    }
  }
}
