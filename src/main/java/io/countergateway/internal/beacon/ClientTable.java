package io.countergateway.internal.beacon;

import java.security.SecureRandom;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * At most {@code capacity} records under keys of two longs, shared by the gateway's event loops: the per-client,
 * per-network and per-page records of {@link ClientLimits}. Set-associative: a key hashes to one set of {@value #WAYS}
 * slots, kept most recently used first; a key found moves to the front, a new key goes to the front and, when the set
 * is full, pushes out the least recently used record that holds no limit now ({@link Holding}: e.g. a bucket at least
 * half full), or the least recently used one when all of them hold one; that record, cleared, is the new key's. So a
 * crowd of new keys pushes out records that would start afresh the same anyway, never a capped client or network while
 * its set has one that is not capped; once the table is full, the crowd allocates nothing, and costs no memory past
 * the capacity. A record is used under its set's lock ({@link #lockOf}), so no record is cleared while a beacon is
 * being checked against it.
 *
 * <p>Why not Caffeine: when nearly every beacon comes from a new address (a popular site, or a crowd of forged ones),
 * each level of each beacon is an insertion and an eviction, and Caffeine's maintenance per insertion (its frequency
 * sketch, window and probation queues, the map's node, a key object) costs a microsecond or more, a tenth of the
 * gateway's throughput. Here the same costs one lock and the eight keys of one set. Why not Agrona's
 * {@code Long2ObjectCache}, the same layout: its key is one long (a /64 and its namespace and level need two), and its
 * sets are first in, first out, so a client in use would be pushed out as soon as a new one. The set is chosen by a
 * hash seeded when the process starts, so which addresses share a set differs from one run to the next; and since a
 * record in use is its set's most recently used, pushing it out takes {@value #WAYS} new keys of its set between two
 * of its beacons.
 */
final class ClientTable<V> {
  /** Slots of a set: two cache lines of keys and one of references, scanned in a few nanoseconds. */
  static final int WAYS = 8;
  /** Locks over the sets (set index modulo): enough that the event loops rarely wait for each other. */
  private static final int LOCKS = 64;

  private final int sets;
  private final long[] highKeys;
  private final long[] lowKeys;
  private final Object[] records;
  private final Object[] locks = new Object[LOCKS];
  private final Supplier<V> newRecord;
  private final Consumer<V> clear;
  private final Holding<V> holding;
  private final long seed;

  /** Whether a record holds a limit at {@code nowNanos}: pushing it out would give its key its full budget back. */
  @FunctionalInterface
  interface Holding<V> {
    boolean holdsLimit(V record, long nowNanos);
  }

  /**
   * At most {@code capacity} records (at least {@value #WAYS}). {@code newRecord}: a record for a key when its set has
   * room; {@code clear}: makes a record pushed out of a full set a new one, for the key that pushed it out;
   * {@code holding}: the records pushed out last.
   */
  ClientTable(int capacity, Supplier<V> newRecord, Consumer<V> clear, Holding<V> holding) {
    this.sets = Math.max(1, capacity / WAYS);
    this.highKeys = new long[sets * WAYS];
    this.lowKeys = new long[sets * WAYS];
    this.records = new Object[sets * WAYS];
    for (int i = 0; i < LOCKS; i++) {
      locks[i] = new Object();
    }
    this.newRecord = newRecord;
    this.clear = clear;
    this.holding = holding;
    this.seed = new SecureRandom().nextLong();
  }

  /** Records the table holds at most. */
  int capacity() {
    return records.length;
  }

  /** The lock to hold while calling {@link #recordOf} for {@code (high, low)} and while using the record. */
  Object lockOf(long high, long low) {
    return locks[setOf(high, low) % LOCKS];
  }

  /**
   * The record of {@code (high, low)}, a new one if the table has none; it becomes its set's most recently used. The
   * caller holds {@code lockOf(high, low)}.
   */
  @SuppressWarnings("unchecked")
  V recordOf(long high, long low, long nowNanos) {
    int first = setOf(high, low) * WAYS;
    // the key's slot, else the first empty one, else the one to push out: where the record comes from
    int at = -1;
    boolean found = false;
    for (int i = first; i < first + WAYS; i++) {
      if (records[i] == null) {
        at = i;
        break;
      }
      if (highKeys[i] == high && lowKeys[i] == low) {
        at = i;
        found = true;
        break;
      }
    }
    if (at < 0) {
      at = evictable(first, nowNanos);
    }
    V record = (V) records[at];
    if (record == null) {
      record = newRecord.get();
    } else if (!found) {
      clear.accept(record);
    }
    int before = at - first;
    System.arraycopy(highKeys, first, highKeys, first + 1, before);
    System.arraycopy(lowKeys, first, lowKeys, first + 1, before);
    System.arraycopy(records, first, records, first + 1, before);
    highKeys[first] = high;
    lowKeys[first] = low;
    records[first] = record;
    return record;
  }

  /** The record of {@code (high, low)}, or null when the table has none; the caller holds {@code lockOf(high, low)}. */
  @SuppressWarnings("unchecked")
  V find(long high, long low) {
    int first = setOf(high, low) * WAYS;
    for (int i = first; i < first + WAYS && records[i] != null; i++) {
      if (highKeys[i] == high && lowKeys[i] == low) {
        return (V) records[i];
      }
    }
    return null;
  }

  /** The full set's least recently used record holding no limit, else its least recently used one. */
  @SuppressWarnings("unchecked")
  private int evictable(int first, long nowNanos) {
    for (int i = first + WAYS - 1; i >= first; i--) {
      if (!holding.holdsLimit((V) records[i], nowNanos)) {
        return i;
      }
    }
    return first + WAYS - 1;
  }

  /** Records held now. */
  long size() {
    long held = 0;
    for (int set = 0; set < sets; set++) {
      synchronized (locks[set % LOCKS]) {
        for (int i = set * WAYS; i < (set + 1) * WAYS && records[i] != null; i++) {
          held++;
        }
      }
    }
    return held;
  }

  private int setOf(long high, long low) {
    long hash = mix(mix(low ^ seed) + high);
    return (int) ((hash >>> 1) % sets);
  }

  /** MurmurHash3's 64-bit finaliser: every bit of the input moves about half the bits of the output. */
  private static long mix(long value) {
    long h = value;
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
