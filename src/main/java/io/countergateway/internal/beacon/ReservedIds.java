package io.countergateway.internal.beacon;

/**
 * The ids a public namespace counts folded beacons under. Page paths start with {@code /}, so neither meets a page;
 * an id sent as one of these is counted under it like any other view of it.
 */
public final class ReservedIds {
  /** New ids past a client's, a network's or the namespace's budget: analytics tools' "(other)" row. */
  public static final String OTHER = "(other)";
  /** Ids that cannot be stored as sent. */
  public static final String INVALID = "(invalid)";

  private ReservedIds() {
  }

  /** The id a beacon folded for {@code reason} is counted under. */
  public static String of(FoldReason reason) {
    return reason == FoldReason.INVALID_ID ? INVALID : OTHER;
  }
}
