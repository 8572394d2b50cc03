package io.countergateway.internal.http;

import io.countergateway.config.LimitsOptions;
import io.countergateway.config.TrustedProxies;
import io.countergateway.internal.model.ClientNetworks;
import io.countergateway.internal.time.Timers;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundBuffer;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.SocketAddress;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

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
 * <p><b>Kept-alive connections</b> are closed only once idle well past what every HTTP/1.x answer announces:
 * {@code Keep-Alive: timeout=N} tells the client to stop reusing the connection after N seconds idle, N half the
 * shorter of {@code limits.headerTimeout} and {@code limits.idleTimeout} (whole seconds, at least 1), and the gateway
 * closes it no sooner than that deadline, nor than N + 2 s: a client may look at its connections' expiry only once a
 * second (Vert.x's pool does), and its request then takes a while to arrive. A client that honours the header never
 * sends a request on a connection the gateway is closing (the race that ends in "connection was closed" on a reused
 * connection).
 *
 * <p>The deadlines are checked by one timer per connection, every {@code limits.headerTimeout}: a look that finds a
 * request arrived since the last one or in progress marks the connection active; one that finds it quiet since the
 * mark for the deadline closes it. So a connection is closed between one deadline and one deadline plus two periods
 * after its last answer, never sooner. Confined to the verticle's event loop, where Vert.x calls both of its handlers.
 */
final class ConnectionGuard {
  private final Timers timers;
  private final EdgeLimits edge;
  private final TrustedProxies trusted;
  private final long headerTimeoutMs;
  /** Idle (no request in progress, none arrived) for this long, a connection that has served requests is closed. */
  private final long keptAliveNanos;
  /** What every HTTP/1.x answer says of it: {@code timeout=N}, N whole seconds well below the close. */
  private final String keepAlive;
  private final Map<HttpConnection, Watch> open = new IdentityHashMap<>();

  private static final class Watch {
    /** The levels the connection is counted under; null for a trusted proxy's until its first request. */
    String[] counted;
    final boolean proxied;
    long timer = -1;
    long requests;
    long requestsAtArm;
    boolean unsentAtArm;
    boolean busyAtArm;
    /** When a look last found the connection active (or when it opened): its last answer ended no later. */
    long activeAt;
    HttpServerRequest last;

    Watch(String[] counted, boolean proxied) {
      this.counted = counted;
      this.proxied = proxied;
    }
  }

  ConnectionGuard(Timers timers, EdgeLimits edge, TrustedProxies trusted, LimitsOptions limits) {
    this.timers = timers;
    this.edge = edge;
    this.trusted = trusted;
    this.headerTimeoutMs = limits.getHeaderTimeoutMs();
    int seconds = keepAliveSeconds(limits);
    this.keptAliveNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(shorterDeadlineMs(limits),
      TimeUnit.SECONDS.toMillis(seconds + 2)));
    this.keepAlive = keepAlive(limits);
  }

  /** The value of the {@code Keep-Alive} header every HTTP/1.x answer carries. */
  static String keepAlive(LimitsOptions limits) {
    return "timeout=" + keepAliveSeconds(limits);
  }

  /**
   * The {@code Keep-Alive: timeout} announced: half the shorter of {@code limits.headerTimeout} and
   * {@code limits.idleTimeout}, whole seconds, at least 1 (with either under 3 s, a used connection is still kept
   * 3 s idle, though Vert.x itself closes one silent for {@code limits.idleTimeout}).
   */
  static int keepAliveSeconds(LimitsOptions limits) {
    return (int) Math.max(1, shorterDeadlineMs(limits) / 2_000);
  }

  private static long shorterDeadlineMs(LimitsOptions limits) {
    return Math.min(limits.getHeaderTimeoutMs(), TimeUnit.SECONDS.toMillis(limits.getIdleTimeoutSeconds()));
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
    watch.activeAt = timers.nanoTime();
    open.put(connection, watch);
    connection.closeHandler(closed -> {
      Watch gone = open.remove(connection);
      if (gone != null) {
        timers.cancel(gone.timer);
        edge.closed(gone.counted);
      }
    });
    arm(connection, watch);
  }

  private void arm(HttpConnection connection, Watch watch) {
    watch.requestsAtArm = watch.requests;
    watch.unsentAtArm = unsent(connection);
    watch.busyAtArm = busy(watch);
    watch.timer = timers.schedule(headerTimeoutMs, () -> {
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
      long now = timers.nanoTime();
      // a request that arrived since the last look, or one in progress then or now, may have ended just before now
      if (watch.requests != watch.requestsAtArm || watch.busyAtArm || busy(watch)) {
        watch.activeAt = now;
      } else if (watch.requests == 0 || now - watch.activeAt >= keptAliveNanos) {
        // no whole request headers within the deadline: the first's, or the next's past what Keep-Alive announced
        edge.refuse(EdgeLimits.Refusal.HEADER_TIMEOUT);
        watch.last = null;
        connection.close();
        return;
      }
      arm(connection, watch);
    });
  }

  /** Whether the connection's last request is still being answered. */
  private static boolean busy(Watch watch) {
    return watch.last != null && !watch.last.response().ended() && !watch.last.response().closed();
  }

  /** Whether answers wait in the connection's own buffer: the kernel's send buffer is full, the client not reading. */
  private static boolean unsent(HttpConnection connection) {
    Channel channel = NettyChannels.of(connection);
    ChannelOutboundBuffer buffer = channel == null ? null : channel.unsafe().outboundBuffer();
    return buffer != null && buffer.totalPendingWriteBytes() > 0;
  }

  /** {@code next} with each request noted as activity on its connection, and its answer announcing the keep-alive. */
  Handler<HttpServerRequest> watching(Handler<HttpServerRequest> next) {
    return request -> {
      if (request.version() != HttpVersion.HTTP_2) {
        // a connection-specific header, which HTTP/2 forbids
        request.response().putHeader(HttpHeaders.KEEP_ALIVE, keepAlive);
      }
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
