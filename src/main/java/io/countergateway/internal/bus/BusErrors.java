package io.countergateway.internal.bus;

import io.countergateway.internal.model.ApiError;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

/** Carries {@link ApiError}s across the event bus: the failure code is the HTTP status, the message its JSON. */
public final class BusErrors {
  private BusErrors() {
  }

  public static void fail(Message<?> message, Throwable failure) {
    ApiError error = failure instanceof ApiError api ? api
      : new ApiError(500, "internal_error", String.valueOf(failure.getMessage()), null);
    message.fail(error.status(), error.toJson().encode());
  }

  public static ApiError toApiError(Throwable failure) {
    if (failure instanceof ApiError api) {
      return api;
    }
    if (failure instanceof ReplyException reply) {
      if (reply.failureType() == ReplyFailure.RECIPIENT_FAILURE) {
        try {
          return ApiError.fromJson(reply.failureCode(), new JsonObject(reply.getMessage()));
        } catch (DecodeException | NullPointerException e) {
          return new ApiError(500, "internal_error", String.valueOf(reply.getMessage()), null);
        }
      }
      if (reply.failureType() == ReplyFailure.TIMEOUT) {
        return new ApiError(504, "timeout", "the gateway did not answer in time", null);
      }
      return ApiError.unavailable("unavailable", "no gateway verticle is serving this request right now");
    }
    return new ApiError(500, "internal_error", String.valueOf(failure.getMessage()), null);
  }
}
