package io.countergateway.batch;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Chooses one slot per counter per flush. Coalescer {@code i} of {@code n} walks the slots congruent to
 * {@code i + offset} modulo {@code n}, so the coalescers of one gateway never write the same slot row at the
 * same time; the random offset does the same, with high probability, between replicas.
 */
final class SlotPicker {
  private static final int REPLICA_OFFSET = ThreadLocalRandom.current().nextInt(1024);

  private final int lane;
  private final int lanes;
  private int round;

  SlotPicker(int instanceIndex, int instanceCount) {
    this.lane = REPLICA_OFFSET + instanceIndex;
    this.lanes = Math.max(1, instanceCount);
  }

  void nextRound() {
    round++;
  }

  short slot(int slots) {
    return (short) Math.floorMod(lane + (long) lanes * round, slots);
  }
}
