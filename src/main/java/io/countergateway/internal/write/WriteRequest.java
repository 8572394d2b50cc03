package io.countergateway.internal.write;

import io.countergateway.internal.model.Increment;

import java.util.List;

/**
 * What every door hands the write path: validated increments (one per counter for a batch) and how the caller wants
 * them answered. The doors build it from their wire format and render the {@link WriteAnswer}; they decide nothing.
 *
 * @param increments     distinct counters, already validated and summed per counter
 * @param ack            answer after the commit, or once held
 * @param idempotencyKey the request's key, or null: with a key the increments are written in one transaction with it
 * @param answerBody     with a key, the JSON body the first request is answered with, stored for repeats; else null
 * @param returnsValue   add-and-get: the answer carries the counter's value read after the commit (one increment only)
 */
public record WriteRequest(List<Increment> increments, AckMode ack, String idempotencyKey, String answerBody,
                           boolean returnsValue) {
  public WriteRequest {
    increments = List.copyOf(increments);
    if (returnsValue && (increments.size() != 1 || ack != AckMode.COMMIT)) {
      throw new IllegalArgumentException("add-and-get takes one increment, acknowledged after its commit");
    }
  }

  public static WriteRequest of(Increment increment, AckMode ack) {
    return new WriteRequest(List.of(increment), ack, null, null, false);
  }

  public static WriteRequest of(List<Increment> increments, AckMode ack) {
    return new WriteRequest(increments, ack, null, null, false);
  }

  /** This request under an idempotency key (null: unchanged), with the body its first answer carries. */
  public WriteRequest withIdempotencyKey(String key, String firstAnswerBody) {
    return key == null ? this : new WriteRequest(increments, ack, key, firstAnswerBody, returnsValue);
  }

  /** This request as add-and-get when {@code returnsValue}. */
  public WriteRequest returningValue(boolean returnsValue) {
    return returnsValue == this.returnsValue ? this
      : new WriteRequest(increments, ack, idempotencyKey, answerBody, returnsValue);
  }
}
