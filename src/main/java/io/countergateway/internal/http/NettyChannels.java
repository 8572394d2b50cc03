package io.countergateway.internal.http;

import io.netty.channel.Channel;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * The Netty channel under a Vert.x HTTP connection, for the two things Vert.x's public API does not offer: closing
 * only the output (a lingering close) and seeing how many answer bytes wait for a slow reader. Vert.x 5 exposes the
 * channel on its connection base class only, which every HTTP connection extends; null if that ever changes, and the
 * callers then do without.
 */
final class NettyChannels {
  private NettyChannels() {
  }

  static Channel of(HttpConnection connection) {
    return connection instanceof ConnectionBase base ? base.channel() : null;
  }
}
