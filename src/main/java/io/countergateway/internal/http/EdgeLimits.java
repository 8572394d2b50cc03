package io.countergateway.internal.http;

import io.countergateway.config.LimitsOptions;
import io.countergateway.config.MemoryBounds;
import io.countergateway.internal.model.ClientNetworks;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the whole gateway admits at its edge, shared by every event loop (src/DESIGN.md §10): the request body bytes it
 * holds in memory at once ({@code limits.maxBodyBytesInFlight}, as Envoy's overload manager bounds buffers), and its
 * open connections, in total and per client ({@code limits.maxConnections}, {@code maxConnectionsPerClient}, as
 * nginx's {@code limit_conn}), per network ({@code limits.clientsPerNetwork} clients' worth for an IPv4 /24 or IPv6
 * /48, a quarter of it for a /56: {@link ClientNetworks}), and shared fairly: once half of {@code maxConnections} are
 * open, a network that holds {@link #FAIR_SHARE_DIVISOR 1/32} of them opens no more, so the second half is left to
 * the networks that hold little (it takes 17 such networks to fill it). Refusals are counted in
 * {@code gateway_edge_refused_total{reason}}.
 */
final class EdgeLimits {
  /** Why the edge refused a connection or a request; the {@code reason} label. */
  enum Refusal {
    CONNECTIONS, CONNECTIONS_PER_CLIENT, CONNECTIONS_PER_NETWORK, NETWORK_SHARE, BODY_BUDGET, BODY_TIMEOUT, HEADER_TIMEOUT,
    /** Answers a client left unread for a whole header deadline: a slow reader (ConnectionGuard). */
    SEND_TIMEOUT;

    final String label = name().toLowerCase();
  }

  /** Past half of maxConnections, a network holding maxConnections / this opens no more. */
  static final int FAIR_SHARE_DIVISOR = 32;

  private final long maxBodyBytes;
  private final int maxConnections;
  private final int maxConnectionsPerClient;
  private final int clientsPerNetwork;
  private final int fairShare;
  private final AtomicLong bodyBytes = new AtomicLong();
  private final AtomicInteger connections = new AtomicInteger();
  /** Open connections per client and per network key (ClientNetworks); a key at 0 is removed. */
  private final Map<String, Integer> connectionsByKey = new ConcurrentHashMap<>();
  private final Map<Refusal, Counter> refused = new EnumMap<>(Refusal.class);

  EdgeLimits(LimitsOptions limits, MemoryBounds bounds, MeterRegistry registry) {
    this.maxBodyBytes = bounds.maxBodyBytesInFlight();
    this.maxConnections = bounds.maxConnections();
    this.maxConnectionsPerClient = limits.getMaxConnectionsPerClient();
    this.clientsPerNetwork = limits.getClientsPerNetwork();
    this.fairShare = Math.max(1, maxConnections / FAIR_SHARE_DIVISOR);
    for (Refusal reason : Refusal.values()) {
      refused.put(reason, Counter.builder("gateway.edge.refused").tag("reason", reason.label)
        .description("connections closed at accept and requests refused before their body was taken, by reason")
        .register(registry));
    }
    Gauge.builder("gateway.edge.body.bytes", bodyBytes, AtomicLong::get)
      .description("request body bytes held in memory now (at most limits.maxBodyBytesInFlight)").register(registry);
    Gauge.builder("gateway.edge.connections", connections, AtomicInteger::get)
      .description("open client connections now (at most limits.maxConnections)").register(registry);
  }

  /** Takes {@code bytes} of the body budget; false (nothing taken) when they do not fit. */
  boolean reserveBody(long bytes) {
    if (bytes <= 0) {
      return true;
    }
    while (true) {
      long held = bodyBytes.get();
      if (held + bytes > maxBodyBytes) {
        return false;
      }
      if (bodyBytes.compareAndSet(held, held + bytes)) {
        return true;
      }
    }
  }

  void releaseBody(long bytes) {
    if (bytes > 0) {
      bodyBytes.addAndGet(-bytes);
    }
  }

  long bodyBytesHeld() {
    return bodyBytes.get();
  }

  /**
   * Counts a new connection from the client of {@code levels} ({@link ClientNetworks#of}); null when it fits, else why
   * it does not (and nothing is counted). {@code exempt}: a trusted proxy, counted in the total only; its connection is
   * counted against the client it forwards once that is known ({@link #attribute}).
   */
  Refusal open(String[] levels, boolean exempt) {
    int total = connections.incrementAndGet();
    if (total > maxConnections) {
      connections.decrementAndGet();
      return refuse(Refusal.CONNECTIONS);
    }
    if (exempt) {
      return null;
    }
    Refusal refused = countLevels(levels, total);
    if (refused != null) {
      connections.decrementAndGet();
    }
    return refused;
  }

  /**
   * Counts a trusted proxy's connection (already in the total) against the client its first request forwards, with
   * that client's and its networks' caps; null when it fits, else why not (nothing counted).
   */
  Refusal attribute(String[] levels) {
    return countLevels(levels, connections.get());
  }

  private Refusal countLevels(String[] levels, int total) {
    if (levels.length > 1 && total > maxConnections / 2
      && connectionsByKey.getOrDefault(levels[levels.length - 1], 0) >= fairShare) {
      return refuse(Refusal.NETWORK_SHARE);
    }
    for (int level = 0; level < levels.length; level++) {
      long cap = (long) maxConnectionsPerClient * ClientNetworks.share(level, levels.length, clientsPerNetwork);
      if (!take(levels[level], cap)) {
        for (int taken = 0; taken < level; taken++) {
          release(levels[taken]);
        }
        return refuse(level == 0 ? Refusal.CONNECTIONS_PER_CLIENT : Refusal.CONNECTIONS_PER_NETWORK);
      }
    }
    return null;
  }

  private boolean take(String key, long cap) {
    boolean[] taken = new boolean[1];
    connectionsByKey.compute(key, (k, count) -> {
      int held = count == null ? 0 : count;
      taken[0] = held < cap;
      return taken[0] ? held + 1 : count;
    });
    return taken[0];
  }

  private void release(String key) {
    connectionsByKey.computeIfPresent(key, (k, count) -> count <= 1 ? null : count - 1);
  }

  /** A connection {@link #open} counted has closed; {@code counted}: the levels it was counted under, null for none. */
  void closed(String[] counted) {
    connections.decrementAndGet();
    if (counted != null) {
      for (String key : counted) {
        release(key);
      }
    }
  }

  int connections() {
    return connections.get();
  }

  Refusal refuse(Refusal reason) {
    refused.get(reason).increment();
    return reason;
  }
}
