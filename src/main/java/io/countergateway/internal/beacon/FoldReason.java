package io.countergateway.internal.beacon;

/**
 * Why a beacon was counted under a reserved id of its namespace ({@link ReservedIds}) instead of its own: the view is
 * counted, its page is not. The {@code reason} label of {@code gateway_beacons_folded_total}.
 */
public enum FoldReason {
  /** The id cannot be stored as sent (control characters, malformed text, or the namespace's own id pattern). */
  INVALID_ID,
  /** A new id from a client that already brought its share of new ids this hour ({@code beacon.idsPerClientPerHour}). */
  CLIENT_NEW_IDS,
  /** A new id from a network whose clients already brought its share of new ids this hour. */
  NETWORK_NEW_IDS,
  /** A new id past the namespace's budget of new ids this hour ({@code beacon.newIdsPerHour}). */
  NAMESPACE_NEW_IDS;

  /** As written in the metric label. */
  public final String label = name().toLowerCase();
}
