package io.countergateway.internal.beacon;

import io.countergateway.config.NamespaceOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Per-client beacon limits")
class ClientLimitsTest {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  private static NamespaceOptions namespace(int perMinute, int burst, int idsPerHour) {
    return NamespaceOptions.fromJson("pages", new JsonObject().put("public", true).put("beacon", new JsonObject()
      .put("perClientPerMinute", perMinute).put("perClientBurst", burst).put("idsPerClientPerHour", idsPerHour)));
  }

  /** How many of {@code beacons} beacons of one id, the i-th from {@code address.apply(i)}, sent at once, are counted. */
  private static long counted(ClientLimits limits, NamespaceOptions namespace, int beacons,
                              java.util.function.IntFunction<String> address) {
    return java.util.stream.IntStream.range(0, beacons)
      .filter(i -> limits.check(namespace, address.apply(i), "home") == null).count();
  }

  @Test
  @DisplayName("a client gets its burst at once, then the per-minute rate; another client is not affected")
  void tokenBucketPerClient() {
    ClientLimits limits = new ClientLimits(1_000, 16, nanos::get);
    NamespaceOptions pages = namespace(60, 10, 0);
    int counted = 0;
    for (int i = 0; i < 100; i++) {
      if (limits.check(pages, "198.51.100.7", "home") == null) {
        counted++;
      }
    }
    assertThat(counted).isEqualTo(10);
    assertThat(limits.check(pages, "198.51.100.8", "home")).isNull();
    nanos.addAndGet(5_000_000_000L); // 5 s at one a second
    counted = 0;
    for (int i = 0; i < 100; i++) {
      if (limits.check(pages, "198.51.100.7", "home") == null) {
        counted++;
      }
    }
    assertThat(counted).isEqualTo(5);
    assertThat(limits.check(pages, "198.51.100.7", "home")).isEqualTo(DropReason.RATE_LIMITED);
  }

  @Test
  @DisplayName("a client's distinct ids per hour are capped, ids it counted already still pass, and the hour resets it")
  void distinctIdsPerHour() {
    ClientLimits limits = new ClientLimits(1_000, 16, nanos::get);
    NamespaceOptions pages = namespace(0, 1, 300);
    int counted = 0;
    for (int i = 0; i < 5_000; i++) {
      if (limits.check(pages, "198.51.100.7", "random-" + i) == null) {
        counted++;
      }
    }
    assertThat(counted).isEqualTo(300);
    assertThat(limits.check(pages, "198.51.100.7", "random-0")).as("an id it counted").isNull();
    long refused = java.util.stream.IntStream.range(0, 100)
      .filter(i -> limits.check(pages, "198.51.100.7", "fresh-" + i) == DropReason.TOO_MANY_IDS).count();
    assertThat(refused).as("new ids past the cap").isEqualTo(100);
    nanos.addAndGet(3_600_000_000_000L);
    assertThat(java.util.stream.IntStream.range(0, 100)
      .filter(i -> limits.check(pages, "198.51.100.7", "fresh-" + i) == null).count()).as("a new hour").isEqualTo(100);
  }

  @Test
  @DisplayName("ids made to share a String.hashCode count as the distinct ids they are: the cap holds")
  void collidingIdsAreCapped() {
    ClientLimits limits = new ClientLimits(1_000, 16, nanos::get);
    NamespaceOptions pages = namespace(0, 1, 300);
    // "Aa" and "BB" share a String.hashCode, so every string of ten such blocks has one and the same hash
    java.util.List<String> colliding = new java.util.ArrayList<>();
    for (int bits = 0; bits < 700; bits++) {
      StringBuilder id = new StringBuilder("p-");
      for (int block = 0; block < 10; block++) {
        id.append((bits >> block & 1) == 0 ? "Aa" : "BB");
      }
      colliding.add(id.toString());
    }
    assertThat(colliding.stream().mapToInt(String::hashCode).distinct().count()).as("one String.hashCode").isEqualTo(1);
    long counted = colliding.stream().filter(id -> limits.check(pages, "198.51.100.7", id) == null).count();
    assertThat(counted).isEqualTo(300);
  }

  @Test
  @DisplayName("700 beacons from 700 different /64s of one /48 count as one network's budget, not 700 clients'")
  void networksShareOneBudget() {
    ClientLimits limits = new ClientLimits(20_000, 16, nanos::get);
    NamespaceOptions pages = namespace(600, 120, 300);
    int counted = 0;
    for (int i = 0; i < 700; i++) {
      // a new /64 (and a new id) each time, all in 2001:db8:7::/48
      if (limits.check(pages, "2001:db8:7:" + Integer.toHexString(i) + "::1", "page-" + i) == null) {
        counted++;
      }
    }
    // the /56s of the /48 get 4 clients' burst each (480); the /48 16 clients' (1,920): the 700 fit, and are counted
    // against the /48's 16 x 300 ids; then the /48's burst is what is left for more /64s
    assertThat(counted).isEqualTo(700);
    for (int i = 700; i < 3_000; i++) {
      if (limits.check(pages, "2001:db8:7:" + Integer.toHexString(i) + "::1", "page-" + (i % 50)) == null) {
        counted++;
      }
    }
    assertThat(counted).as("beacons of the /48 counted: its burst, 16 clients' worth").isEqualTo(16 * 120);
    assertThat(limits.check(pages, "2001:db8:8::1", "page-1")).as("another /48").isNull();

    int fromOneV4Network = 0;
    for (int i = 0; i < 3_000; i++) {
      if (limits.check(pages, "203.0.113." + (i % 256), "page-" + (i % 50)) == null) {
        fromOneV4Network++;
      }
    }
    assertThat(fromOneV4Network).as("the 256 addresses of one IPv4 /24").isEqualTo(16 * 120);
  }

  @Test
  @DisplayName("the distinct ids of a network's clients are capped at clientsPerNetwork clients' worth")
  void networkIdCap() {
    ClientLimits limits = new ClientLimits(20_000, 4, nanos::get);
    NamespaceOptions pages = namespace(0, 1, 10);
    long counted = java.util.stream.IntStream.range(0, 1_000)
      .filter(i -> limits.check(pages, "198.51.100." + (i % 200), "id-" + i) == null).count();
    assertThat(counted).isEqualTo(4 * 10);
  }

  @Test
  @DisplayName("the client records are an LRU of beacon.maxTrackedClients: a crowd of addresses cannot grow memory")
  void boundedMemory() {
    ClientLimits limits = new ClientLimits(1_000, 16, nanos::get);
    NamespaceOptions pages = namespace(600, 120, 300);
    for (int i = 0; i < 50_000; i++) {
      limits.check(pages, "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255), "home");
    }
    assertThat(limits.tracked()).isLessThanOrEqualTo(1_000 + ClientLimits.trackedNetworks(1_000, 16));
  }

  @Test
  @DisplayName("the token bucket a client gets at its second beacon counts the first: the burst holds over both")
  void firstBeaconCountsAgainstTheBurst() {
    ClientLimits limits = new ClientLimits(1_000, 16, nanos::get);
    NamespaceOptions pages = namespace(60, 10, 0);
    assertThat(limits.check(pages, "198.51.100.7", "home")).isNull();
    nanos.addAndGet(500_000_000L); // half a token back at one a second
    assertThat(counted(limits, pages, 100, i -> "198.51.100.7")).isEqualTo(9);
  }

  @Test
  @DisplayName("a client has a budget in each namespace; an IPv4-mapped address is its IPv4 client")
  void keysByNamespaceAndAddress() {
    ClientLimits limits = new ClientLimits(1_000, 16, nanos::get);
    NamespaceOptions pages = namespace(60, 10, 0);
    NamespaceOptions likes = NamespaceOptions.fromJson("likes", new JsonObject().put("public", true)
      .put("beacon", new JsonObject().put("perClientPerMinute", 60).put("perClientBurst", 10)));
    long pagesCounted = counted(limits, pages, 50, i -> i % 2 == 0 ? "198.51.100.7" : "::ffff:198.51.100.7");
    long likesCounted = counted(limits, likes, 50, i -> "198.51.100.7");
    assertThat(pagesCounted).as("one client, written two ways").isEqualTo(10);
    assertThat(likesCounted).as("the same client in another namespace").isEqualTo(10);
  }

  @Test
  @DisplayName("a forwarded address that is no literal is a client of its own, of no network")
  void textAddresses() {
    ClientLimits limits = new ClientLimits(1_000, 2, nanos::get);
    NamespaceOptions pages = namespace(60, 10, 0);
    long counted = counted(limits, pages, 500, i -> "unknown-" + (i % 20));
    assertThat(counted).as("20 clients' bursts, no network's cap").isEqualTo(20 * 10);
    assertThat(limits.check(pages, "unknown-3", "home")).isEqualTo(DropReason.RATE_LIMITED);
    assertThat(limits.check(pages, null, "home")).isNull();
  }

  @Test
  @DisplayName("a client pushed out by a crowd of new addresses starts afresh; the crowd never grows the records")
  void crowdPushesOut() {
    ClientLimits limits = new ClientLimits(1_000, 16, nanos::get);
    NamespaceOptions pages = namespace(60, 10, 300);
    long first = counted(limits, pages, 50, i -> "198.51.100.7");
    for (int i = 0; i < 20_000; i++) {
      limits.check(pages, "10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255), "home");
    }
    long again = counted(limits, pages, 50, i -> "198.51.100.7");
    assertThat(first).isEqualTo(10);
    assertThat(again).isEqualTo(10);
    assertThat(limits.tracked()).isLessThanOrEqualTo(1_000 + ClientLimits.trackedNetworks(1_000, 16));
  }

  @Test
  @DisplayName("checks from several event loops at once, beside a crowd of new addresses, count a client's burst exactly")
  void concurrentChecks() throws Exception {
    ClientLimits limits = new ClientLimits(1_000, 16, nanos::get);
    NamespaceOptions pages = namespace(60, 100, 300);
    java.util.concurrent.atomic.AtomicInteger counted = new java.util.concurrent.atomic.AtomicInteger();
    java.util.List<Thread> loops = new java.util.ArrayList<>();
    for (int loop = 0; loop < 4; loop++) {
      int first = loop * 10_000;
      Thread thread = new Thread(() -> {
        for (int i = 0; i < 10_000; i++) {
          if (limits.check(pages, "198.51.100.7", "home") == null) {
            counted.incrementAndGet();
          }
          int crowd = first + i;
          limits.check(pages, "10." + (crowd >> 16 & 255) + "." + (crowd >> 8 & 255) + "." + (crowd & 255), "home");
        }
      });
      thread.start();
      loops.add(thread);
    }
    for (Thread loop : loops) {
      loop.join();
    }
    assertThat(counted.get()).isEqualTo(100);
  }
}
