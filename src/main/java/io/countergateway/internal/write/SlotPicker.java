package io.countergateway.internal.write;

import java.util.function.IntSupplier;

/**
 * Chooses one slot per counter per flush from the coalescer's lane. Lane {@code k} owns the {@code width} slots
 * {@code k·width … k·width + width − 1}, walked round by round, with {@code width} = {@code batching.maxInFlight} + 1:
 * the flushes one coalescer has in flight take different rows, and a retried flush moves to a row its lost
 * connection cannot still be locking. Lanes are leased so that no two coalescers, in one gateway or across
 * replicas, hold the same lane: their flushes never wait on each other's row locks as long as a namespace has at
 * least lanes × width slots. With fewer, lanes wrap around the slots and may share rows (the gateway warns at start).
 */
public final class SlotPicker {
  private final IntSupplier lane;
  private final int maxInFlight;
  private int round;

  /** {@code lane} is read at every flush: a lane lost with its lease is replaced without restarting the coalescer. */
  SlotPicker(IntSupplier lane, int maxInFlight) {
    this.lane = lane;
    this.maxInFlight = maxInFlight;
  }

  /** Slots per lane: one per flush in flight, and one spare for a retry. */
  public static int laneWidth(int maxInFlight) {
    return Math.max(1, maxInFlight) + 1;
  }

  void nextRound() {
    round++;
  }

  short slot(int slots) {
    return slotOf(lane.getAsInt(), maxInFlight, round, slots);
  }

  /** The slot lane {@code lane} writes in flush round {@code round}, for a namespace of {@code slots} slots. */
  public static short slotOf(int lane, int maxInFlight, int round, int slots) {
    int width = laneWidth(maxInFlight);
    return (short) Math.floorMod((long) lane * width + Math.floorMod(round, width), slots);
  }

  /** The number of slots a namespace needs so that {@code lanes} lanes never share one. */
  public static int slotsNeeded(int lanes, int maxInFlight) {
    return lanes * laneWidth(maxInFlight);
  }
}
