package io.countergateway.beacon;

/** Why a beacon was answered 204 and not counted; the {@code reason} label of {@code gateway_beacons_dropped_total}. */
public enum DropReason {
  DO_NOT_TRACK, GLOBAL_PRIVACY_CONTROL, NO_USER_AGENT, CRAWLER, HEADLESS_BROWSER, CONFIGURED_PATTERN;

  /** As written in the metric label. */
  public final String label = name().toLowerCase();
}
