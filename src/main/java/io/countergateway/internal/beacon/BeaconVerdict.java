package io.countergateway.internal.beacon;

import io.countergateway.internal.model.Increment;

/**
 * What the beacon filter decided: counted as {@code increment} (its own id, or a reserved one when {@code folded}
 * names why), or not counted ({@code dropped} names why, and {@code increment} is the beacon as it came).
 */
public record BeaconVerdict(Increment increment, FoldReason folded, DropReason dropped) {
  public static BeaconVerdict counted(Increment increment, FoldReason folded) {
    return new BeaconVerdict(increment, folded, null);
  }

  public static BeaconVerdict dropped(Increment increment, DropReason reason) {
    return new BeaconVerdict(increment, null, reason);
  }

  public boolean isCounted() {
    return dropped == null;
  }
}
