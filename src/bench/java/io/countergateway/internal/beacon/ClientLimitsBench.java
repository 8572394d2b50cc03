package io.countergateway.internal.beacon;

import io.countergateway.config.NamespaceOptions;
import io.vertx.core.json.JsonObject;

import java.util.Locale;

/**
 * Nanoseconds per {@link ClientLimits#check}, on one thread, with the default limits of a public namespace: the cost
 * every beacon pays. Three loads: one client viewing its pages (the records found), beacons from 65,536 IPv4
 * networks (the edge throughput run's: a new client and network record nearly every time, pushing others out), and
 * IPv6 clients (three network levels). The pages are known (the table has them), so no budget of new ids is spent.
 * Run: {@code java -cp target/classes:target/test-classes:$(cat cp.txt) io.countergateway.internal.beacon.ClientLimitsBench}
 * (cp.txt from {@code mvn dependency:build-classpath -Dmdep.outputFile=cp.txt}).
 */
public final class ClientLimitsBench {
  private static final int PAGES = 1_024;
  private static final int ROUNDS = 5;
  private static final int CHECKS = 4_000_000;

  private ClientLimitsBench() {
  }

  public static void main(String[] args) {
    NamespaceOptions namespace = NamespaceOptions.fromJson("pages", new JsonObject().put("public", true));
    String[] pages = new String[PAGES];
    for (int i = 0; i < PAGES; i++) {
      pages[i] = "/docs/page-" + i;
    }
    String[] v4 = new String[65_536];
    for (int i = 0; i < v4.length; i++) {
      v4[i] = "10." + (i >> 8) + "." + (i & 255) + "." + (i * 7 & 255);
    }
    String[] v6 = new String[65_536];
    for (int i = 0; i < v6.length; i++) {
      v6[i] = "2001:db8:" + Integer.toHexString(i) + ":" + Integer.toHexString(i * 31 & 0xFFFF) + "::1";
    }
    long[] nanos = {0};
    // 71,000 clients: what the containers' 247 MiB heap gives (docs/operations.md "Sizing")
    ClientLimits limits = new ClientLimits(71_000, 16, 100_000, () -> nanos[0]);
    limits.load("pages", after -> io.vertx.core.Future.succeededFuture(after == null ? java.util.List.of(pages)
      : java.util.List.of()));
    for (int round = 0; round < ROUNDS; round++) {
      report(round, "one client, known pages", measure(limits, namespace, nanos, i -> "198.51.100.7", pages));
      report(round, "65,536 IPv4 networks", measure(limits, namespace, nanos, i -> v4[i & 0xFFFF], pages));
      report(round, "65,536 IPv6 /48s", measure(limits, namespace, nanos, i -> v6[i & 0xFFFF], pages));
    }
  }

  private static double measure(ClientLimits limits, NamespaceOptions namespace, long[] nanos,
                                java.util.function.IntFunction<String> address, String[] pages) {
    int counted = 0;
    long started = System.nanoTime();
    for (int i = 0; i < CHECKS; i++) {
      // 20 ms of virtual time a beacon: one client's 50 a second stay below its flood ceiling, and each page of it
      // comes back 20 s later, within its page rate
      nanos[0] += 20_000_000;
      if (limits.check(namespace, address.apply(i), pages[i * 13 & (PAGES - 1)]) == ClientLimits.Verdict.COUNT) {
        counted++;
      }
    }
    long elapsed = System.nanoTime() - started;
    if (counted < CHECKS / 2) {
      throw new IllegalStateException("only " + counted + " of " + CHECKS + " counted");
    }
    return (double) elapsed / CHECKS;
  }

  private static void report(int round, String load, double nanosPerCheck) {
    System.out.printf(Locale.ROOT, "round %d  %-26s %7.1f ns/check%n", round, load, nanosPerCheck);
  }
}
