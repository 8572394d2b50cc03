package io.countergateway.internal.beacon;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The ids of one public namespace that exist in the table (loaded at start) or were counted since: a view of one of
 * them is never folded by a budget of new ids ({@link ClientLimits}). Each id is held by 64 bits of its keyed hash
 * (two made-up ids meet by chance only, one pair in 2^64), in an open-addressing table at most half full, 16 bytes an
 * id; it takes ids until {@code capacity} ({@code beacon.maxKnownIds}, derived from the heap, shared among the public
 * namespaces), then no more: an id past it is new on each view and spends the budgets again, so a namespace with more
 * pages than that sees its rarer pages fold once the hour's budgets are spent (docs/operations.md "Sizing").
 *
 * <p>Insert-only and lock-free, shared by the gateway's event loops: a slot goes from 0 to a hash once, by
 * compare-and-set, and is never written again, so a reader sees an id either not yet there or there for good.
 */
final class KnownIds {
  private final AtomicLongArray slots;
  private final int mask;
  private final int capacity;
  private final AtomicInteger held = new AtomicInteger();

  KnownIds(int capacity) {
    this.capacity = Math.max(1, capacity);
    int size = Integer.highestOneBit(Math.max(2, this.capacity * 2 - 1)) << 1;
    this.slots = new AtomicLongArray(size);
    this.mask = size - 1;
  }

  /** Whether the id of keyed hash {@code hash} is known. */
  boolean contains(long hash) {
    long key = nonZero(hash);
    for (int i = index(key); ; i = (i + 1) & mask) {
      long slot = slots.get(i);
      if (slot == key) {
        return true;
      }
      if (slot == 0) {
        return false;
      }
    }
  }

  /** Makes the id of keyed hash {@code hash} known; false when it was not there and the set is full. */
  boolean add(long hash) {
    long key = nonZero(hash);
    for (int i = index(key); ; i = (i + 1) & mask) {
      long slot = slots.get(i);
      if (slot == key) {
        return true;
      }
      if (slot == 0) {
        if (held.get() >= capacity) {
          return false;
        }
        if (slots.compareAndSet(i, 0, key)) {
          held.incrementAndGet();
          return true;
        }
        if (slots.get(i) == key) {
          return true;
        }
      }
    }
  }

  /** Ids held now. */
  int size() {
    return held.get();
  }

  /** Ids it holds at most. */
  int capacity() {
    return capacity;
  }

  private int index(long key) {
    // the hash is keyed already: its bits are uniform, the low ones pick the slot
    return (int) (key ^ (key >>> 32)) & mask;
  }

  /** 0 marks an empty slot: the one hash of 2^64 that is 0 is held as 1. */
  private static long nonZero(long hash) {
    return hash == 0 ? 1 : hash;
  }
}
