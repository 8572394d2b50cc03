package io.countergateway.batch;

import java.util.function.IntSupplier;

/**
 * Chooses one slot per counter per flush from the coalescer's lane. Lane {@code k} owns the {@code width} slots
 * {@code k·width … k·width + width − 1} ({@code width} = {@code batching.maxInFlight}, so the flushes one coalescer
 * has in flight take different rows). Lanes are leased so that no two coalescers, in one gateway or across
 * replicas, hold the same lane: their flushes never wait on each other's row locks as long as a namespace has at
 * least lanes × width slots. With fewer, lanes wrap around the slots and may share rows (the gateway warns at start).
 */
public final class SlotPicker {
  private final IntSupplier lane;
  private final int width;
  private int round;

  /** {@code lane} is read at every flush: a lane lost with its lease is replaced without restarting the coalescer. */
  SlotPicker(IntSupplier lane, int width) {
    this.lane = lane;
    this.width = Math.max(1, width);
  }

  void nextRound() {
    round++;
  }

  short slot(int slots) {
    return slotOf(lane.getAsInt(), width, round, slots);
  }

  /** The slot lane {@code lane} writes in flush round {@code round}, for a namespace of {@code slots} slots. */
  public static short slotOf(int lane, int width, int round, int slots) {
    return (short) Math.floorMod((long) lane * width + Math.floorMod(round, width), slots);
  }

  /** The number of slots a namespace needs so that {@code lanes} lanes never share one. */
  public static int slotsNeeded(int lanes, int width) {
    return lanes * Math.max(1, width);
  }
}
