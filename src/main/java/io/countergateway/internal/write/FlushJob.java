package io.countergateway.internal.write;

import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * One flush's life, from the coalescer's batch (or the journal's replay) until it lets go of its journal position and
 * its ids: the one holder of its ids, its journal position, every attempt and how it ended, the ids it went on under,
 * its splits and voids, and its waiting requests. The {@link FlushWriter} runs its next step; {@link FlushSources}
 * holds only what is true of a source as a whole.
 *
 * <p>Its phases (src/DESIGN.md "Flush jobs"):
 * <pre>
 *   FORMED ──► RECORDED ──► ATTEMPTING ⇄ BACKING_OFF
 *     │ ⇅ BACKING_OFF          │    └──► SETTLED ──► RELEASED
 *     │                        │  ▲          └──► REPLICATING ──► RELEASED
 *     │                        │  └───────────────────┘ (a new timeline: written again)
 *     └──────────────────────► LEFT_TO_REPLAY
 * </pre>
 * <ul>
 *   <li>{@code FORMED}: its source's row is being made and its journal record forced (a failed row is retried after a
 *   backoff, back to FORMED);</li>
 *   <li>{@code RECORDED}: the journal holds it (or it holds nothing journaled); a replayed job starts here;</li>
 *   <li>{@code ATTEMPTING}: a statement of it (a write, or the void after a refused value) or a read of its closed source
 *   is under way;</li>
 *   <li>{@code BACKING_OFF}: an outage; the same step runs again once the backoff is over;</li>
 *   <li>{@code SETTLED}: every request of it (and of its halves) is answered;</li>
 *   <li>{@code REPLICATING}: with {@code database.keepUntilReplicated}, what it committed is held until every standby
 *   has flushed it ({@link ReplicatedRelease}); a failover sends it back to ATTEMPTING, its committed flushes written
 *   again under their own ids;</li>
 *   <li>{@code RELEASED}: the journal is told, its ids are settled in their sources, its journal position is no longer
 *   needed;</li>
 *   <li>{@code LEFT_TO_REPLAY}: the journal could not record a step; nothing more of it is attempted in this run, its
 *   requests are answered, and it keeps its journal position so that the replay after a restart resolves it.</li>
 * </ul>
 * Any other transition is a bug and throws. Confined to the coalescer's event loop.
 */
final class FlushJob {
  enum Phase { FORMED, RECORDED, ATTEMPTING, BACKING_OFF, SETTLED, REPLICATING, RELEASED, LEFT_TO_REPLAY }

  /** How one statement of the job ended. */
  enum Outcome {
    /** It never left the process (no connection, see {@code StatementNotSentException}): nothing of it can commit. */
    NOT_SENT,
    /** Sent, and its answer lost: it may have committed, now or later. */
    SENT_ANSWER_LOST,
    /** It failed whole (a refused value, a lock conflict, a closed source): nothing of it committed. */
    REFUSED,
    /** Its id is in the table now: committed, found committed, or voided. */
    COMMITTED
  }

  /** Which statement an attempt was. */
  enum Step { WRITE, VOID }

  /** One statement of the job: under which id, which statement, how it ended. */
  record Attempt(FlushId id, Step step, Outcome outcome) {
  }

  private static final Map<Phase, Set<Phase>> NEXT = new EnumMap<>(Phase.class);

  static {
    NEXT.put(Phase.FORMED, EnumSet.of(Phase.RECORDED, Phase.BACKING_OFF, Phase.LEFT_TO_REPLAY));
    NEXT.put(Phase.RECORDED, EnumSet.of(Phase.ATTEMPTING));
    NEXT.put(Phase.ATTEMPTING, EnumSet.of(Phase.BACKING_OFF, Phase.SETTLED, Phase.LEFT_TO_REPLAY));
    NEXT.put(Phase.BACKING_OFF, EnumSet.of(Phase.FORMED, Phase.ATTEMPTING));
    NEXT.put(Phase.SETTLED, EnumSet.of(Phase.RELEASED, Phase.REPLICATING));
    NEXT.put(Phase.REPLICATING, EnumSet.of(Phase.RELEASED, Phase.ATTEMPTING));
    NEXT.put(Phase.RELEASED, EnumSet.noneOf(Phase.class));
    NEXT.put(Phase.LEFT_TO_REPLAY, EnumSet.noneOf(Phase.class));
  }

  private final Flush formed;
  private final List<Ack> acks;
  private final List<CounterKey> zeroKeys;
  /** The lowest journal position its increments hold; -1 when it holds none journaled. */
  private final long journalPosition;
  private final boolean replayed;
  /** A replayed job's: the journal does not say that none of the earlier run's attempts left the process. */
  private final boolean sentInAnEarlierRun;
  private final long startedNanos;
  private Phase phase;
  /** Where a backoff goes back to: FORMED or ATTEMPTING. */
  private Phase backedOffFrom;
  private final List<Phase> history = new ArrayList<>();
  private final List<Attempt> attempts = new ArrayList<>();
  /** Ids proven never committed, and the id of the live source each goes on under; the same one every time. */
  private final Map<FlushId, FlushId> wentOnAs = new LinkedHashMap<>();
  /** Those new ids the journal holds a record of. */
  private final Set<FlushId> reroutesRecorded = new HashSet<>();
  private final List<FlushId> splits = new ArrayList<>();
  private final List<FlushId> voids = new ArrayList<>();
  /** The flushes of it a statement found in the table (written now or before), under the ids they are there. */
  private final List<Flush> committed = new ArrayList<>();
  /** Whether its committed flushes were written again after a failover: an id found then means committed, never voided. */
  private boolean writtenAgain;

  private FlushJob(Flush formed, List<Ack> acks, List<CounterKey> zeroKeys, long journalPosition, boolean replayed,
                   boolean sentInAnEarlierRun, long startedNanos, Phase first) {
    this.formed = formed;
    this.acks = List.copyOf(acks);
    this.zeroKeys = List.copyOf(zeroKeys);
    this.journalPosition = journalPosition;
    this.replayed = replayed;
    this.sentInAnEarlierRun = sentInAnEarlierRun;
    this.startedNanos = startedNanos;
    this.phase = first;
    history.add(first);
  }

  /**
   * A batch as the coalescer formed it, its waiting requests in flight from now on; {@code journalPosition}: the lowest position of the journaled increments in it,
   * -1 when none is ({@code zeroKeys}: journaled counters taken with it whose deltas summed to 0).
   */
  static FlushJob formed(Flush flush, List<Ack> acks, List<CounterKey> zeroKeys, long journalPosition,
                         long startedNanos) {
    // from here on a request's timeout cannot withdraw its delta: the job answers it (504 on timeout, in Ack)
    acks.forEach(Ack::inFlight);
    return new FlushJob(flush, acks, zeroKeys, journalPosition, false, false, startedNanos, Phase.FORMED);
  }

  /**
   * A flush a journal replay carried over, recorded already; {@code mayHaveBeenSent}: the journal does not say that
   * none of its attempts left the process.
   */
  static FlushJob replayed(Flush flush, boolean mayHaveBeenSent, long journalPosition, long startedNanos) {
    return new FlushJob(flush, List.of(), List.of(), journalPosition, true, mayHaveBeenSent, startedNanos,
      Phase.RECORDED);
  }

  Flush flush() {
    return formed;
  }

  List<Ack> acks() {
    return acks;
  }

  List<CounterKey> zeroKeys() {
    return zeroKeys;
  }

  /** Whether its journaled increments must be recorded (and forced) before its first attempt. */
  boolean mustBeRecorded() {
    return !replayed && journalPosition >= 0;
  }

  boolean replayed() {
    return replayed;
  }

  /** The lowest journal position it still needs; -1 for none (it holds nothing journaled, or is released). */
  long journalPosition() {
    return phase == Phase.RELEASED ? -1 : journalPosition;
  }

  long startedNanos() {
    return startedNanos;
  }

  Phase phase() {
    return phase;
  }

  /** Every phase it was in, in order. */
  List<Phase> history() {
    return Collections.unmodifiableList(history);
  }

  List<Attempt> attempts() {
    return Collections.unmodifiableList(attempts);
  }

  List<FlushId> splits() {
    return Collections.unmodifiableList(splits);
  }

  List<FlushId> voids() {
    return Collections.unmodifiableList(voids);
  }

  /** Each id proven never committed and the live source's id it went on under. */
  Map<FlushId, FlushId> wentOnAs() {
    return Collections.unmodifiableMap(wentOnAs);
  }

  private void to(Phase next) {
    if (!NEXT.get(phase).contains(next) || phase == Phase.BACKING_OFF && next != backedOffFrom) {
      throw new IllegalStateException("flush " + formed.id() + " cannot go from " + phase + " to " + next);
    }
    if (next == Phase.BACKING_OFF) {
      backedOffFrom = phase;
    }
    phase = next;
    history.add(next);
  }

  /** Its source's row is made and the journal holds it (or nothing journaled is in it). */
  void recorded() {
    to(Phase.RECORDED);
  }

  /** A statement of it, or a read of its source, is about to go; nothing if one is under way already. */
  void attempting() {
    if (phase != Phase.ATTEMPTING) {
      to(Phase.ATTEMPTING);
    }
  }

  /** An outage: the step it was at runs again after the backoff ({@link #backoffOver}). */
  void backingOff() {
    to(Phase.BACKING_OFF);
  }

  /** The backoff is over: back to the phase it backed off from. */
  void backoffOver() {
    if (phase != Phase.BACKING_OFF) {
      throw new IllegalStateException("flush " + formed.id() + " is " + phase + ", not backing off");
    }
    to(backedOffFrom);
  }

  /** A statement of {@code id} ended so; only while attempting. */
  void attemptEnded(FlushId id, Step step, Outcome outcome) {
    if (phase != Phase.ATTEMPTING) {
      throw new IllegalStateException("flush " + formed.id() + " is " + phase + ": no attempt of it can end");
    }
    attempts.add(new Attempt(id, step, outcome));
  }

  /**
   * Whether {@code id} may have committed without anyone seeing it: a statement of it was sent and lost its answer, in
   * this run or (the replayed flush itself) in an earlier one. Only such a flush can end outcome unknown when its
   * source is gone; any other went nowhere or failed whole.
   */
  boolean mayHaveCommittedUnseen(FlushId id) {
    return sentAndLost(id::equals);
  }

  /** Whether it may have committed unseen under an id of {@code source} (for the log of a source found gone). */
  boolean sentAndLostUnder(String source) {
    return sentAndLost(id -> id.source().equals(source));
  }

  private boolean sentAndLost(Predicate<FlushId> which) {
    return sentInAnEarlierRun && which.test(formed.id()) || attempts.stream()
      .anyMatch(attempt -> attempt.outcome() == Outcome.SENT_ANSWER_LOST && which.test(attempt.id()));
  }

  /** The id {@code proven} (never committed under its own) goes on under: minted once, the same every time. */
  FlushId goesOnAs(FlushId proven, Supplier<FlushId> mint) {
    return wentOnAs.computeIfAbsent(proven, old -> mint.get());
  }

  /** Whether the journal must record that a flush goes on as {@code target} before it is attempted. */
  boolean needsRerouteRecord(FlushId from, FlushId target) {
    return !target.equals(from) && !reroutesRecorded.contains(target);
  }

  void rerouteRecorded(FlushId target) {
    reroutesRecorded.add(target);
  }

  /** {@code flush} (it, a half, or it gone on under a live source) is in the table under its id. */
  void committedAs(Flush flush) {
    committed.add(flush);
  }

  /** What it has in the table, as {@link #committedAs} heard of it. */
  List<Flush> committed() {
    return Collections.unmodifiableList(committed);
  }

  /**
   * From {@code REPLICATING}: its committed flushes are to be written again under their ids (the server that has them
   * may be gone); they are handed over and forgotten, each heard of again as it is found or written.
   */
  List<Flush> writeAgain() {
    writtenAgain = true;
    List<Flush> again = List.copyOf(committed);
    committed.clear();
    return again;
  }

  boolean writtenAgain() {
    return writtenAgain;
  }

  /** Its id {@code id} was voided after a refused value: no late copy of it can write anything any more. */
  void voided(FlushId id) {
    voids.add(id);
  }

  /** {@code parent}'s rows go on as two halves, each with the requests of its counters. */
  Halves split(Flush parent, List<Ack> parentAcks) {
    List<FlushRow> rows = parent.rows();
    List<FlushRow> left = rows.subList(0, rows.size() / 2);
    List<FlushRow> right = rows.subList(rows.size() / 2, rows.size());
    Set<CounterKey> leftKeys = new HashSet<>();
    left.forEach(row -> leftKeys.add(new CounterKey(row.type(), row.id(), row.bucket())));
    List<Ack> leftAcks = new ArrayList<>();
    List<Ack> rightAcks = new ArrayList<>();
    parentAcks.forEach(ack -> (leftKeys.contains(ack.key) ? leftAcks : rightAcks).add(ack));
    splits.add(parent.id());
    return new Halves(parent.half(0, left), leftAcks, parent.half(1, right), rightAcks);
  }

  record Halves(Flush left, List<Ack> leftAcks, Flush right, List<Ack> rightAcks) {
  }

  /** Every request of it is answered. */
  void settled() {
    to(Phase.SETTLED);
  }

  /** After {@link #settled}: held until the standbys have what it committed. */
  void replicating() {
    to(Phase.REPLICATING);
  }

  /**
   * After {@link #settled} (or {@link #replicating}): the journal records it answered for good, and its ids (as formed and as it went on) are
   * settled in their sources, whose fences may now pass them.
   */
  void release(FlushLog log, FlushSources sources) {
    to(Phase.RELEASED);
    log.settled(formed.id());
    sources.settled(formed.id());
    wentOnAs.values().forEach(sources::settled);
  }

  /** The journal could not record a step: nothing more of it is attempted in this run. */
  void leaveToReplay() {
    if (phase != Phase.LEFT_TO_REPLAY) {
      to(Phase.LEFT_TO_REPLAY);
    }
  }

  boolean leftToReplay() {
    return phase == Phase.LEFT_TO_REPLAY;
  }

  @Override
  public String toString() {
    return "flush " + formed.id() + " (" + phase + ", " + attempts.size() + " attempts)";
  }
}
