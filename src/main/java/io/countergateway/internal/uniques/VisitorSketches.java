package io.countergateway.internal.uniques;

import org.apache.datasketches.hll.HllSketch;
import org.apache.datasketches.hll.TgtHllType;
import org.apache.datasketches.hll.Union;

import java.util.List;

/**
 * The HyperLogLog sketches of unique visitors (Apache DataSketches): HLL_4, the most compact of its kinds (2^lgK / 2
 * bytes once dense, far less while sparse), with 2^lgK registers. Two sketches union into one that counts the distinct
 * values of both, whatever their order and however often a value was seen: what lets slots, replicas and retries merge.
 */
public final class VisitorSketches {
  /** The bounds reported with an estimate: two standard deviations, about 95 % of the time. */
  public static final int SIGMAS = 2;

  private VisitorSketches() {
  }

  /** An estimate of distinct visitors with its two-sigma bounds. */
  public record Estimate(long unique, long lower, long upper) {
    public static final Estimate NONE = new Estimate(0, 0, 0);
  }

  public static HllSketch empty(int lgK) {
    return new HllSketch(lgK, TgtHllType.HLL_4);
  }

  /** {@code stored} (empty: nothing stored yet) and {@code incoming}, as one compact sketch. */
  public static byte[] union(byte[] stored, byte[] incoming, int lgK) {
    Union union = new Union(lgK);
    if (stored.length > 0) {
      union.update(HllSketch.heapify(stored));
    }
    union.update(HllSketch.heapify(incoming));
    return union.getResult(TgtHllType.HLL_4).toCompactByteArray();
  }

  /** The distinct visitors of all {@code sketches} together. */
  public static Estimate estimate(List<byte[]> sketches, int lgK) {
    if (sketches.isEmpty()) {
      return Estimate.NONE;
    }
    Union union = new Union(lgK);
    for (byte[] sketch : sketches) {
      union.update(HllSketch.heapify(sketch));
    }
    return new Estimate(Math.round(union.getEstimate()), (long) Math.floor(union.getLowerBound(SIGMAS)),
      (long) Math.ceil(union.getUpperBound(SIGMAS)));
  }

  /** The relative error of an estimate at two sigmas, for a merged sketch of {@code lgK}: about 3.2 % at lgK 12. */
  public static double relativeError(int lgK) {
    return HllSketch.getRelErr(true, true, lgK, SIGMAS);
  }
}
