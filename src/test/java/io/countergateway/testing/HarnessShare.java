package io.countergateway.testing;

/**
 * How much of its normal work a crash-point harness does in this run. {@code -Dharness.tries} is the tries of the write
 * path's harness ({@link #TRIES} in a normal run); every other harness (the journal's crash points, the second
 * property) runs the same share of its own cases. Mutation testing sets it low, with {@code -Dharness.seed}: there a
 * harness runs once for every mutant the faster tests leave alive, and a fixed seed gives every mutant the same
 * scenarios. A soak sets it above {@link #TRIES} to run more than a normal run's share.
 */
public final class HarnessShare {
  /** The write path harness's tries in a normal run. */
  public static final int TRIES = 300;
  /** The write path harness's tries in this run. */
  public static final int TRIES_THIS_RUN = tries();

  private HarnessShare() {
  }

  /** {@code normal}, a count of cases in a normal run, in this run's share (at least one). */
  public static int of(int normal) {
    return Math.max(1, (int) ((long) normal * TRIES_THIS_RUN / TRIES));
  }

  /** The seed every harness draws from in this run, or null for a new one each run. */
  public static String seed() {
    return System.getProperty("harness.seed");
  }

  private static int tries() {
    int tries = Integer.getInteger("harness.tries", TRIES);
    if (tries < 1) {
      throw new IllegalArgumentException("harness.tries must be at least 1, was " + tries);
    }
    return tries;
  }
}
