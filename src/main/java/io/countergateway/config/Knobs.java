package io.countergateway.config;

import java.util.Locale;

/**
 * Switches that exist only to measure or test the gateway, read here and nowhere else, as system properties
 * ({@code -Dcountergateway.…}), never from the configuration: a user has no reason to turn them, so they are not keys
 * (HikariCP reads its rare knobs the same way). docs/testing.md lists them. Each is read when it is used, so a test
 * that sets one for a gateway it starts in its own JVM clears it afterwards.
 */
public final class Knobs {
  /** The prefix of every knob. */
  public static final String PREFIX = "countergateway.";
  /**
   * {@code false}: every replica writes from a random slot offset of its own instead of leasing lanes, so replicas may
   * share slot rows: the control run that shows what lanes buy (GaleraIT).
   */
  public static final String LANES_ENABLED = PREFIX + "lanes.enabled";

  private Knobs() {
  }

  /** Whether ingest verticles lease replica lanes ({@link #LANES_ENABLED}, true unless set to false). */
  public static boolean lanesEnabled() {
    return flag(LANES_ENABLED, true);
  }

  /**
   * A memory bound pinned by a test ({@code -Dcountergateway.batching.maxPendingKeys=2}), in place of what
   * {@link MemoryBudget} derives from the heap: a test that fills a holder on purpose needs a small one. Null when unset.
   */
  public static Long bound(String label, long min, long max) {
    String name = PREFIX + label;
    String value = System.getProperty(name);
    if (value == null || value.isBlank()) {
      return null;
    }
    try {
      long bound = Long.parseLong(value.strip());
      if (bound >= min && bound <= max) {
        return bound;
      }
    } catch (NumberFormatException notANumber) {
      // refused below
    }
    throw new ConfigException("-D" + name, "must be a whole number from " + min + " to " + max + ", got '" + value + "'");
  }

  private static boolean flag(String name, boolean unset) {
    String value = System.getProperty(name);
    if (value == null || value.isBlank()) {
      return unset;
    }
    return switch (value.strip().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new ConfigException("-D" + name, "must be true or false, got '" + value + "'");
    };
  }
}
