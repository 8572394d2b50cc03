package io.countergateway.internal.store;

import java.util.Set;

/**
 * A flush source's row as a writer that found it closed reads it, in one transaction with the row held shared.
 *
 * @param fence     the source's fence; null when it has no row, {@link #CLOSED} once the prune closed it
 * @param committed when closed: the ids committed under it (voided ones left out); empty otherwise
 */
public record FlushSourceRow(Long fence, Set<FlushId> committed) {
  /** The fence of a source closed as dead: no flush of it can commit any more. */
  public static final long CLOSED = Long.MAX_VALUE;

  public boolean missing() {
    return fence == null;
  }

  public boolean closed() {
    return fence != null && fence == CLOSED;
  }
}
