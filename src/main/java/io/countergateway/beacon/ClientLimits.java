package io.countergateway.beacon;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.countergateway.config.NamespaceOptions;

import java.util.function.LongSupplier;

/**
 * Per-client limits on the beacons of public namespaces (src/DESIGN.md §10), shared by the gateway's event loops:
 * for each client address (a {@code http.trustedProxies} client by its forwarded address, IPv6 by its /64) and
 * namespace, a token bucket ({@code beacon.perClientPerMinute}, {@code beacon.perClientBurst}) and a cap on the
 * distinct ids it may have counted per hour ({@code beacon.idsPerClientPerHour}). The records are an LRU bounded by
 * {@code beacon.maxTrackedClients} (Caffeine): a client pushed out by a crowd starts afresh, never the other way round
 * (a crowd of new addresses cannot grow memory).
 *
 * <p>Distinct ids are remembered by a 32-bit hash each, in an array that grows with them up to the cap: a person's
 * client holds a handful (tens of bytes), a capped one the cap's 4 bytes each (1.2 KB at 300). Two ids colliding in
 * 32 bits count as one, which lets one in about 14 million made-up ids through past the cap.
 */
public final class ClientLimits {
  private static final long HOUR_NANOS = 3_600_000_000_000L;

  private final Cache<String, Client> clients;
  private final LongSupplier nanos;

  public ClientLimits(int maxTrackedClients, LongSupplier nanos) {
    this.clients = Caffeine.newBuilder().maximumSize(maxTrackedClients).executor(Runnable::run).build();
    this.nanos = nanos;
  }

  /** Null when {@code client}'s beacon of {@code id} on {@code namespace} may be counted, else why not. */
  public DropReason check(NamespaceOptions namespace, String client, String id) {
    int perMinute = namespace.getPerClientPerMinute();
    int idsPerHour = namespace.getIdsPerClientPerHour();
    if (perMinute == 0 && idsPerHour == 0) {
      return null;
    }
    long now = nanos.getAsLong();
    Client record = clients.get(namespace.getName() + '\n' + client, key -> new Client(namespace, now));
    return record.admit(id, now);
  }

  /** Client records held now (at most {@code beacon.maxTrackedClients}). */
  public long tracked() {
    clients.cleanUp();
    return clients.estimatedSize();
  }

  private static final class Client {
    private static final int[] NONE = new int[0];
    private final TokenBucket bucket;
    private final int idCap;
    /** The 32-bit hashes of the ids counted this hour, in the order they came; grows to at most idCap. */
    private int[] seen = NONE;
    private int distinct;
    private long windowStart;

    Client(NamespaceOptions namespace, long now) {
      int perMinute = namespace.getPerClientPerMinute();
      this.bucket = perMinute == 0 ? null : new TokenBucket(namespace.getPerClientBurst(), perMinute / 60.0, now);
      this.idCap = namespace.getIdsPerClientPerHour();
      this.windowStart = now;
    }

    DropReason admit(String id, long now) {
      if (bucket != null && bucket.take(now) != 0) {
        return DropReason.RATE_LIMITED;
      }
      if (idCap == 0) {
        return null;
      }
      int hash = mix(id.hashCode());
      synchronized (this) {
        if (now - windowStart >= HOUR_NANOS) {
          seen = NONE;
          distinct = 0;
          windowStart = now;
        }
        // a linear scan: a person's client holds a handful, a capped one at most idCap (300 by default: ~100 ns)
        for (int i = 0; i < distinct; i++) {
          if (seen[i] == hash) {
            return null;
          }
        }
        if (distinct >= idCap) {
          return DropReason.TOO_MANY_IDS;
        }
        if (distinct == seen.length) {
          seen = java.util.Arrays.copyOf(seen, Math.min(idCap, Math.max(4, seen.length * 2)));
        }
        seen[distinct++] = hash;
        return null;
      }
    }

    /** Spreads String.hashCode's bits (murmur3's finaliser). */
    private static int mix(int h) {
      h ^= h >>> 16;
      h *= 0x85ebca6b;
      h ^= h >>> 13;
      h *= 0xc2b2ae35;
      return h ^ (h >>> 16);
    }
  }
}
