package io.countergateway.internal.beacon;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.json.JsonObject;

import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/**
 * What became of each public namespace's valid beacons since start: counted (under their own id, or folded under a
 * reserved one, {@link FoldReason}) or dropped ({@link DropReason}). Every beacon ends in exactly one of counted and
 * dropped; folded ones are a part of the counted. The figures are the metrics {@code gateway_beacons_counted_total},
 * {@code gateway_beacons_folded_total{reason}} and {@code gateway_beacons_dropped_total{reason}}, and the dashboard
 * reads them through {@code GET /v1/namespaces}. Shared by the gateway's event loops; registered up front, so each
 * series reads 0 before its first beacon and alerts can be written against it.
 */
public final class BeaconOutcomes {
  private final Map<String, Outcomes> byNamespace = new HashMap<>();

  public BeaconOutcomes(GatewayConfig config, MeterRegistry registry) {
    for (NamespaceOptions namespace : config.getNamespaces().values()) {
      if (namespace.isPublic()) {
        byNamespace.put(namespace.getName(), new Outcomes(namespace.getName(), registry));
      }
    }
  }

  /** A beacon counted; {@code folded}: why under a reserved id, null when under its own. */
  public void counted(NamespaceOptions namespace, FoldReason folded) {
    Outcomes outcomes = byNamespace.get(namespace.getName());
    if (outcomes != null) {
      outcomes.counted.increment();
      if (folded != null) {
        outcomes.folded.get(folded).increment();
      }
    }
  }

  /** A beacon from {@code client} (its address) answered but not counted, for {@code reason}. */
  public void dropped(NamespaceOptions namespace, DropReason reason, String client) {
    Outcomes outcomes = byNamespace.get(namespace.getName());
    if (outcomes != null) {
      outcomes.dropped.get(reason).increment();
      if (reason == DropReason.RATE_LIMITED) {
        outcomes.rateLimitedClients.add(client == null ? 0 : client.hashCode());
      }
    }
  }

  /**
   * {@code {"counted": n, "folded": {reason: n}, "dropped": {reason: n}}} of a public namespace, reasons with a count
   * only; null for a namespace that takes no anonymous beacons.
   */
  public JsonObject summary(String namespace) {
    Outcomes outcomes = byNamespace.get(namespace);
    if (outcomes == null) {
      return null;
    }
    JsonObject folded = new JsonObject();
    outcomes.folded.forEach((reason, counter) -> putCount(folded, reason.label, counter));
    JsonObject dropped = new JsonObject();
    outcomes.dropped.forEach((reason, counter) -> putCount(dropped, reason.label, counter));
    return new JsonObject().put("counted", (long) outcomes.counted.count()).put("folded", folded).put("dropped", dropped)
      .put("rateLimitedFromOneClient", outcomes.rateLimitedClients.top());
  }

  private static void putCount(JsonObject json, String label, Counter counter) {
    long count = (long) counter.count();
    if (count > 0) {
      json.put(label, count);
    }
  }

  private static final class Outcomes {
    final HeavyHitter rateLimitedClients = new HeavyHitter();
    final Counter counted;
    final Map<FoldReason, Counter> folded = new EnumMap<>(FoldReason.class);
    final Map<DropReason, Counter> dropped = new EnumMap<>(DropReason.class);

    Outcomes(String namespace, MeterRegistry registry) {
      counted = Counter.builder("gateway.beacons.counted")
        .description("valid beacons counted, under their own id or folded under a reserved one")
        .tags("namespace", namespace).register(registry);
      for (FoldReason reason : FoldReason.values()) {
        folded.put(reason, Counter.builder("gateway.beacons.folded")
          .description("beacons counted under a reserved id of their namespace ((other), (invalid)) instead of their own")
          .tags("namespace", namespace, "reason", reason.label).register(registry));
      }
      for (DropReason reason : DropReason.values()) {
        dropped.put(reason, Counter.builder("gateway.beacons.dropped")
          .description("valid beacons answered but not counted: bots, headless browsers, Do-Not-Track, Global Privacy "
            + "Control, a client repeating views past its rate")
          .tags("namespace", namespace, "reason", reason.label).register(registry));
      }
    }
  }

  /**
   * The one client that most of a namespace's {@code rate_limited} drops came from, by the Misra–Gries summary of
   * {@value #SLOTS} counters over hashes of addresses: a client with more than a {@value #SLOTS}th of the drops is held,
   * its count low by at most that share. What a site owner needs to tell a proxy or an office behind one address from
   * a crowd of clients; no address is kept, only its hash.
   */
  private static final class HeavyHitter {
    private static final int SLOTS = 8;
    private final int[] keys = new int[SLOTS];
    private final long[] counts = new long[SLOTS];

    synchronized void add(int key) {
      int free = -1;
      for (int i = 0; i < SLOTS; i++) {
        if (counts[i] > 0 && keys[i] == key) {
          counts[i]++;
          return;
        }
        if (counts[i] == 0 && free < 0) {
          free = i;
        }
      }
      if (free >= 0) {
        keys[free] = key;
        counts[free] = 1;
        return;
      }
      for (int i = 0; i < SLOTS; i++) {
        counts[i]--;
      }
    }

    /** The largest count held (a lower bound of the top client's drops), 0 when none. */
    synchronized long top() {
      long top = 0;
      for (long count : counts) {
        top = Math.max(top, count);
      }
      return top;
    }
  }
}
