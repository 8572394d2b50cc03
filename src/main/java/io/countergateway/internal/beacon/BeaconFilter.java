package io.countergateway.internal.beacon;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;


/**
 * Decides whether a valid beacon is counted, and under which id: privacy signals first ({@code DNT: 1},
 * {@code Sec-GPC: 1}, where the namespace honours them), then bots (where {@code dropBots} is on;
 * {@link UserAgentVerdicts}, decided on the event loop), then the client's limits ({@link ClientLimits}: its flood
 * ceiling and its repeats of one page drop; a new id past a budget of new ids is counted under {@code (other)}). Bots
 * before limits, so that a crawler never spends the id or rate budget of the visitor or the network it shares an
 * address with. A dropped beacon is answered like a counted one, so a bot learns nothing; every outcome is counted in
 * {@link BeaconOutcomes}. One per event loop; the client limits and the outcomes are the gateway's.
 */
public final class BeaconFilter {
  // header names hashed once, not per beacon
  private static final CharSequence DNT = HttpHeaders.createOptimized("DNT");
  private static final CharSequence SEC_GPC = HttpHeaders.createOptimized("Sec-GPC");
  private static final CharSequence USER_AGENT = HttpHeaders.createOptimized("User-Agent");

  private final UserAgentVerdicts userAgents;
  private final ClientLimits clients;
  private final BeaconOutcomes outcomes;

  public BeaconFilter(ClientLimits clients, BeaconOutcomes outcomes, GatewayConfig config) {
    this.userAgents = new UserAgentVerdicts(new CrawlerDetector(config.getBeacon().getBotPatterns()),
      config.getMemoryBounds().userAgentCacheBytes());
    this.clients = clients;
    this.outcomes = outcomes;
  }

  /**
   * What becomes of the beacon {@code increment} from {@code client} (the client's address as the gateway sees it,
   * {@code ClientAddress}); {@code folded}: why its id is already a reserved one, or null. A drop is already counted in
   * the outcomes; a beacon to be counted is counted there by {@link #counted} once the write path took it.
   */
  public BeaconVerdict check(NamespaceOptions namespace, MultiMap headers, String client, Increment increment,
                             FoldReason folded) {
    DropReason privacy = privacySignal(namespace, headers);
    if (privacy != null) {
      return drop(namespace, increment, privacy, client);
    }
    DropReason bot = namespace.isDropBots() ? userAgents.classify(headers.get(USER_AGENT)) : null;
    if (bot != null) {
      return drop(namespace, increment, bot, client);
    }
    ClientLimits.Verdict limited = clients.check(namespace, client, increment.key().id());
    if (limited.dropped != null) {
      return drop(namespace, increment, limited.dropped, client);
    }
    return limited.folded == null ? BeaconVerdict.counted(increment, folded)
      : BeaconVerdict.counted(other(increment), limited.folded);
  }

  /** A beacon the write path took: counted in the outcomes. */
  public void counted(NamespaceOptions namespace, BeaconVerdict verdict) {
    outcomes.counted(namespace, verdict.folded());
  }

  /** {@code increment} counted under its namespace's {@code (other)}: a new id past a budget of new ids. */
  private static Increment other(Increment increment) {
    CounterKey key = increment.key();
    return new Increment(new CounterKey(key.type(), ReservedIds.OTHER, key.bucket()), increment.delta());
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

  private BeaconVerdict drop(NamespaceOptions namespace, Increment increment, DropReason reason, String client) {
    outcomes.dropped(namespace, reason, client);
    return BeaconVerdict.dropped(increment, reason);
  }
}
