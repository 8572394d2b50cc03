package io.countergateway.http;

import io.countergateway.config.TrustedProxies;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.SocketAddress;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * One ingest verticle's share of the connection limits (src/DESIGN.md §10): a new connection over
 * {@code limits.maxConnections} in total or {@code limits.maxConnectionsPerClient} from its address is closed at once,
 * before anything is read from it; and a connection with no request in progress must deliver whole request headers
 * within {@code limits.headerTimeoutMs} (nginx's {@code client_header_timeout}; it also ends kept-alive connections
 * that stay unused that long). A slow-headers client sending a byte a minute otherwise held its connection for hours.
 *
 * <p>The deadline is checked by one timer per connection: when it fires and no request arrived since it was set and
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
    final String client;
    final boolean exempt;
    long timer = -1;
    long requests;
    long requestsAtArm;
    HttpServerRequest last;

    Watch(String client, boolean exempt) {
      this.client = client;
      this.exempt = exempt;
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
    boolean exempt = trusted.contains(address);
    String client = ClientAddress.key(address);
    if (edge.open(client, exempt) != null) {
      connection.close();
      return;
    }
    Watch watch = new Watch(client, exempt);
    open.put(connection, watch);
    connection.closeHandler(closed -> {
      Watch gone = open.remove(connection);
      if (gone != null) {
        vertx.cancelTimer(gone.timer);
        edge.closed(gone.client, gone.exempt);
      }
    });
    arm(connection, watch);
  }

  private void arm(HttpConnection connection, Watch watch) {
    watch.requestsAtArm = watch.requests;
    watch.timer = vertx.setTimer(headerTimeoutMs, id -> {
      if (open.get(connection) != watch) {
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

  /** {@code next} with each request noted as activity on its connection. */
  Handler<HttpServerRequest> watching(Handler<HttpServerRequest> next) {
    return request -> {
      Watch watch = open.get(request.connection());
      if (watch != null) {
        watch.requests++;
        watch.last = request;
      }
      next.handle(request);
    };
  }

  /** Connections this verticle holds now. */
  int size() {
    return open.size();
  }
}
