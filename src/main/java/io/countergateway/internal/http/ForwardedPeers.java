package io.countergateway.internal.http;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The peers that are not {@code http.trustedProxies} and yet forward {@code X-Forwarded-For}: a reverse proxy or a load
 * balancer the configuration does not name. Every visitor behind such a peer is one client to the beacon limits and
 * to unique visitors, which is what a site owner must be told: once a peer has forwarded
 * {@value #DISTINCT_CLIENTS_TO_WARN} distinct clients, one WARN names it and the key to set, and {@code GET
 * /v1/namespaces} lists it. Bounded: at most {@value #MAX_PEERS} peers, each remembering at most
 * {@value #DISTINCT_CLIENTS_TO_WARN} forwarded values (a client can send any header it likes; this only ever informs).
 * Shared by the gateway's event loops.
 */
final class ForwardedPeers {
  private static final Logger LOG = LoggerFactory.getLogger(ForwardedPeers.class);
  static final int DISTINCT_CLIENTS_TO_WARN = 20;
  static final int MAX_PEERS = 16;

  private final Map<String, Peer> peers = new ConcurrentHashMap<>();

  /** A beacon from {@code peer}, not a trusted proxy, that carried {@code forwardedFor} (null when none). */
  void seen(String peer, String forwardedFor) {
    if (forwardedFor == null || forwardedFor.isEmpty()) {
      return;
    }
    Peer record = peers.get(peer);
    if (record == null) {
      if (peers.size() >= MAX_PEERS) {
        return;
      }
      record = peers.computeIfAbsent(peer, Peer::new);
    }
    record.seen(forwardedFor);
  }

  /** {@code [{"peer", "requests", "forwardedClients"}]}: the peers that forwarded more than one client. */
  JsonArray summary() {
    JsonArray list = new JsonArray();
    peers.values().stream().filter(peer -> peer.distinct() > 1)
      .sorted((a, b) -> Long.compare(b.requests.sum(), a.requests.sum()))
      .forEach(peer -> list.add(new JsonObject().put("peer", peer.address).put("requests", peer.requests.sum())
        .put("forwardedClients", peer.distinct())));
    return list;
  }

  private static final class Peer {
    final String address;
    final LongAdder requests = new LongAdder();
    /** Hashes of the distinct forwarded values seen, up to the warning's threshold. */
    private final int[] clients = new int[DISTINCT_CLIENTS_TO_WARN];
    private volatile int distinct;

    Peer(String address) {
      this.address = address;
    }

    void seen(String forwardedFor) {
      requests.increment();
      if (distinct >= DISTINCT_CLIENTS_TO_WARN) {
        return;
      }
      synchronized (this) {
        int hash = forwardedFor.hashCode();
        for (int i = 0; i < distinct; i++) {
          if (clients[i] == hash) {
            return;
          }
        }
        if (distinct < DISTINCT_CLIENTS_TO_WARN) {
          clients[distinct++] = hash;
          if (distinct == DISTINCT_CLIENTS_TO_WARN) {
            LOG.warn("{} distinct clients arrive through {} with X-Forwarded-For, but {} is not in http.trustedProxies: "
                + "to the beacon limits and to unique visitors they are all one client. If it is your proxy or load "
                + "balancer, set http.trustedProxies: [{}]", DISTINCT_CLIENTS_TO_WARN, address, address, address);
          }
        }
      }
    }

    int distinct() {
      return distinct;
    }
  }
}
