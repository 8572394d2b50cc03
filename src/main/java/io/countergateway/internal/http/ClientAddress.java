package io.countergateway.internal.http;

import io.countergateway.config.TrustedProxies;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.SocketAddress;

/**
 * The address of the client behind a request. The TCP peer, unless the peer is one of {@code http.trustedProxies}:
 * then the right-most address of {@code X-Forwarded-For} that is not itself a trusted proxy, since every proxy on the
 * way appends the peer it saw and only the entries our own proxies appended can be believed (a client may send any
 * {@code X-Forwarded-For} it likes, and it ends up on the left).
 */
final class ClientAddress {
  private static final CharSequence X_FORWARDED_FOR = HttpHeaders.createOptimized("X-Forwarded-For");

  private ClientAddress() {
  }

  static String of(HttpServerRequest request, TrustedProxies trusted) {
    SocketAddress remote = request.remoteAddress();
    String peer = remote == null ? "" : remote.hostAddress();
    if (trusted.isEmpty() || !trusted.contains(peer)) {
      return peer;
    }
    String client = peer;
    // several headers are one list in order (RFC 9110 §5.3); later entries were appended nearer to us
    String[] hops = String.join(",", request.headers().getAll("X-Forwarded-For")).split(",");
    for (int i = hops.length - 1; i >= 0; i--) {
      String hop = hops[i].trim();
      if (!hop.isEmpty()) {
        client = hop;
        if (!trusted.contains(hop)) {
          return hop;
        }
      }
    }
    return client;
  }

  /**
   * Tells {@code peers} of a request that carries {@code X-Forwarded-For} from a peer that is not a trusted proxy (the
   * header is then ignored: see {@link #of}).
   */
  static void untrustedForwarder(HttpServerRequest request, TrustedProxies trusted, ForwardedPeers peers) {
    String forwarded = request.headers().get(X_FORWARDED_FOR);
    if (forwarded == null) {
      return;
    }
    SocketAddress remote = request.remoteAddress();
    String peer = remote == null ? "" : remote.hostAddress();
    if (trusted.isEmpty() || !trusted.contains(peer)) {
      peers.seen(peer, forwarded);
    }
  }
}
