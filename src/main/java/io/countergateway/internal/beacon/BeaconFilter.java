package io.countergateway.internal.beacon;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpHeaders;

import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/**
 * Decides whether a valid beacon is counted: privacy signals first ({@code DNT: 1}, {@code Sec-GPC: 1}, where the
 * namespace honours them), then the client's limits ({@link ClientLimits}: its rate and its distinct ids), then bots
 * (where {@code dropBots} is on; {@link UserAgentVerdicts} fails closed). A dropped beacon is answered like a counted
 * one, so a bot learns nothing, and is counted in {@code gateway_beacons_dropped_total{namespace,reason}}.
 * One per event loop; the client limits are the gateway's.
 */
public final class BeaconFilter {
  // header names hashed once, not per beacon
  private static final CharSequence DNT = HttpHeaders.createOptimized("DNT");
  private static final CharSequence SEC_GPC = HttpHeaders.createOptimized("Sec-GPC");
  private static final CharSequence USER_AGENT = HttpHeaders.createOptimized("User-Agent");

  private final UserAgentVerdicts userAgents;
  private final ClientLimits clients;
  private final Map<String, Map<DropReason, Counter>> dropped = new HashMap<>();

  /** {@code classifier}: the executor of the user agents the quick check cannot decide. */
  public BeaconFilter(WorkerExecutor classifier, ClientLimits clients, GatewayConfig config, MeterRegistry registry) {
    this.userAgents = new UserAgentVerdicts(classifier, new CrawlerDetector(config.getBeacon().getBotPatterns()),
      config.getMemoryBounds().userAgentCacheBytes());
    this.clients = clients;
    for (NamespaceOptions namespace : config.getNamespaces().values()) {
      if (!namespace.isPublic()) {
        continue;
      }
      // registered up front, so each series reads 0 before its first drop and alerts can be written against it
      Map<DropReason, Counter> counters = new EnumMap<>(DropReason.class);
      for (DropReason reason : DropReason.values()) {
        counters.put(reason, Counter.builder("gateway.beacons.dropped")
          .description("valid beacons answered but not counted: bots, headless browsers, Do-Not-Track, Global Privacy "
            + "Control, per-client limits, a saturated filter")
          .tags("namespace", namespace.getName(), "reason", reason.label).register(registry));
      }
      dropped.put(namespace.getName(), counters);
    }
  }

  /**
   * Null when the beacon of {@code id} from {@code client} (the client's address as the gateway sees it,
   * {@code ClientAddress}) is to be counted, else why not; the drop is already counted in the metric.
   */
  public Future<DropReason> check(NamespaceOptions namespace, MultiMap headers, String client, String id) {
    DropReason privacy = privacySignal(namespace, headers);
    if (privacy != null) {
      return Future.succeededFuture(count(namespace, privacy));
    }
    DropReason limited = clients.check(namespace, client, id);
    if (limited != null) {
      return Future.succeededFuture(count(namespace, limited));
    }
    if (!namespace.isDropBots()) {
      return Future.succeededFuture();
    }
    Future<DropReason> verdict = userAgents.classify(headers.get(USER_AGENT));
    if (verdict.succeeded()) {
      // the usual case, a verdict from the cache: no second future
      return verdict.result() == null ? verdict : Future.succeededFuture(count(namespace, verdict.result()));
    }
    return verdict.map(reason -> reason == null ? null : count(namespace, reason));
  }

  private static DropReason privacySignal(NamespaceOptions namespace, MultiMap headers) {
    if (namespace.isHonorDoNotTrack() && "1".equals(headers.get(DNT))) {
      return DropReason.DO_NOT_TRACK;
    }
    if (namespace.isHonorGlobalPrivacyControl() && "1".equals(headers.get(SEC_GPC))) {
      return DropReason.GLOBAL_PRIVACY_CONTROL;
    }
    return null;
  }

  private DropReason count(NamespaceOptions namespace, DropReason reason) {
    Map<DropReason, Counter> counters = dropped.get(namespace.getName());
    if (counters != null) {
      counters.get(reason).increment();
    }
    return reason;
  }
}
