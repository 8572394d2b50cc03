package io.countergateway.internal.http;

import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.write.AckMode;
import io.vertx.ext.web.RoutingContext;

import java.util.List;

/** The {@code ack} query parameter of the write routes: {@code commit} (the default) or {@code accepted}. */
final class AckQuery {
  private AckQuery() {
  }

  static AckMode of(RoutingContext ctx) {
    if (ctx.request().query() == null) {
      return AckMode.COMMIT; // the common case: no query string to decode
    }
    List<String> values = ctx.queryParam("ack");
    if (values.isEmpty()) {
      return AckMode.COMMIT;
    }
    AckMode ack = values.size() == 1 ? AckMode.named(values.get(0)) : null;
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
      return AckMode.COMMIT;
    }
    return query.startsWith("ack=") ? AckMode.named(query.substring(4)) : null;
  }
}
