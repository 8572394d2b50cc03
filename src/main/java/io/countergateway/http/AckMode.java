package io.countergateway.http;

import io.countergateway.model.ApiError;
import io.vertx.ext.web.RoutingContext;

import java.util.List;

/** When a write is answered: after its commit (200) or once the gateway holds it (202). */
enum AckMode {
  COMMIT, ACCEPTED;

  /** As written in answers, computed once. */
  final String label = name().toLowerCase(java.util.Locale.ROOT);

  static AckMode of(RoutingContext ctx) {
    if (ctx.request().query() == null) {
      return COMMIT; // the common case: no query string to decode
    }
    List<String> values = ctx.queryParam("ack");
    if (values.isEmpty()) {
      return COMMIT;
    }
    AckMode ack = values.size() == 1 ? named(values.get(0)) : null;
    if (ack == null) {
      throw ApiError.badRequest("invalid_ack", "ack", "ack must be 'commit' or 'accepted'");
    }
    return ack;
  }

  /**
   * The ack of a raw query string that holds nothing but it ({@code ack=commit}, {@code ack=accepted}), COMMIT when
   * there is no query; null for any other query, which needs decoding ({@link #of(RoutingContext)} does that).
   */
  static AckMode ofPlainQuery(String query) {
    if (query == null) {
      return COMMIT;
    }
    return query.startsWith("ack=") ? named(query.substring(4)) : null;
  }

  private static AckMode named(String label) {
    for (AckMode mode : values()) {
      if (mode.label.equals(label)) {
        return mode;
      }
    }
    return null;
  }
}
