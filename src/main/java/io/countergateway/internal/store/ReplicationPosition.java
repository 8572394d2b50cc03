package io.countergateway.internal.store;

/**
 * Where the primary's WAL stands and how far its standbys have it, read in one statement
 * ({@link CounterStore#replicationPosition}): what the journal needs to know whether a committed flush would survive
 * a failover (src/DESIGN.md §4 "Replication").
 *
 * @param timeline      the primary's timeline: a promotion starts a new one, so a change means another server took
 *                      over and what it has must be checked again
 * @param insertLsn     the WAL insert position when the statement ran: past the commit record of every transaction
 *                      whose COMMIT had returned before the statement was sent
 * @param standbys      the physical standbys streaming from it (logical subscribers are no failover target)
 * @param minFlushedLsn the lowest position flushed to disk by any of them; 0 when one has not said
 */
public record ReplicationPosition(long timeline, long insertLsn, int standbys, long minFlushedLsn) {
}
