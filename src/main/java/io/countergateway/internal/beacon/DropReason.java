package io.countergateway.internal.beacon;

/** Why a beacon was answered 204 and not counted; the {@code reason} label of {@code gateway_beacons_dropped_total}. */
public enum DropReason {
  DO_NOT_TRACK, GLOBAL_PRIVACY_CONTROL, NO_USER_AGENT, CRAWLER, HEADLESS_BROWSER, CONFIGURED_PATTERN,
  /** A User-Agent longer than {@link UserAgentVerdicts#MAX_USER_AGENT_CHARS}: no browser sends one. */
  LONG_USER_AGENT,
  /**
   * A User-Agent that would take the bot filter more than {@code CrawlerDetector.MAX_RULES_RUN} rules to decide: made up
   * to cost it (no browser's takes a third of that), dropped rather than decided.
   */
  COSTLY_USER_AGENT,
  /**
   * The client address sent past its flood ceiling ({@code beacon.perClientPerMinute}, {@code perClientBurst}) or
   * repeated one id past {@code beacon.perPagePerMinute}, {@code perPageBurst}.
   */
  RATE_LIMITED;

  /** As written in the metric label. */
  public final String label = name().toLowerCase();
}
