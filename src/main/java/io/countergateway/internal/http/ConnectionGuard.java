package io.countergateway.internal.http;

import io.countergateway.config.TrustedProxies;
import io.countergateway.internal.model.ClientNetworks;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundBuffer;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.SocketAddress;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * One ingest verticle's share of the connection limits (src/DESIGN.md §10): a new connection over
 * {@code limits.maxConnections} in total, over its client's or network's cap ({@link EdgeLimits}) is closed at once,
 * before anything is read from it; a {@code http.trustedProxies} peer's connection is counted against the client its
 * first request forwards (closed if that client is over its caps), so trusting a proxy never lifts the caps of the
 * clients behind it. A connection with no request in progress must deliver whole request headers within
 * {@code limits.headerTimeout} (nginx's {@code client_header_timeout}; it also ends kept-alive connections that stay
 * unused that long): a slow-headers client sending a byte a minute otherwise held its connection for hours. And a
 * client must take its answers as promptly: answers left waiting in the connection's buffer (the kernel's send buffer
 * full: megabytes unread) at two checks a deadline apart end the connection, as a slow reader taking a kilobyte every
 * two seconds of a pipelined stream of answers otherwise held it for ever, and the answers' memory with it.
 *
 * <p>The deadlines are checked by one timer per connection: when it fires and no request arrived since it was set and
 * none is in progress, the connection is closed; so an idle connection is closed between one and two deadlines after
 * its last request. Confined to the verticle's event loop, where Vert.x calls both of its handlers.
 */
final class ConnectionGuard {
  private final Vertx vertx;
  private final EdgeLimits edge;
  private final TrustedProxies trusted;
  private final long headerTimeoutMs;
  private final Map<HttpConnection, Watch> open = new IdentityHashMap<>();

  private static final class Watch {
    /** The levels the connection is counted under; null for a trusted proxy's until its first request. */
    String[] counted;
    final boolean proxied;
    long timer = -1;
    long requests;
    long requestsAtArm;
    boolean unsentAtArm;
    HttpServerRequest last;

    Watch(String[] counted, boolean proxied) {
      this.counted = counted;
      this.proxied = proxied;
    }
  }

  ConnectionGuard(Vertx vertx, EdgeLimits edge, TrustedProxies trusted, long headerTimeoutMs) {
    this.vertx = vertx;
    this.edge = edge;
    this.trusted = trusted;
    this.headerTimeoutMs = headerTimeoutMs;
  }

  /** The server's connection handler. */
  void opened(HttpConnection connection) {
    SocketAddress remote = connection.remoteAddress();
    String address = remote == null || remote.hostAddress() == null ? "" : remote.hostAddress();
    boolean proxied = trusted.contains(address);
    String[] levels = ClientNetworks.of(address);
    if (edge.open(levels, proxied) != null) {
      connection.close();
      return;
    }
    Watch watch = new Watch(proxied ? null : levels, proxied);
    open.put(connection, watch);
    connection.closeHandler(closed -> {
      Watch gone = open.remove(connection);
      if (gone != null) {
        vertx.cancelTimer(gone.timer);
        edge.closed(gone.counted);
      }
    });
    arm(connection, watch);
  }

  private void arm(HttpConnection connection, Watch watch) {
    watch.requestsAtArm = watch.requests;
    watch.unsentAtArm = unsent(connection);
    watch.timer = vertx.setTimer(headerTimeoutMs, id -> {
      if (open.get(connection) != watch) {
        return;
      }
      if (watch.unsentAtArm && unsent(connection)) {
        edge.refuse(EdgeLimits.Refusal.SEND_TIMEOUT);
        watch.last = null;
        // at once, and with a reset (nginx's reset_timedout_connection): Vert.x's own close would wait for the answer
        // in progress, and a plain close would leave the megabytes in the kernel's buffers for the client to read first
        Channel channel = NettyChannels.of(connection);
        channel.config().setOption(ChannelOption.SO_LINGER, 0);
        channel.close();
        return;
      }
      boolean inProgress = watch.last != null && !watch.last.response().ended() && !watch.last.response().closed();
      if (watch.requests == watch.requestsAtArm && !inProgress) {
        edge.refuse(EdgeLimits.Refusal.HEADER_TIMEOUT);
        watch.last = null;
        connection.close();
        return;
      }
      arm(connection, watch);
    });
  }

  /** Whether answers wait in the connection's own buffer: the kernel's send buffer is full, the client not reading. */
  private static boolean unsent(HttpConnection connection) {
    Channel channel = NettyChannels.of(connection);
    ChannelOutboundBuffer buffer = channel == null ? null : channel.unsafe().outboundBuffer();
    return buffer != null && buffer.totalPendingWriteBytes() > 0;
  }

  /** {@code next} with each request noted as activity on its connection. */
  Handler<HttpServerRequest> watching(Handler<HttpServerRequest> next) {
    return request -> {
      Watch watch = open.get(request.connection());
      if (watch != null) {
        watch.requests++;
        watch.last = request;
        if (watch.proxied && watch.counted == null && !attribute(request, watch)) {
          return;
        }
      }
      next.handle(request);
    };
  }

  /** A trusted proxy's first request: its connection is the forwarded client's from now on, or closed if over caps. */
  private boolean attribute(HttpServerRequest request, Watch watch) {
    String[] levels = ClientNetworks.of(ClientAddress.of(request, trusted));
    if (edge.attribute(levels) != null) {
      watch.last = null;
      request.connection().close();
      return false;
    }
    watch.counted = levels;
    return true;
  }

  /** Connections this verticle holds now. */
  int size() {
    return open.size();
  }
}
