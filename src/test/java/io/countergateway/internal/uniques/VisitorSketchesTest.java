package io.countergateway.internal.uniques;

import org.apache.datasketches.hll.HllSketch;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Visitor sketches")
class VisitorSketchesTest {
  private static byte[] sketchOf(long seed, int visitors) {
    SplittableRandom random = new SplittableRandom(seed);
    HllSketch sketch = VisitorSketches.empty(12);
    for (int i = 0; i < visitors; i++) {
      sketch.update(random.nextLong());
    }
    return sketch.toCompactByteArray();
  }

  @Test
  @DisplayName("a merge repeated, or in another order, gives the same estimate: merges may be retried and slots read in any order")
  void mergesAreIdempotentAndOrderFree() {
    byte[] a = sketchOf(1, 5_000);
    byte[] b = sketchOf(2, 7_000);
    byte[] once = VisitorSketches.union(a, b, 12);
    byte[] twice = VisitorSketches.union(once, b, 12);
    byte[] reversed = VisitorSketches.union(b, a, 12);
    VisitorSketches.Estimate estimate = VisitorSketches.estimate(List.of(once), 12);
    assertThat(VisitorSketches.estimate(List.of(twice), 12)).isEqualTo(estimate);
    assertThat(VisitorSketches.estimate(List.of(reversed), 12)).isEqualTo(estimate);
    assertThat(VisitorSketches.estimate(List.of(a, b, a), 12)).isEqualTo(estimate);
    assertThat(Math.abs(estimate.unique() - 12_000)).isLessThanOrEqualTo((long) (12_000 * VisitorSketches.relativeError(12)));
    assertThat(estimate.lower()).isLessThanOrEqualTo(estimate.unique());
    assertThat(estimate.upper()).isGreaterThanOrEqualTo(estimate.unique());
  }

  @Test
  @DisplayName("an empty stored row merges as nothing, and no sketch at all reads as 0 visitors")
  void emptyRowsAndNoSketches() {
    byte[] a = sketchOf(3, 40);
    assertThat(VisitorSketches.estimate(List.of(VisitorSketches.union(new byte[0], a, 12)), 12).unique()).isEqualTo(40);
    assertThat(VisitorSketches.estimate(List.of(), 12)).isEqualTo(VisitorSketches.Estimate.NONE);
    assertThat(VisitorSketches.relativeError(12)).isBetween(0.02, 0.04);
  }
}
