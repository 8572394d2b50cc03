package io.countergateway.internal.write;

import java.util.Locale;

/** When a write is answered: after its commit (200) or once the gateway holds it (202). */
public enum AckMode {
  COMMIT, ACCEPTED;

  /** As written in answers and queries, computed once. */
  public final String label = name().toLowerCase(Locale.ROOT);

  /** The mode written {@code label} ("commit", "accepted"), null for anything else. */
  public static AckMode named(String label) {
    for (AckMode mode : values()) {
      if (mode.label.equals(label)) {
        return mode;
      }
    }
    return null;
  }
}
