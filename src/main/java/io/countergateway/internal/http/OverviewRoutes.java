package io.countergateway.internal.http;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.WindowOptions;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.internal.beacon.BeaconOutcomes;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code GET /v1/namespaces}: what this gateway counts and how it is doing — the declared namespaces with their kind,
 * the increments each has taken since start (two answers apart give the live rate) and the sum of their deltas, what
 * became of a public namespace's beacons (counted, folded, dropped, by reason) and of its unique visitors, and the
 * state readiness is made of, with the peers that forward clients without being trusted proxies. Answered from memory: it costs the database nothing, so a dashboard may poll it.
 */
final class OverviewRoutes {
  private final GatewayConfig config;
  private final GatewayState state;
  private final MeterRegistry registry;
  private final BeaconOutcomes beacons;
  private final ForwardedPeers forwardedPeers;

  /** {@code registry}: where each verticle's journal reports its backlog (the same gauges /metrics shows). */
  OverviewRoutes(GatewayConfig config, GatewayState state, MeterRegistry registry, BeaconOutcomes beacons,
                 ForwardedPeers forwardedPeers) {
    this.config = config;
    this.state = state;
    this.registry = registry;
    this.beacons = beacons;
    this.forwardedPeers = forwardedPeers;
  }

  void namespaces(RoutingContext ctx) {
    JsonArray namespaces = new JsonArray();
    for (NamespaceOptions namespace : config.getNamespaces().values()) {
      if (namespace.isCompanion()) {
        continue; // named by its namespace's companions
      }
      WindowOptions window = namespace.getWindow();
      JsonObject companions = null;
      if (namespace.isWindowed()) {
        companions = new JsonObject();
        for (NamespaceOptions companion : namespace.companions()) {
          companions.put(companion.getName().substring(namespace.getName().length() + 1), companion.getName());
        }
      }
      namespaces.add(new JsonObject().put("name", namespace.getName()).put("public", namespace.isPublic())
        .put("unique", namespace.isUnique()).put("slots", namespace.getSlots())
        .put("window", window == null ? null : new JsonObject().put("bucket", window.getBucket().label())
          .put("retentionSeconds", window.getRetention().toSeconds()).put("maxRangeBuckets", window.getMaxRangeBuckets()))
        .put("companions", companions)
        .put("increments", state.taken().taken(namespace.getName()))
        .put("values", state.taken().values(namespace.getName()))
        .put("beacons", beacons.summary(namespace.getName())));
    }
    JsonObject gateway = new JsonObject().put("ready", state.isReady()).put("draining", state.isDraining())
      .put("failingWriters", state.failingWriters()).put("sheddingWriters", state.sheddingWriters())
      .put("journalBytes", (long) registry.find("gateway.journal.bytes").gauges().stream().mapToDouble(Gauge::value).sum())
      .put("journalOldestAgeSeconds", registry.find("gateway.journal.oldest.age").gauges().stream()
        .mapToDouble(Gauge::value).max().orElse(0))
      .put("untrustedForwarders", forwardedPeers.summary())
      .put("uniquesLeftOut", uniquesLeftOut());
    Responses.json(ctx, 200, new JsonObject().put("namespaces", namespaces).put("gateway", gateway));
  }

  /** Counted beacons left out of the unique-visitor sketches since start, by reason (reasons with a count). */
  private JsonObject uniquesLeftOut() {
    JsonObject reasons = new JsonObject();
    for (Counter counter : registry.find("gateway.uniques.dropped").counters()) {
      long count = (long) counter.count();
      if (count > 0) {
        reasons.put(counter.getId().getTag("reason"), reasons.getLong(counter.getId().getTag("reason"), 0L) + count);
      }
    }
    return reasons;
  }
}
