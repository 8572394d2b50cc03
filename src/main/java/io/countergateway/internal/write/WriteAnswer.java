package io.countergateway.internal.write;

import io.countergateway.internal.model.ApiError;

/**
 * The one answer to a {@link WriteRequest}, whatever door it came through: a status, and either a refusal or a success.
 *
 * @param status     200 committed, 202 accepted, or the refusal's status
 * @param refusal    why nothing (or, with 504, maybe something) was counted; null on success
 * @param storedBody on a request with an idempotency key, the body to answer (the first request's on a replay); else
 *                   null and the door renders its own success body
 * @param replayed   a repeat of an earlier request with the same key: answered again, not counted again
 * @param value      add-and-get: the value read after the commit, null when that read failed
 */
public record WriteAnswer(int status, ApiError refusal, String storedBody, boolean replayed, Long value) {
  static final WriteAnswer COMMITTED = new WriteAnswer(200, null, null, false, null);
  static final WriteAnswer ACCEPTED = new WriteAnswer(202, null, null, false, null);

  static WriteAnswer refused(ApiError refusal) {
    return new WriteAnswer(refusal.status(), refusal, null, false, null);
  }

  public boolean isRefused() {
    return refusal != null;
  }

  WriteAnswer withValue(Long readValue) {
    return new WriteAnswer(status, refusal, storedBody, replayed, readValue);
  }
}
