package io.countergateway.internal.beacon;

import com.google.common.primitives.Ints;
import com.google.common.primitives.Longs;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.model.ClientNetworks;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Per-client limits on the beacons of public namespaces (src/DESIGN.md §10), shared by the gateway's event loops:
 * for each client and namespace, a token bucket ({@code beacon.perClientPerMinute}, {@code beacon.perClientBurst}) and
 * a cap on the distinct ids it may have counted per hour ({@code beacon.idsPerClientPerHour}); and the same for each
 * network the client belongs to, with {@code limits.clientsPerNetwork} clients' worth of each ({@code ClientNetworks}:
 * an IPv4 address and its /24, an IPv6 /64, its /56 and its /48), so that holding many addresses of one network buys
 * nothing past the network's budget. A beacon is counted when the client's record and then each network's admit it;
 * a refusal stops there, so a network is charged only for the beacons its clients' own limits passed. The client
 * records are held in a table of {@code beacon.maxTrackedClients}, the network records in one of a
 * {@code clientsPerNetwork}th of that, each least recently seen first out ({@link ClientTable}): a client pushed out by
 * a crowd starts afresh, never the other way round (a crowd of new addresses cannot grow memory).
 *
 * <p>A record is keyed by numbers, not text: the namespace's number, the level and the address's prefix at that level
 * (an IPv4 address and its /24 as 32 and 24 bits, an IPv6 /64, /56 and /48 as the first 64 bits masked), so a beacon
 * builds no key strings; an address that is not a literal is keyed by 64 bits of its keyed hash. A record holds no
 * token bucket until its client's second beacon: the first always fits the burst (at least 1), so the record only
 * notes when it came, and the bucket is made as of then on the second.
 *
 * <p>Distinct ids are remembered by 32 bits of a keyed hash each (SipHash-2-4 under a key drawn at random when the
 * process starts), in an array that grows with them up to the cap: a person's client holds a handful (tens of bytes), a
 * capped one the cap's 4 bytes each (1.2 KB at 300; a network's 16 times that). The key is what makes the cap hold:
 * with an unkeyed hash (such as {@code String.hashCode}, where {@code "Aa"} and {@code "BB"} collide, so n such pairs
 * give 2^n ids of one hash) a client could make any number of ids that count as one. Without the key, two ids collide
 * in 32 bits by chance only: one in about 14 million made-up ids passes the cap.
 */
public final class ClientLimits {
  private static final long HOUR_NANOS = 3_600_000_000_000L;
  /** What the low key of a level holds: the client's IPv4 address, its IPv6 prefix, or its text's keyed hash. */
  private static final int TEXT = 0;
  private static final int IPV4 = 4;
  private static final int IPV6 = 6;

  private final ClientTable<Client> clients;
  private final ClientTable<Client> networks;
  private final int clientsPerNetwork;
  private final LongSupplier nanos;
  /** SipHash-2-4 under a key of this process: nobody outside it can make two ids (or two addresses) that hash alike. */
  private final SipHash idHash;
  /** Each namespace's number in the records' keys, given when its first beacon is checked (namespaces are configured). */
  private final Map<String, Integer> namespaceNumbers = new ConcurrentHashMap<>();
  private final AtomicInteger namespacesNumbered = new AtomicInteger();

  public ClientLimits(int maxTrackedClients, int clientsPerNetwork, LongSupplier nanos) {
    this.clients = new ClientTable<>(maxTrackedClients, Client::new, Client::clear);
    this.networks = new ClientTable<>(trackedNetworks(maxTrackedClients, clientsPerNetwork), Client::new, Client::clear);
    this.clientsPerNetwork = clientsPerNetwork;
    this.nanos = nanos;
    SecureRandom random = new SecureRandom();
    this.idHash = new SipHash(random.nextLong(), random.nextLong());
  }

  /** Network records kept at most: a {@code clientsPerNetwork}th of the clients, each up to that many clients' size. */
  public static int trackedNetworks(int maxTrackedClients, int clientsPerNetwork) {
    return Math.max(100, maxTrackedClients / clientsPerNetwork);
  }

  /**
   * Null when the beacon of {@code id} on {@code namespace} from {@code address} (the client's address as the gateway
   * sees it, {@code ClientAddress}) may be counted, else why not.
   */
  public DropReason check(NamespaceOptions namespace, String address, String id) {
    int perMinute = namespace.getPerClientPerMinute();
    int idsPerHour = namespace.getIdsPerClientPerHour();
    if (perMinute == 0 && idsPerHour == 0) {
      return null;
    }
    long now = nanos.getAsLong();
    int hash = idsPerHour == 0 ? 0 : (int) idHash.hash(id);
    long namespaceKey = (long) namespaceNumber(namespace.getName()) << 16;
    byte[] literal = ClientNetworks.literal(address);
    int kind = literal == null ? TEXT : literal.length == 4 ? IPV4 : IPV6;
    long bits = switch (kind) {
      case IPV4 -> Ints.fromByteArray(literal) & 0xFFFF_FFFFL;
      case IPV6 -> Longs.fromByteArray(literal);
      default -> idHash.hash(address == null ? "" : address);
    };
    int levels = kind == TEXT ? 1 : kind == IPV4 ? 2 : 3;
    for (int level = 0; level < levels; level++) {
      ClientTable<Client> table = level == 0 ? clients : networks;
      long high = namespaceKey | kind << 8 | level;
      long low = prefix(kind, level, bits);
      int share = ClientNetworks.share(level, levels, clientsPerNetwork);
      DropReason refused;
      synchronized (table.lockOf(high, low)) {
        refused = table.recordOf(high, low).admit(namespace, share, hash, now);
      }
      if (refused != null) {
        return refused;
      }
    }
    return null;
  }

  /** Client and network records held now (at most {@code beacon.maxTrackedClients} and a share of it). */
  public long tracked() {
    return clients.size() + networks.size();
  }

  private int namespaceNumber(String name) {
    Integer number = namespaceNumbers.get(name);
    return number != null ? number : namespaceNumbers.computeIfAbsent(name, any -> namespacesNumbered.getAndIncrement());
  }

  /** The low key of {@code level}: the address itself at level 0, then its /24 (IPv4), its /56 and /48 (IPv6). */
  private static long prefix(int kind, int level, long bits) {
    if (kind == IPV4) {
      return level == 0 ? bits : bits >>> 8;
    }
    if (kind == IPV6) {
      return level == 0 ? bits : level == 1 ? bits & ~0xFFL : bits & ~0xFFFFL;
    }
    return bits;
  }

  /**
   * One client's or network's record. Until its second beacon it holds no token bucket: the first beacon always fits
   * the burst (at least 1), so the record notes when it came, and the bucket is made as of then. Until its second id it
   * holds no array either: the first id's hash is a field of its own. Used under its table's lock.
   */
  private static final class Client {
    private static final int[] NONE = new int[0];
    /** Null until the second beacon, or always when the namespace sets no rate. */
    private TokenBucket bucket;
    /** Whether a beacon came (at firstNanos). */
    private boolean used;
    private long firstNanos;
    /** The 32-bit hash of the first id counted this hour, when {@code distinct > 0}. */
    private int firstId;
    /** The hashes of the ids counted this hour after the first, in the order they came; grows to the id cap less 1. */
    private int[] laterIds = NONE;
    private int distinct;
    private long windowStart;

    /**
     * Makes this record a new one: pushed out of its table, it is the record of the key that pushed it out. A reference
     * is written only when it changes: each write marks the record's card for the next young collection to scan, and
     * most records pushed out by a crowd have neither a bucket nor more than one id.
     */
    void clear() {
      if (bucket != null) {
        bucket = null;
      }
      if (laterIds != NONE) {
        laterIds = NONE;
      }
      used = false;
      firstNanos = 0;
      firstId = 0;
      distinct = 0;
      windowStart = 0;
    }

    /** {@code share}: how many clients' worth of the namespace's per-client limits this record holds. */
    DropReason admit(NamespaceOptions namespace, int share, int hash, long now) {
      int perMinute = namespace.getPerClientPerMinute();
      if (!used) {
        used = true;
        firstNanos = now;
        windowStart = now;
      } else if (perMinute != 0) {
        if (bucket == null) {
          bucket = new TokenBucket((double) namespace.getPerClientBurst() * share, perMinute * share / 60.0, firstNanos);
          bucket.take(firstNanos);
        }
        if (bucket.take(now) != 0) {
          return DropReason.RATE_LIMITED;
        }
      }
      int idCap = namespace.getIdsPerClientPerHour() * share;
      if (idCap == 0) {
        return null;
      }
      if (now - windowStart >= HOUR_NANOS) {
        laterIds = NONE;
        distinct = 0;
        windowStart = now;
      }
      // a linear scan: a person's client holds a handful, a capped one at most idCap (300 by default: ~100 ns)
      if (distinct > 0 && firstId == hash) {
        return null;
      }
      for (int i = 0; i < distinct - 1; i++) {
        if (laterIds[i] == hash) {
          return null;
        }
      }
      if (distinct >= idCap) {
        return DropReason.TOO_MANY_IDS;
      }
      if (distinct == 0) {
        firstId = hash;
      } else {
        if (distinct - 1 == laterIds.length) {
          laterIds = Arrays.copyOf(laterIds, Math.min(idCap - 1, Math.max(4, laterIds.length * 2)));
        }
        laterIds[distinct - 1] = hash;
      }
      distinct++;
      return null;
    }
  }
}
