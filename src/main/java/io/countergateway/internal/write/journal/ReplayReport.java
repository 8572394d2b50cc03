package io.countergateway.internal.write.journal;

import java.util.List;

/**
 * What a replay found (src/DESIGN.md §4 "Replay"): for its log line, and for the write side, which finds the
 * reconstructed flushes among the unsettled ones it writes again.
 *
 * @param files          segment files read
 * @param frames         good frames read
 * @param bytesExamined  bytes looked at to read them (a small multiple of the files' size: the pass is linear)
 * @param damaged        regions with no good frame that a later good frame follows: written before frames that were
 *                       answered after them, so they can have held increments already answered
 * @param tail           what follows the last good frame of a stream: a frame cut short by the crash
 * @param reconstructed  flush ids under which the deltas pending before a damaged region are handed over, because the
 *                       region hid that flush's record: written again under its own id, such a flush writes nothing if
 *                       it had committed, and commits once if not
 * @param dropped        deltas pending before a damaged region that hid flush records the replay cannot name or
 *                       resolve: never written, since they may be in a committed flush (at most lost, never doubled)
 */
public record ReplayReport(int files, long frames, long bytesExamined, Skipped damaged, Skipped tail,
                           List<String> reconstructed, Dropped dropped) {
  public static final ReplayReport NOTHING = new ReplayReport(0, 0, 0, Skipped.NONE, Skipped.NONE, List.of(),
    Dropped.NONE);

  public ReplayReport {
    reconstructed = List.copyOf(reconstructed);
  }

  /**
   * Bytes with no good frame: how many, how many frames they held (by the frames' sequence numbers where known), the
   * increments still readable in them, and whether they can have held increments already answered 202/204.
   */
  public record Skipped(long bytes, long frames, long increments, boolean mayHoldAcknowledged) {
    public static final Skipped NONE = new Skipped(0, 0, 0, false);

    Skipped plus(Skipped other) {
      return new Skipped(bytes + other.bytes, frames + other.frames, increments + other.increments,
        mayHoldAcknowledged || other.mayHoldAcknowledged);
    }

    public boolean any() {
      return bytes > 0 || frames > 0;
    }
  }

  /** Counters whose pending deltas were in doubt and not written, and the sum of those deltas. */
  public record Dropped(long counters, long delta) {
    public static final Dropped NONE = new Dropped(0, 0);

    Dropped plus(Dropped other) {
      return new Dropped(counters + other.counters, delta + other.delta);
    }
  }

  /** Whether what the replay skipped or set aside can have held increments already answered. */
  public boolean mayHaveLost() {
    return damaged.any() || dropped.counters() > 0 || !reconstructed.isEmpty()
      || tail.mayHoldAcknowledged() && tail.any();
  }

  /** The replay's log line: what was skipped or set aside, and what that means for what was answered. */
  public String describe() {
    StringBuilder message = new StringBuilder("journal replayed");
    if (damaged.any()) {
      message.append("; ").append(damaged.bytes()).append(" damaged bytes in the middle were skipped (")
        .append(damaged.frames()).append(" frames, ").append(damaged.increments())
        .append(" increments readable in them): written before frames answered after them, they can have held "
          + "increments already answered, which are lost");
    }
    if (!reconstructed.isEmpty()) {
      message.append("; the damage hid the record of flush ").append(String.join(", ", reconstructed))
        .append(": the deltas pending before it are written again under that id, which writes nothing if it had "
          + "committed");
    }
    if (dropped.counters() > 0) {
      message.append("; ").append(dropped.counters()).append(" counters (").append(dropped.delta())
        .append(" in all) were pending before a damaged region that hid flush records: they may be in a committed "
          + "flush, so they are not written (at most lost, never counted twice)");
    }
    if (tail.any()) {
      message.append("; a frame cut short at the end was dropped (").append(tail.bytes()).append(" bytes, ")
        .append(tail.increments()).append(" increments readable")
        .append(tail.mayHoldAcknowledged() ? "; under fsync everyMs or off, or whole but damaged, it can have been "
          + "answered" : ", never answered under fsync always").append(')');
    }
    return message.toString();
  }

  /** Two streams' reports as one. */
  ReplayReport plus(ReplayReport other) {
    return new ReplayReport(files + other.files, frames + other.frames, bytesExamined + other.bytesExamined,
      damaged.plus(other.damaged), tail.plus(other.tail),
      java.util.stream.Stream.concat(reconstructed.stream(), other.reconstructed.stream()).toList(),
      dropped.plus(other.dropped));
  }
}
