package io.countergateway.internal.beacon;

import com.google.common.primitives.Ints;
import com.google.common.primitives.Longs;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.model.ClientNetworks;
import io.vertx.core.Future;

import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The limits on the beacons of public namespaces (src/DESIGN.md §10), shared by the gateway's event loops. The rule: a
 * limit refuses what an attacker adds, never what a visitor sees. Three kinds, each checked at every scope a client
 * belongs to ({@link ClientNetworks}: an IPv4 address and its /24, an IPv6 /64, its /56 and its /48; a network holds
 * {@code limits.clientsPerNetwork} clients' worth), the widest scope first:
 * <ul>
 *   <li><b>A flood ceiling</b> ({@code beacon.perClientPerMinute}, {@code perClientBurst}): requests per client, far
 *   above what the people behind one address (an office, a carrier NAT, a proxy) send; past it the beacon is dropped
 *   {@code rate_limited}.</li>
 *   <li><b>The inflation key</b> ({@code beacon.perPagePerMinute}, {@code perPageBurst}): views of one page by one
 *   client. Repeating one page is how a counter is inflated, and the client and the page are what an inflater cannot
 *   vary cheaply (a new page is a new counter, which inflates nothing; a new address is a new client of the same
 *   network). Past it the repeat is dropped {@code rate_limited}; thirty people behind one address viewing different
 *   pages never meet it. A user agent in the key would be free to vary, so it is not in it.</li>
 *   <li><b>Budgets of new ids</b> ({@code beacon.idsPerClientPerHour} per client, its networks' shares, and
 *   {@code beacon.newIdsPerHour} per namespace): an id the namespace does not know ({@link KnownIds}) spends one of
 *   each; past any of them the view is counted under {@code (other)} with the reason ({@link FoldReason}), never
 *   dropped. A view of a known id spends none: burning a network's budget cannot cost its neighbours a page view.</li>
 * </ul>
 * Each kind takes one token at every scope, the widest first, and a scope that refuses stops the check and gives
 * back what the wider ones took, so a network is charged only for what its clients' own limits passed and no record
 * is made for a request its network refuses: a flood of refused beacons from a /48 cannot push other clients out.
 *
 * <p>The records are held in tables of numbers, not text ({@link ClientTable}): clients ({@code
 * beacon.maxTrackedClients}, derived from the heap), networks (a quarter of that) and (client, page) pairs (twice
 * that). A table pushes out records that hold no limit first (each bucket at least half full), so a capped client or
 * network stays capped while a crowd of others passes through. A record's key: the namespace's number, the kind of
 * address and the level, and the prefix at that level (an IPv4 address and its /24 as 32 and 24 bits, an IPv6 /64,
 * /56 and /48 as the first 64 bits masked); an address that is not a literal is keyed by 64 bits of its keyed hash.
 * A page is 64 bits of its id's keyed hash (SipHash-2-4 under a key drawn when the process starts), so no one outside
 * can make two pages share a bucket, or an unknown id pass for a known one. A check allocates nothing.
 */
public final class ClientLimits {
  private static final double HOUR_NANOS = 3.6e12;
  private static final double MINUTE_NANOS = 6e10;
  /** What the low key of a level holds: the client's IPv4 address, its IPv6 prefix, or its text's keyed hash. */
  private static final int TEXT = 0;
  private static final int IPV4 = 4;
  private static final int IPV6 = 6;
  /** What {@link #takeDownward} answers when every level gave a token and the client's record is new. */
  private static final int NEW_CLIENT = -2;

  /** What the limits made of a beacon: counted under its own id, counted under {@code (other)}, or dropped. */
  public enum Verdict {
    COUNT(null, null),
    RATE_LIMITED(DropReason.RATE_LIMITED, null),
    CLIENT_NEW_IDS(null, FoldReason.CLIENT_NEW_IDS),
    NETWORK_NEW_IDS(null, FoldReason.NETWORK_NEW_IDS),
    NAMESPACE_NEW_IDS(null, FoldReason.NAMESPACE_NEW_IDS);

    /** Why the beacon is not counted, or null. */
    public final DropReason dropped;
    /** Why it is counted under {@code (other)}, or null. */
    public final FoldReason folded;

    Verdict(DropReason dropped, FoldReason folded) {
      this.dropped = dropped;
      this.folded = folded;
    }
  }

  private final ClientTable<Record> clients;
  private final ClientTable<Record> networks;
  private final ClientTable<Record> pages;
  private final int clientsPerNetwork;
  private final int knownIdsPerNamespace;
  private final LongSupplier nanos;
  /** SipHash-2-4 under a key of this process: nobody outside it can make two ids (or two addresses) that hash alike. */
  private final SipHash idHash;
  /** Each namespace's number, known ids and budget of new ids, made at its first beacon (namespaces are configured). */
  private final Map<String, Space> spaces = new ConcurrentHashMap<>();
  private final AtomicInteger namespacesNumbered = new AtomicInteger();

  /**
   * {@code maxTrackedClients}: client records kept (networks a quarter of it, (client, page) pairs twice it);
   * {@code knownIdsPerNamespace}: the ids each public namespace remembers as existing.
   */
  public ClientLimits(int maxTrackedClients, int clientsPerNetwork, int knownIdsPerNamespace, LongSupplier nanos) {
    this.clients = new ClientTable<>(maxTrackedClients, Record::new, Record::clear, Record::holdsLimit);
    this.networks = new ClientTable<>(trackedNetworks(maxTrackedClients), Record::new, Record::clear, Record::holdsLimit);
    this.pages = new ClientTable<>(trackedPages(maxTrackedClients), Record::new, Record::clear, Record::holdsLimit);
    this.clientsPerNetwork = clientsPerNetwork;
    this.knownIdsPerNamespace = knownIdsPerNamespace;
    this.nanos = nanos;
    SecureRandom random = new SecureRandom();
    this.idHash = new SipHash(random.nextLong(), random.nextLong());
  }

  /** Network records kept at most: a quarter of the clients' (at least 100). */
  public static int trackedNetworks(int maxTrackedClients) {
    return Math.max(100, maxTrackedClients / 4);
  }

  /** (Client, page) records kept at most: twice the clients'. */
  public static int trackedPages(int maxTrackedClients) {
    return 2 * maxTrackedClients;
  }

  /**
   * What becomes of the beacon of {@code id} on {@code namespace} from {@code address} (the client's address as the
   * gateway sees it, {@code ClientAddress}): counted, folded under {@code (other)}, or dropped; a beacon counted under
   * its own id makes the id known.
   */
  public Verdict check(NamespaceOptions namespace, String address, String id) {
    int perMinute = namespace.getPerClientPerMinute();
    int perPage = namespace.getPerPagePerMinute();
    int idsPerHour = namespace.getIdsPerClientPerHour();
    int newIdsPerHour = namespace.getNewIdsPerHour();
    if (perMinute == 0 && perPage == 0 && idsPerHour == 0 && newIdsPerHour == 0) {
      return Verdict.COUNT;
    }
    long now = nanos.getAsLong();
    Space space = space(namespace.getName());
    long page = idHash.hash(id);
    byte[] literal = ClientNetworks.literal(address);
    int kind = literal == null ? TEXT : literal.length == 4 ? IPV4 : IPV6;
    long bits = switch (kind) {
      case IPV4 -> Ints.fromByteArray(literal) & 0xFFFF_FFFFL;
      case IPV6 -> Longs.fromByteArray(literal);
      default -> idHash.hash(address == null ? "" : address);
    };
    int levels = kind == TEXT ? 1 : kind == IPV4 ? 2 : 3;
    long scope = (long) space.number << 16 | kind << 8;
    boolean newClient = false;
    if (perMinute != 0) {
      int refused = takeDownward(Record.BEACONS, scope, kind, bits, levels, namespace.getPerClientBurst(),
        perMinute / MINUTE_NANOS, now);
      if (refused >= 0) {
        return Verdict.RATE_LIMITED;
      }
      newClient = refused == NEW_CLIENT;
    }
    // a client's first beacon (its record made now) fits any page's burst: its (client, page) record waits for the
    // second, so a crowd of new addresses makes one record each, not two; a client pushed out and back gets one view
    // of a page past that page's rate at most
    if (perPage != 0 && !newClient) {
      // the page's 64 bits with the namespace's and the kind's, beside the client's: one bucket per (client, page)
      long high = page + scope * 0x9E37_79B9_7F4A_7C15L;
      long low = prefix(kind, 0, bits);
      boolean taken;
      synchronized (pages.lockOf(high, low)) {
        taken = pages.recordOf(high, low, now).take(Record.BEACONS, namespace.getPerPageBurst(), perPage / MINUTE_NANOS,
          now);
      }
      if (!taken) {
        return Verdict.RATE_LIMITED;
      }
    }
    if (idsPerHour == 0 && newIdsPerHour == 0 || space.known.contains(page)) {
      return Verdict.COUNT;
    }
    if (newIdsPerHour != 0 && !space.newIds(newIdsPerHour, now)) {
      return Verdict.NAMESPACE_NEW_IDS;
    }
    if (idsPerHour != 0) {
      int refused = takeDownward(Record.IDS, scope, kind, bits, levels, idsPerHour, idsPerHour / HOUR_NANOS, now);
      if (refused >= 0) {
        if (newIdsPerHour != 0) {
          space.giveBackNewId(newIdsPerHour);
        }
        return refused == 0 ? Verdict.CLIENT_NEW_IDS : Verdict.NETWORK_NEW_IDS;
      }
    }
    space.known.add(page);
    return Verdict.COUNT;
  }

  /**
   * Makes known the ids {@code pages} gives, a page at a time: {@code pages.apply(after)} answers up to a page of the
   * namespace's ids after {@code after} in the table's order (null: from the first), an empty list at the end.
   * Completes with how many ids it took; stops early when the namespace's known ids are full.
   */
  public Future<Integer> load(String namespace, Function<String, Future<List<String>>> pages) {
    return load(space(namespace), pages, null, 0);
  }

  private Future<Integer> load(Space space, Function<String, Future<List<String>>> pages, String after, int taken) {
    return pages.apply(after).compose(ids -> {
      int added = taken;
      for (String id : ids) {
        if (!space.known.add(idHash.hash(id))) {
          return Future.succeededFuture(added);
        }
        added++;
      }
      return ids.isEmpty() ? Future.succeededFuture(added) : load(space, pages, ids.get(ids.size() - 1), added);
    });
  }

  /** Ids {@code namespace} knows now. */
  public int knownIds(String namespace) {
    return space(namespace).known.size();
  }

  /** Client, network and (client, page) records held now. */
  public long tracked() {
    return clients.size() + networks.size() + pages.size();
  }

  /**
   * Takes a token of {@code which} at each level of the client, the widest first, each level holding its share of
   * {@code capacity} and {@code perNano}; the level that refused (0: the client), after giving back the tokens the
   * wider ones took, or when every level gave one {@link #NEW_CLIENT} if the client's record was made by this check,
   * else -1.
   */
  private int takeDownward(int which, long scope, int kind, long bits, int levels, double capacity, double perNano,
                           long now) {
    boolean made = false;
    for (int level = levels - 1; level >= 0; level--) {
      ClientTable<Record> table = level == 0 ? clients : networks;
      long high = scope | level;
      long low = prefix(kind, level, bits);
      int share = ClientNetworks.share(level, levels, clientsPerNetwork);
      boolean taken;
      synchronized (table.lockOf(high, low)) {
        Record record = table.recordOf(high, low, now);
        made = record.isNew(which);
        taken = record.take(which, capacity * share, perNano * share, now);
      }
      if (!taken) {
        for (int wider = level + 1; wider < levels; wider++) {
          long wideHigh = scope | wider;
          long wideLow = prefix(kind, wider, bits);
          synchronized (networks.lockOf(wideHigh, wideLow)) {
            Record record = networks.find(wideHigh, wideLow);
            if (record != null) {
              record.giveBack(which, capacity * ClientNetworks.share(wider, levels, clientsPerNetwork));
            }
          }
        }
        return level;
      }
    }
    return made ? NEW_CLIENT : -1;
  }

  private Space space(String name) {
    Space space = spaces.get(name);
    return space != null ? space
      : spaces.computeIfAbsent(name, any -> new Space(namespacesNumbered.getAndIncrement(), knownIdsPerNamespace));
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

  /** One namespace: its number in the records' keys, the ids it knows, and its budget of new ids this hour. */
  private static final class Space {
    final int number;
    final KnownIds known;
    private double newIdTokens = -1;
    private long newIdNanos;

    Space(int number, int knownIds) {
      this.number = number;
      this.known = new KnownIds(knownIds);
    }

    /** Takes one of the namespace's new ids ({@code perHour} an hour, at most {@code perHour} at once); false if none. */
    synchronized boolean newIds(int perHour, long now) {
      if (newIdTokens < 0) {
        newIdTokens = perHour;
        newIdNanos = now;
      }
      newIdTokens = Math.min(perHour, newIdTokens + (now - newIdNanos) * (perHour / HOUR_NANOS));
      newIdNanos = now;
      if (newIdTokens < 1) {
        return false;
      }
      newIdTokens--;
      return true;
    }

    synchronized void giveBackNewId(int perHour) {
      newIdTokens = Math.min(perHour, newIdTokens + 1);
    }
  }

  /**
   * One client's, network's or (client, page)'s record: two token buckets, for beacons and for new ids, each full
   * until first used, and the time until which one of them is less than half full (it holds a limit: its table pushes
   * it out last). Used under its table's lock; a record pushed out is cleared and reused, never reallocated.
   */
  static final class Record {
    static final int BEACONS = 0;
    static final int IDS = 1;
    private boolean beaconsUsed;
    private double beaconTokens;
    private long beaconNanos;
    private boolean idsUsed;
    private double idTokens;
    private long idNanos;
    private boolean held;
    private long heldUntil;

    void clear() {
      beaconsUsed = false;
      idsUsed = false;
      held = false;
    }

    /** Whether the bucket {@code which} was never used since the record was made or cleared. */
    boolean isNew(int which) {
      return which == BEACONS ? !beaconsUsed : !idsUsed;
    }

    boolean holdsLimit(long now) {
      return held && now - heldUntil < 0;
    }

    /**
     * Takes a token of {@code which}, the bucket holding {@code capacity} and refilled at {@code perNano}; false when
     * it has none (nothing taken).
     */
    boolean take(int which, double capacity, double perNano, long now) {
      boolean beacons = which == BEACONS;
      double tokens;
      if (beacons ? !beaconsUsed : !idsUsed) {
        tokens = capacity;
      } else {
        long last = beacons ? beaconNanos : idNanos;
        tokens = Math.min(capacity, (beacons ? beaconTokens : idTokens) + Math.max(0, now - last) * perNano);
      }
      boolean taken = tokens >= 1;
      if (taken) {
        tokens--;
      }
      if (tokens < capacity / 2) {
        long refilled = now + (long) ((capacity / 2 - tokens) / perNano);
        if (!held || refilled - heldUntil > 0) {
          heldUntil = refilled;
          held = true;
        }
      }
      if (beacons) {
        beaconsUsed = true;
        beaconTokens = tokens;
        beaconNanos = now;
      } else {
        idsUsed = true;
        idTokens = tokens;
        idNanos = now;
      }
      return taken;
    }

    /** Gives back a token of {@code which} taken by this check, which a narrower scope then refused. */
    void giveBack(int which, double capacity) {
      if (which == BEACONS) {
        beaconTokens = Math.min(capacity, beaconTokens + 1);
      } else {
        idTokens = Math.min(capacity, idTokens + 1);
      }
    }
  }
}
