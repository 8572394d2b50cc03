package io.countergateway.internal.beacon;

import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.beacon.ClientLimits.Verdict;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** The beacon limits on virtual time: each check happens at {@link #nanos}, which a test moves. */
@DisplayName("Beacon limits: flood ceilings, inflation and budgets of new ids")
class ClientLimitsTest {
  private static final long SECOND = 1_000_000_000L;
  private static final long HOUR = 3_600 * SECOND;
  private final AtomicLong nanos = new AtomicLong(-5 * HOUR);

  private ClientLimits limits(int maxTrackedClients, int clientsPerNetwork) {
    return new ClientLimits(maxTrackedClients, clientsPerNetwork, 100_000, nanos::get);
  }

  /** A public namespace with the default limits but those {@code beacon} sets. */
  private static NamespaceOptions namespace(JsonObject beacon) {
    return NamespaceOptions.fromJson("pages", new JsonObject().put("public", true).put("beacon", beacon));
  }

  /** Only a flood ceiling of {@code perMinute}, {@code burst}. */
  private static NamespaceOptions floodOnly(int perMinute, int burst) {
    return namespace(new JsonObject().put("perClientPerMinute", perMinute).put("perClientBurst", burst)
      .put("perPagePerMinute", 0).put("idsPerClientPerHour", 0).put("newIdsPerHour", 0));
  }

  /** Only budgets of new ids: {@code perClient} a client, {@code perNamespace} the namespace, an hour. */
  private static NamespaceOptions idsOnly(int perClient, int perNamespace) {
    return namespace(new JsonObject().put("perClientPerMinute", 0).put("perPagePerMinute", 0)
      .put("idsPerClientPerHour", perClient).put("newIdsPerHour", perNamespace));
  }

  /** How many of {@code beacons} beacons, the i-th of {@code id.apply(i)} from {@code address.apply(i)}, are counted. */
  private static long counted(ClientLimits limits, NamespaceOptions namespace, int beacons, IntFunction<String> address,
                              IntFunction<String> id) {
    return IntStream.range(0, beacons).filter(i -> limits.check(namespace, address.apply(i), id.apply(i)) == Verdict.COUNT)
      .count();
  }

  @Test
  @DisplayName("a client gets its flood burst at once, then the per-minute rate; another client is not affected")
  void floodCeilingPerClient() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = floodOnly(60, 10);
    assertThat(counted(limits, pages, 100, i -> "198.51.100.7", i -> "/p" + i)).isEqualTo(10);
    assertThat(limits.check(pages, "198.51.100.8", "/p")).isEqualTo(Verdict.COUNT);
    nanos.addAndGet(5 * SECOND); // 5 s at one a second
    assertThat(counted(limits, pages, 100, i -> "198.51.100.7", i -> "/p" + i)).isEqualTo(5);
    assertThat(limits.check(pages, "198.51.100.7", "/p")).isEqualTo(Verdict.RATE_LIMITED);
  }

  @Test
  @DisplayName("30 people behind one address viewing 300 pages at 40 views a second for 20 s, defaults: every view counted")
  void manyPeopleBehindOneAddress() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = namespace(new JsonObject());
    int counted = 0;
    for (int view = 0; view < 800; view++) {
      nanos.addAndGet(SECOND / 40);
      if (limits.check(pages, "203.0.113.9", "/page-" + (view * 7 % 300)) == Verdict.COUNT) {
        counted++;
      }
    }
    assertThat(counted).isEqualTo(800);
  }

  @Test
  @DisplayName("one client repeating one page 100 times a second for 20 s inflates it by the page burst and rate only")
  void repeatingOnePage() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = namespace(new JsonObject());
    int counted = 0;
    for (int view = 0; view < 2_000; view++) {
      nanos.addAndGet(SECOND / 100);
      if (limits.check(pages, "192.0.2.77", "/hammered") == Verdict.COUNT) {
        counted++;
      }
    }
    // defaults: a burst of 30, then 60 a minute (one a second)
    assertThat(counted).isBetween(30 + 19, 30 + 20);
    assertThat(limits.check(pages, "192.0.2.77", "/another")).as("its other pages").isEqualTo(Verdict.COUNT);
    assertThat(limits.check(pages, "192.0.2.78", "/hammered")).as("the page, from its neighbour").isEqualTo(Verdict.COUNT);
  }

  @Test
  @DisplayName("past a client's budget new ids fold under (other); ids it brought and ids that exist still count")
  void clientBudgetFolds() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = idsOnly(300, 0);
    await(limits.load("pages", after -> Future.succeededFuture(after == null ? List.of("/existing") : List.of())));
    assertThat(counted(limits, pages, 5_000, i -> "198.51.100.7", i -> "/random-" + i)).isEqualTo(300);
    assertThat(limits.check(pages, "198.51.100.7", "/random-0")).as("an id it brought").isEqualTo(Verdict.COUNT);
    assertThat(limits.check(pages, "198.51.100.7", "/existing")).as("an id of the table").isEqualTo(Verdict.COUNT);
    assertThat(limits.check(pages, "198.51.100.7", "/fresh")).isEqualTo(Verdict.CLIENT_NEW_IDS);
    nanos.addAndGet(HOUR);
    assertThat(counted(limits, pages, 100, i -> "198.51.100.7", i -> "/fresh-" + i)).as("an hour on").isEqualTo(100);
  }

  @Test
  @DisplayName("ids made to share a String.hashCode count as the distinct ids they are: the budget holds")
  void collidingIdsAreBudgeted() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = idsOnly(300, 0);
    // "Aa" and "BB" share a String.hashCode, so every string of ten such blocks has one and the same hash
    List<String> colliding = new ArrayList<>();
    for (int bits = 0; bits < 700; bits++) {
      StringBuilder id = new StringBuilder("p-");
      for (int block = 0; block < 10; block++) {
        id.append((bits >> block & 1) == 0 ? "Aa" : "BB");
      }
      colliding.add(id.toString());
    }
    assertThat(colliding.stream().mapToInt(String::hashCode).distinct().count()).as("one String.hashCode").isEqualTo(1);
    assertThat(colliding.stream().filter(id -> limits.check(pages, "198.51.100.7", id) == Verdict.COUNT).count())
      .isEqualTo(300);
  }

  @Test
  @DisplayName("16 addresses of a /24 burning ids spend the /24's budget: neighbours' views of existing pages count, "
    + "their new ids fold")
  void networkBudgetFoldsNeverDrops() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = namespace(new JsonObject());
    assertThat(counted(limits, pages, 20, i -> "198.51.100.200", i -> "/existing-" + i)).isEqualTo(20);
    int junk = 0;
    for (int i = 0; i < 6_000; i++) {
      nanos.addAndGet(SECOND / 300);
      Verdict verdict = limits.check(pages, "198.51.100." + (i % 16), "/junk-" + i);
      assertThat(verdict.dropped).isNull();
      if (verdict == Verdict.COUNT) {
        junk++;
      }
    }
    assertThat(junk).as("new ids the /24 added: 16 clients' worth and 20 s of refill").isBetween(16 * 300 - 20, 16 * 300 + 30);
    for (int neighbour = 100; neighbour < 110; neighbour++) {
      String address = "198.51.100." + neighbour;
      assertThat(counted(limits, pages, 20, i -> address, i -> "/existing-" + i)).as("views of existing pages")
        .isEqualTo(20);
      assertThat(limits.check(pages, address, "/new-" + neighbour)).isEqualTo(Verdict.NETWORK_NEW_IDS);
    }
    assertThat(limits.check(pages, "198.51.101.1", "/new-elsewhere")).as("another /24").isEqualTo(Verdict.COUNT);
  }

  @Test
  @DisplayName("the namespace's budget of new ids bounds the table's growth an hour, whatever the networks")
  void namespaceBudget() {
    ClientLimits limits = limits(10_000, 16);
    NamespaceOptions pages = idsOnly(300, 1_000);
    assertThat(counted(limits, pages, 3_000, i -> "10." + (i % 200) + ".0.1", i -> "/n-" + i)).isEqualTo(1_000);
    assertThat(limits.check(pages, "10.250.0.1", "/n-0")).as("an id it took").isEqualTo(Verdict.COUNT);
    assertThat(limits.check(pages, "10.250.0.1", "/later")).isEqualTo(Verdict.NAMESPACE_NEW_IDS);
    nanos.addAndGet(HOUR / 10 + SECOND);
    assertThat(counted(limits, pages, 1_000, i -> "10.251." + (i % 200) + ".1", i -> "/m-" + i)).as("a tenth of an hour")
      .isEqualTo(100);
  }

  @Test
  @DisplayName("a client refused by its own ceiling gives its network's tokens back: one flooder cannot spend its /24's")
  void refusedClientsChargeNoNetwork() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = floodOnly(60, 10);
    assertThat(counted(limits, pages, 1_000, i -> "198.51.100.7", i -> "/p")).isEqualTo(10);
    assertThat(counted(limits, pages, 150, i -> "198.51.100." + (100 + i / 10), i -> "/p")).as("15 neighbours' bursts")
      .isEqualTo(150);
    assertThat(limits.check(pages, "198.51.100.250", "/p")).as("the /24's burst spent").isEqualTo(Verdict.RATE_LIMITED);
  }

  @Test
  @DisplayName("700 beacons from 700 /64s of one /48 count within the /48's flood ceiling, 16 clients' worth")
  void networksShareOneCeiling() {
    ClientLimits limits = limits(20_000, 16);
    NamespaceOptions pages = floodOnly(600, 120);
    long counted = counted(limits, pages, 3_000, i -> "2001:db8:7:" + Integer.toHexString(i) + "::1", i -> "/p");
    assertThat(counted).as("the /48's burst").isEqualTo(16 * 120);
    assertThat(limits.check(pages, "2001:db8:8::1", "/p")).as("another /48").isEqualTo(Verdict.COUNT);
    assertThat(counted(limits, pages, 3_000, i -> "203.0.113." + (i % 256), i -> "/p")).as("the 256 addresses of a /24")
      .isEqualTo(16 * 120);
  }

  @Test
  @DisplayName("a /48 flood of refused beacons resets no other client's budget: capped records are pushed out last")
  void floodResetsNothing() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = namespace(new JsonObject());
    assertThat(counted(limits, pages, 400, i -> "192.0.2.1", i -> "/own-" + i)).isEqualTo(300);
    for (int i = 0; i < 30_000; i++) {
      limits.check(pages, "2001:db8:66:" + Integer.toHexString(i) + "::1", "/flood-" + i);
    }
    nanos.addAndGet(61 * SECOND);
    assertThat(counted(limits, pages, 300, i -> "192.0.2.1", i -> "/after-" + i)).as("a minute's refill only")
      .isEqualTo(5);
    assertThat(limits.tracked()).as("records held").isLessThanOrEqualTo(1_000 + ClientLimits.trackedNetworks(1_000)
      + ClientLimits.trackedPages(1_000));
  }

  @Test
  @DisplayName("a capped /24 stays capped while 1,500 other networks visit")
  void cappedNetworkIsRemembered() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = namespace(new JsonObject());
    long burned = counted(limits, pages, 6_000, i -> "198.51.100." + (i % 16), i -> "/junk-" + i);
    assertThat(burned).isEqualTo(16 * 300);
    for (int network = 0; network < 1_500; network++) {
      for (int visit = 0; visit < 3; visit++) {
        limits.check(pages, "10." + (network >> 8) + "." + (network & 255) + "." + visit, "/visit-" + network + "-" + visit);
      }
    }
    assertThat(counted(limits, pages, 100, i -> "198.51.100." + (100 + i), i -> "/more-" + i)).as("new ids of the /24")
      .isZero();
  }

  @Test
  @DisplayName("a crowd of new addresses viewing one page once each makes a client and a network record each, no page's")
  void firstViewsMakeNoPageRecord() {
    ClientLimits limits = limits(100_000, 16);
    NamespaceOptions pages = namespace(new JsonObject());
    assertThat(counted(limits, pages, 1_000, i -> "10.0." + (i >> 8) + "." + (i & 255), i -> "/home")).isEqualTo(1_000);
    assertThat(limits.tracked()).as("1,000 clients, 4 networks").isEqualTo(1_004);
  }

  @Test
  @DisplayName("a client has budgets in each namespace; an IPv4-mapped address is its IPv4 client")
  void keysByNamespaceAndAddress() {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = floodOnly(60, 10);
    NamespaceOptions likes = NamespaceOptions.fromJson("likes", new JsonObject().put("public", true)
      .put("beacon", new JsonObject().put("perClientPerMinute", 60).put("perClientBurst", 10)));
    assertThat(counted(limits, pages, 50, i -> i % 2 == 0 ? "198.51.100.7" : "::ffff:198.51.100.7", i -> "/p" + i))
      .as("one client, written two ways").isEqualTo(10);
    assertThat(counted(limits, likes, 50, i -> "198.51.100.7", i -> "/p" + i)).as("another namespace").isEqualTo(10);
  }

  @Test
  @DisplayName("a forwarded address that is no literal is a client of its own, of no network")
  void textAddresses() {
    ClientLimits limits = limits(1_000, 2);
    NamespaceOptions pages = floodOnly(60, 10);
    assertThat(counted(limits, pages, 500, i -> "unknown-" + (i % 20), i -> "/p")).as("20 clients' bursts").isEqualTo(200);
    assertThat(limits.check(pages, "unknown-3", "/p")).isEqualTo(Verdict.RATE_LIMITED);
    assertThat(limits.check(pages, null, "/p")).isEqualTo(Verdict.COUNT);
  }

  @Test
  @DisplayName("the known ids are read a page at a time and stop at their capacity")
  void knownIdsLoadInPages() {
    ClientLimits limits = new ClientLimits(1_000, 16, 2_500, nanos::get);
    AtomicInteger queries = new AtomicInteger();
    Integer taken = await(limits.load("pages", after -> {
      queries.incrementAndGet();
      int from = after == null ? 0 : Integer.parseInt(after.substring(1)) + 1;
      return Future.succeededFuture(IntStream.range(from, Math.min(from + 1_000, 4_000)).mapToObj(i -> "/" + i).toList());
    }));
    assertThat(taken).isEqualTo(2_500);
    assertThat(queries.get()).isEqualTo(3);
    assertThat(limits.knownIds("pages")).isEqualTo(2_500);
    NamespaceOptions pages = idsOnly(1, 0);
    assertThat(counted(limits, pages, 100, i -> "198.51.100.7", i -> "/" + i)).as("known ids").isEqualTo(100);
  }

  @Test
  @DisplayName("checks from several event loops at once, beside a crowd of new addresses, count a client's burst exactly")
  void concurrentChecks() throws Exception {
    ClientLimits limits = limits(1_000, 16);
    NamespaceOptions pages = floodOnly(60, 100);
    AtomicInteger counted = new AtomicInteger();
    List<Thread> loops = new ArrayList<>();
    for (int loop = 0; loop < 4; loop++) {
      int first = loop * 10_000;
      Thread thread = new Thread(() -> {
        for (int i = 0; i < 10_000; i++) {
          if (limits.check(pages, "198.51.100.7", "/p" + i) == Verdict.COUNT) {
            counted.incrementAndGet();
          }
          int crowd = first + i;
          limits.check(pages, "10." + (crowd >> 16 & 255) + "." + (crowd >> 8 & 255) + "." + (crowd & 255), "/p");
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

  private static <T> T await(Future<T> future) {
    assertThat(future.succeeded()).as("completed at once").isTrue();
    return future.result();
  }
}
