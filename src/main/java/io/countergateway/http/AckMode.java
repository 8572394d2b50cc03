package io.countergateway.http;

import io.countergateway.model.ApiError;
import io.vertx.ext.web.RoutingContext;

import java.util.List;

/** When a write is answered: after its commit (200) or once the gateway holds it (202). */
enum AckMode {
  COMMIT, ACCEPTED;

  /** As written in answers, computed once. */
  final String label = name().toLowerCase();

  static AckMode of(RoutingContext ctx) {
    if (ctx.request().query() == null) {
      return COMMIT; // the common case: no query string to decode
    }
    List<String> values = ctx.queryParam("ack");
    if (values.isEmpty()) {
      return COMMIT;
    }
    if (values.size() == 1) {
      switch (values.get(0)) {
        case "commit":
          return COMMIT;
        case "accepted":
          return ACCEPTED;
        default:
          break;
      }
    }
    throw ApiError.badRequest("invalid_ack", "ack", "ack must be 'commit' or 'accepted'");
  }
}
