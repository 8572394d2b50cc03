package io.countergateway.http;

import io.countergateway.config.LimitsOptions;
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
 * open connections, in total and per client address ({@code limits.maxConnections}, {@code maxConnectionsPerClient},
 * as nginx's {@code limit_conn}). Refusals are counted in {@code gateway_edge_refused_total{reason}}.
 */
final class EdgeLimits {
  /** Why the edge refused a connection or a request; the {@code reason} label. */
  enum Refusal {
    CONNECTIONS, CONNECTIONS_PER_CLIENT, BODY_BUDGET, BODY_TIMEOUT, HEADER_TIMEOUT;

    final String label = name().toLowerCase();
  }

  private final long maxBodyBytes;
  private final int maxConnections;
  private final int maxConnectionsPerClient;
  private final AtomicLong bodyBytes = new AtomicLong();
  private final AtomicInteger connections = new AtomicInteger();
  private final Map<String, Integer> connectionsByClient = new ConcurrentHashMap<>();
  private final Map<Refusal, Counter> refused = new EnumMap<>(Refusal.class);

  EdgeLimits(LimitsOptions limits, MeterRegistry registry) {
    this.maxBodyBytes = limits.getMaxBodyBytesInFlight();
    this.maxConnections = limits.getMaxConnections();
    this.maxConnectionsPerClient = limits.getMaxConnectionsPerClient();
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
   * Counts a new connection from {@code client} (a {@link ClientAddress#key}); null when it fits, else why it does
   * not (and nothing is counted). {@code exempt}: a trusted proxy, whose connections carry many clients.
   */
  Refusal open(String client, boolean exempt) {
    if (connections.incrementAndGet() > maxConnections) {
      connections.decrementAndGet();
      return refuse(Refusal.CONNECTIONS);
    }
    if (exempt) {
      return null;
    }
    int[] now = new int[1];
    connectionsByClient.compute(client, (key, count) -> {
      int next = count == null ? 1 : count + 1;
      now[0] = next;
      return next > maxConnectionsPerClient ? count : next;
    });
    if (now[0] > maxConnectionsPerClient) {
      connections.decrementAndGet();
      return refuse(Refusal.CONNECTIONS_PER_CLIENT);
    }
    return null;
  }

  /** A connection {@link #open} counted has closed. */
  void closed(String client, boolean exempt) {
    connections.decrementAndGet();
    if (!exempt) {
      connectionsByClient.computeIfPresent(client, (key, count) -> count <= 1 ? null : count - 1);
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
