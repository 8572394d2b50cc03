package io.countergateway.internal.write.journal;

import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one journal stream still holds, reduced frame by frame in journal order (src/DESIGN.md §4 "Replay"): the
 * accepted deltas in no flush, and the flushes formed but not settled. It also keeps what its frames' counters say
 * about the regions with no good frame between them.
 *
 * <p><b>The gap rule.</b> A damaged region that a good frame follows was written before that frame; the difference of
 * the two frames' flush counters says how many flush frames (FORMED, REPLACED) it held. If none, the deltas pending
 * before it stay pending: only the region's own increments are lost. If it held some, each delta pending before it may
 * have been taken by a flush it hid, and that flush may have committed: those deltas are never taken again as new.
 * When the region hid exactly one flush frame and its id is known (from the frame's intact header, or from a later
 * record naming a flush nobody formed), the deltas still pending before it that no later flush took are handed over as
 * an unsettled flush under that id: written again under its own id, it finds itself committed and writes nothing, or
 * commits once. When a later split names that flush, its rows are known and the deltas it did not take are pending
 * again; when it is settled later, they are dropped. In every other case they are dropped and counted: never doubled,
 * at most lost, and the report says how many.
 *
 * <p><b>A write the crash kept from the disk in part</b> is not such a region. The kernel writes a file's dirty pages
 * back in any order, so a machine gone before the force can leave a page of the last writes as zeros and the pages
 * after it written; {@link FrameScanner} tells it by zeros where a frame must start, up to a page boundary, or a whole
 * page of zeros inside the frame that starts the region. No force covered that write, nor anything written after it
 * (a force that had would have put the page on disk): nothing in it or after it was answered under {@code fsync:
 * always}, and no flush formed, split or said to be sent in it was attempted, since each attempt waits for the force
 * that covers its record. So the region is read as a torn tail: the deltas pending before it stay pending, what it
 * hid is lost unanswered, and the flushes named after it are read as they are. Only damage that can hide a forced
 * frame (a flipped byte, garbage) keeps the gap rule. A segment's torn end never has a later segment's frames after
 * it: the writer forces a segment it rolled away from before it writes the next one's frames.
 *
 * <p><b>Flushes never sent.</b> An unsettled flush whose last {@code ATTEMPTS} record says that none of its attempts
 * left the process never reached the database ({@link #neverSent}). A damaged region may have hidden a later record
 * saying one did: any damage that can hide a forced frame makes every flush before it one that may have been sent.
 */
final class Reduction implements JournalRecords.Visitor, FrameScanner.Sink {
  final LinkedHashMap<CounterKey, Long> pending = new LinkedHashMap<>();
  /** Formed or replacing flushes not settled, in journal order; parents replaced by children are removed. */
  final LinkedHashMap<String, Flush> unsettled = new LinkedHashMap<>();
  final Set<String> superseded = new HashSet<>();
  /** Unsettled flushes none of whose attempts left the process, as far as the records read say. */
  final Set<String> neverSent = new LinkedHashSet<>();
  private final Map<String, List<String>> children = new LinkedHashMap<>();
  /** Flushes this run journaled: a record naming another one names a flush whose record was lost. */
  private final Set<String> known = new HashSet<>();
  private final List<Doubt> doubts = new ArrayList<>();
  private final boolean tailMayHoldAcknowledged;
  private State stash;
  /** The frame being read is the copy of the flush record before it (see {@link Frames#COPY}). */
  private boolean readingCopy;

  /** Whether the frames carry sequence numbers and the next one is known. */
  private boolean sequenced;
  private int expectedSeq;
  private int flushesSeen;

  // damage since the last good frame
  private long damageBytes;
  /** The damage since the last good frame begins with a write the crash kept from the disk in part. */
  private boolean damageNeverForced;
  private final List<FrameScanner.Damaged> damagedFrames = new ArrayList<>();

  long frames;
  /** Damaged bytes reported so far, wherever they end up counted. */
  long damageReported;
  ReplayReport.Skipped damaged = ReplayReport.Skipped.NONE;
  ReplayReport.Skipped tail = ReplayReport.Skipped.NONE;
  final List<String> reconstructed = new ArrayList<>();
  ReplayReport.Dropped dropped = ReplayReport.Dropped.NONE;
  /** What the last run read recorded its work was for; null for a journal of a release that did not record it. */
  JournalTarget writtenFor;

  /** Deltas pending before a damaged region that hid flush frames. */
  private static final class Doubt {
    /** How many flush frames the region hid; -1 when unknown. */
    final int lostFlushes;
    /** The id of the one flush it hid, once known. */
    String id;
    boolean settled;
    final LinkedHashMap<CounterKey, Long> deltas;

    Doubt(int lostFlushes, String id, Map<CounterKey, Long> deltas) {
      this.lostFlushes = lostFlushes;
      this.id = id;
      this.deltas = new LinkedHashMap<>(deltas);
    }
  }

  /** The reducible state, kept aside while a snapshot is read: one that does not end never happened. */
  private record State(Map<CounterKey, Long> pending, Map<String, Flush> unsettled, Map<String, List<String>> children,
                       Set<String> known, Set<String> neverSent) {
  }

  /**
   * {@code tailMayHoldAcknowledged}: whether a frame cut short at the end can have been answered (under {@code fsync:
   * always} an answer waits for the force that covers its frame whole).
   */
  Reduction(boolean tailMayHoldAcknowledged) {
    this.tailMayHoldAcknowledged = tailMayHoldAcknowledged;
  }

  /**
   * A new run begins (a segment of another run than the last one read). {@code atItsSnapshot}: this is the run's
   * first segment, so its frames are numbered from 0; otherwise the first good frame sets the numbering.
   */
  void runStart(boolean atItsSnapshot) {
    damageEndsRun();
    sequenced = atItsSnapshot;
    expectedSeq = 0;
    flushesSeen = 0;
  }

  // ---- frames ----

  @Override
  public void frame(Frames.FrameHeader header, ByteBuffer payload) {
    if (header == null || !sequenced) {
      if (hasDamage()) {
        gap(-1, -1);
      }
    } else {
      if (header.kind() == JournalRecords.SNAPSHOT_BEGIN && header.seq() == 0) {
        runStart(true);
      }
      int lost = header.seq() - expectedSeq;
      if (lost < 0) {
        // numbered before frames already read: not of this run's order, so not applied
        damageBytes += header.headerBytes() + header.length();
        return;
      }
      if (lost > 0 || hasDamage()) {
        gap(lost, header.flushes() - flushesSeen - (header.isFlush() ? 1 : 0));
      }
    }
    if (header != null) {
      sequenced = true;
      expectedSeq = header.seq() + 1;
      flushesSeen = header.flushes();
    }
    frames++;
    readingCopy = header != null && header.kind() == Frames.COPY;
    try {
      JournalRecords.read(payload, this);
    } catch (RuntimeException malformed) {
      // the checksums held, so a record that does not parse is a newer format or a bug: what parsed stands
      damageBytes += payload.limit();
    }
  }

  @Override
  public void damaged(long bytes, List<FrameScanner.Damaged> lost, boolean neverForced) {
    if (!hasDamage()) {
      // what follows a write no force covered was written after it, so no force covered it either
      damageNeverForced = neverForced;
    }
    damageReported += bytes;
    damageBytes += bytes;
    damagedFrames.addAll(lost);
  }

  private boolean hasDamage() {
    return damageBytes > 0 || !damagedFrames.isEmpty();
  }

  private long readable() {
    return damagedFrames.stream().mapToLong(FrameScanner.Damaged::readable).sum();
  }

  /**
   * A damaged region with a good frame after it: written before that frame, so it may hold answered increments. One
   * that begins with a write the crash kept from the disk in part is read as a torn tail: no force covered it nor the
   * frames after it, so nothing in it was answered under {@code fsync: always}, no flush it formed, split or said was
   * about to be sent was attempted (each waits for the force that covers its record), and the deltas pending before it
   * stay pending. Any other damage may hide a forced frame: the gap rule.
   */
  private void gap(int lostFrames, int lostFlushes) {
    long frameCount = lostFrames >= 0 ? lostFrames : Math.max(1, damagedFrames.size());
    damaged = damaged.plus(new ReplayReport.Skipped(damageBytes, frameCount, readable(),
      !damageNeverForced || tailMayHoldAcknowledged));
    if (!damageNeverForced) {
      neverSent.clear();
      inDoubt(lostFlushes, damagedFrames);
    }
    clearDamage();
  }

  /**
   * The damage after the last good frame of a run. A frame cut short (its header whole, its bytes missing) was never
   * forced whole, so it was never answered and its flush never attempted; a whole flush frame that fails its checksum
   * may have been forced, and is treated as a gap's. A frame whose header is unreadable cannot be told from one that
   * was forced, answered, then damaged: it is reported as possibly answered, and the deltas pending before it stay
   * pending (a torn last write is by far the likelier cause).
   */
  private void damageEndsRun() {
    if (!hasDamage()) {
      return;
    }
    if (damageNeverForced) {
      tail = tail.plus(new ReplayReport.Skipped(damageBytes, Math.max(1, damagedFrames.size()), readable(),
        tailMayHoldAcknowledged));
      clearDamage();
      return;
    }
    List<FrameScanner.Damaged> whole = damagedFrames.stream()
      .filter(frame -> frame.complete() && frame.header() != null).toList();
    boolean unreadable = damagedFrames.isEmpty() || damagedFrames.stream().anyMatch(frame -> frame.header() == null);
    tail = tail.plus(new ReplayReport.Skipped(damageBytes, Math.max(1, damagedFrames.size()), readable(),
      tailMayHoldAcknowledged || !whole.isEmpty() || unreadable));
    if (!whole.isEmpty() || unreadable) {
      // it may have been forced: a record that an attempt was about to be sent may be among it
      neverSent.clear();
    }
    int wholeFlushes = (int) whole.stream().filter(frame -> frame.header().isFlush()).count();
    if (wholeFlushes > 0) {
      inDoubt(wholeFlushes, whole);
    }
    clearDamage();
  }

  private void clearDamage() {
    damageNeverForced = false;
    damageBytes = 0;
    damagedFrames.clear();
  }

  /** The gap rule (see the class comment): sets the deltas pending now aside when the region hid flush frames. */
  private void inDoubt(int lostFlushes, List<FrameScanner.Damaged> lost) {
    List<Frames.FrameHeader> named = lost.stream().map(FrameScanner.Damaged::header)
      .filter(header -> header != null && header.isFlush()).toList();
    named.forEach(header -> known.add(header.id()));
    if (lostFlushes == 0 || pending.isEmpty()) {
      return;
    }
    if (lostFlushes == 1 && named.size() == 1) {
      Frames.FrameHeader only = named.get(0);
      if (only.kind() == JournalRecords.REPLACED && unsettled.containsKey(only.id())) {
        // the split of a flush that is replayed under its own id: found voided, it is split again
        return;
      }
      doubts.add(new Doubt(1, only.kind() == JournalRecords.FORMED ? only.id() : null, pending));
    } else {
      doubts.add(new Doubt(lostFlushes, null, pending));
    }
    pending.clear();
  }

  /**
   * The doubt about flush {@code id}: the one naming it, or, for a flush no record of this run formed, the only one
   * whose region hid exactly one flush frame of unknown id.
   */
  private Doubt doubtAbout(String id) {
    for (Doubt doubt : doubts) {
      if (id.equals(doubt.id)) {
        return doubt;
      }
    }
    if (known.contains(id)) {
      return null;
    }
    Doubt only = null;
    for (Doubt doubt : doubts) {
      if (doubt.id == null && doubt.lostFlushes == 1) {
        if (only != null) {
          return null;
        }
        only = doubt;
      }
    }
    if (only != null) {
      only.id = id;
    }
    return only;
  }

  // ---- records ----

  @Override
  public void increment(CounterKey key, long delta) {
    pending.merge(key, delta, Reduction::sum);
  }

  private static Long sum(Long a, Long b) {
    long sum = a + b;
    return sum == 0 ? null : sum;
  }

  @Override
  public void formed(String id, List<FlushRow> rows, List<CounterKey> zeroKeys) {
    if (readingCopy) {
      if (known.contains(id)) {
        return; // the copy of a record read already
      }
      Doubt doubt = doubtAbout(id);
      if (doubt != null && doubt.lostFlushes == 1) {
        // the one flush a damaged region hid, read from its copy: what it did not take is pending still
        doubts.remove(doubt);
        doubt.deltas.forEach((key, delta) -> pending.merge(key, delta, Reduction::sum));
      }
    }
    for (FlushRow row : rows) {
      take(new CounterKey(row.type(), row.id(), row.bucket()));
    }
    zeroKeys.forEach(this::take);
    if (!id.isEmpty()) {
      unsettled.put(id, new Flush(FlushId.parse(id), rows));
      known.add(id);
    }
  }

  /** A flush took the counter's whole delta: before any gap as well as after it. */
  private void take(CounterKey key) {
    pending.remove(key);
    for (Doubt doubt : doubts) {
      doubt.deltas.remove(key);
    }
  }

  @Override
  public void replaced(String parent, List<Flush> replacing) {
    if (readingCopy && children.containsKey(parent)
      && replacing.stream().allMatch(child -> known.contains(child.id().toString()))) {
      return; // the copy of a record read already
    }
    Doubt doubt = doubtAbout(parent);
    Set<CounterKey> taken = new HashSet<>();
    replacing.forEach(child -> child.rows().forEach(row -> taken.add(new CounterKey(row.type(), row.id(), row.bucket()))));
    if (doubt != null && doubt.lostFlushes == 1) {
      // the one flush the region hid, its rows named by its split: what it did not take was pending still
      doubts.remove(doubt);
      doubt.deltas.keySet().removeAll(taken);
      doubt.deltas.forEach((key, delta) -> pending.merge(key, delta, Reduction::sum));
    } else {
      taken.forEach(key -> doubts.forEach(other -> other.deltas.remove(key)));
    }
    unsettled.remove(parent);
    neverSent.remove(parent);
    known.add(parent);
    List<String> ids = new ArrayList<>();
    for (Flush child : replacing) {
      unsettled.put(child.id().toString(), child);
      known.add(child.id().toString());
      ids.add(child.id().toString());
    }
    children.computeIfAbsent(parent, p -> new ArrayList<>()).addAll(ids);
  }

  @Override
  public void settled(String id) {
    Doubt doubt = doubtAbout(id);
    if (doubt != null) {
      doubt.settled = true;
    }
    unsettled.remove(id);
    neverSent.remove(id);
    List<String> replacing = children.remove(id);
    if (replacing != null) {
      replacing.forEach(this::settled);
    }
  }

  @Override
  public void attempts(String id, boolean mayHaveBeenSent) {
    if (mayHaveBeenSent) {
      neverSent.remove(id);
    } else if (unsettled.containsKey(id)) {
      neverSent.add(id);
    }
  }

  @Override
  public void snapshotBegin() {
    stash = new State(new LinkedHashMap<>(pending), new LinkedHashMap<>(unsettled), new LinkedHashMap<>(children),
      new HashSet<>(known), new LinkedHashSet<>(neverSent));
    neverSent.clear();
    pending.clear();
    unsettled.clear();
    children.clear();
    known.clear();
    doubts.clear();
  }

  @Override
  public void snapshotEnd(List<String> files) {
    stash = null;
    superseded.addAll(files);
    // what was damaged before the snapshot was reported by the replay that wrote it
    damaged = ReplayReport.Skipped.NONE;
    tail = ReplayReport.Skipped.NONE;
  }

  @Override
  public void writtenFor(JournalTarget target) {
    writtenFor = target;
  }

  /** End of the stream: the damage after its last good frame, a snapshot that did not end, the doubts' outcome. */
  void finish() {
    damageEndsRun();
    if (stash != null) {
      pending.clear();
      pending.putAll(stash.pending());
      unsettled.clear();
      unsettled.putAll(stash.unsettled());
      children.clear();
      children.putAll(stash.children());
      known.clear();
      known.addAll(stash.known());
      neverSent.clear();
      neverSent.addAll(stash.neverSent());
      stash = null;
    }
    neverSent.retainAll(unsettled.keySet());
    for (Doubt doubt : doubts) {
      if (doubt.deltas.isEmpty()) {
        continue;
      }
      if (doubt.lostFlushes == 1 && doubt.id != null && !doubt.settled && !unsettled.containsKey(doubt.id)) {
        List<FlushRow> rows = new ArrayList<>(doubt.deltas.size());
        doubt.deltas.forEach((key, delta) -> rows.add(new FlushRow(key.type(), key.id(), (short) 0, delta, key.bucket())));
        rows.sort(null);
        unsettled.put(doubt.id, new Flush(FlushId.parse(doubt.id), rows));
        reconstructed.add(doubt.id);
      } else {
        dropped = dropped.plus(new ReplayReport.Dropped(doubt.deltas.size(),
          doubt.deltas.values().stream().mapToLong(Long::longValue).sum()));
      }
    }
    doubts.clear();
  }
}
