package io.countergateway.internal.bus;

import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.model.IncrementBatch;
import io.countergateway.internal.model.IncrementRules;
import io.countergateway.internal.write.AckMode;
import io.countergateway.internal.write.IdempotentIncrements;
import io.countergateway.internal.write.WriteAnswer;
import io.countergateway.internal.write.WritePath;
import io.countergateway.internal.write.WriteRequest;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * The event-bus door of {@link Addresses#INCREMENT}: a JSON object is one increment, a JSON array a batch; a
 * {@code request} is answered after the commit (or, with {@link Addresses#ACK} {@code accepted}, once taken), a
 * {@code send} is taken as accepted and gets no reply. It turns the
 * message into a {@link WriteRequest} and the {@link WriteAnswer} into a reply — the answer the HTTP routes give the
 * same request, a refusal as the failure code (the HTTP status) with the JSON error ({@link BusErrors}).
 */
public final class IncrementConsumer implements Handler<Message<Object>> {
  private static final Logger LOG = LoggerFactory.getLogger(IncrementConsumer.class);
  private static final String COMMITTED = new JsonObject().put("committed", true).encode();
  private static final String ACCEPTED = new JsonObject().put("accepted", true).encode();

  private final WritePath writes;
  private final IncrementRules rules;
  private final int maxBatchIncrements;

  public IncrementConsumer(WritePath writes, IncrementRules rules, int maxBatchIncrements) {
    this.writes = writes;
    this.rules = rules;
    this.maxBatchIncrements = maxBatchIncrements;
  }

  @Override
  public void handle(Message<Object> message) {
    if (!message.isSend()) {
      // a publish reaches every ingest verticle and would be counted once per verticle
      LOG.warn("ignored an increment published to {}: use send or request", Addresses.INCREMENT);
      return;
    }
    boolean answered = message.replyAddress() != null;
    AckMode ack = answered && !AckMode.ACCEPTED.label.equals(message.headers().get(Addresses.ACK))
      ? AckMode.COMMIT : AckMode.ACCEPTED;
    if (answered && Addresses.ANSWER_EACH.equals(message.headers().get(Addresses.ANSWER)) && message.body() instanceof JsonArray items
      && !items.isEmpty() && items.size() <= maxBatchIncrements) {
      answerEach(message, items, ack);
      return;
    }
    WriteRequest request;
    try {
      request = request(message.body(), ack)
        .withIdempotencyKey(IdempotentIncrements.key(message.headers().get(Addresses.IDEMPOTENCY_KEY),
          Addresses.IDEMPOTENCY_KEY), COMMITTED);
    } catch (ApiError e) {
      if (answered) {
        BusErrors.fail(message, e);
      }
      return;
    }
    writes.submit(request).onSuccess(answer -> {
      if (answered) {
        reply(message, request, answer);
      }
    });
  }

  private WriteRequest request(Object body, AckMode ack) {
    if (body instanceof JsonArray items) {
      return WriteRequest.of(IncrementBatch.of(items.stream().toList(), rules, maxBatchIncrements).perCounter(), ack);
    }
    if (body instanceof JsonObject json) {
      JsonObject fields = json;
      boolean returnsValue = false;
      if (json.containsKey("return")) {
        // a send gets no reply, so its "return" is checked but asks for nothing
        returnsValue = rules.returnsValue(json.getValue("return"), true) && ack == AckMode.COMMIT;
        fields = json.copy();
        fields.remove("return");
      }
      Increment increment = rules.increment(fields, "");
      return WriteRequest.of(increment, ack).returningValue(returnsValue);
    }
    throw ApiError.badRequest("invalid_request", "body", "the body must be {\"type\",\"id\",\"delta\"} or an array of them");
  }

  /**
   * A batch whose increments are each taken and answered as if sent alone (the in-verticle batcher still joins them
   * into one flush): one refused, or one in a flush that fails, costs no other its answer.
   */
  private void answerEach(Message<Object> message, JsonArray items, AckMode ack) {
    List<Future<ApiError>> refusals = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      try {
        if (!(items.getValue(i) instanceof JsonObject json)) {
          throw ApiError.badRequest("invalid_increment", "body", "an increment must be an object {\"type\",\"id\",\"delta\"}");
        }
        refusals.add(writes.submit(WriteRequest.of(rules.increment(json, ""), ack)).map(WriteAnswer::refusal));
      } catch (ApiError refused) {
        refusals.add(Future.succeededFuture(refused));
      }
    }
    Future.join(refusals).onComplete(done -> {
      JsonObject refused = new JsonObject();
      for (int i = 0; i < refusals.size(); i++) {
        Future<ApiError> answer = refusals.get(i);
        // a write path that failed rather than answered may have taken the increment
        ApiError refusal = answer.failed()
          ? new ApiError(504, "outcome_unknown", "the gateway failed while writing: " + answer.cause(), null)
          : answer.result();
        if (refusal != null) {
          refused.put(Integer.toString(i), refusal.toJson().put("status", refusal.status()));
        }
      }
      message.reply(refused.isEmpty() ? new JsonObject(ack == AckMode.ACCEPTED ? ACCEPTED : COMMITTED)
        : new JsonObject().put("refused", refused));
    });
  }

  private static void reply(Message<Object> message, WriteRequest request, WriteAnswer answer) {
    if (answer.isRefused()) {
      BusErrors.fail(message, answer.refusal());
      return;
    }
    JsonObject body = new JsonObject(answer.storedBody() != null ? answer.storedBody()
      : request.ack() == AckMode.ACCEPTED ? ACCEPTED : COMMITTED);
    if (request.returnsValue()) {
      body.put("value", answer.value());
    }
    DeliveryOptions headers = new DeliveryOptions();
    if (answer.replayed()) {
      headers.addHeader(Addresses.IDEMPOTENT_REPLAYED, "true");
    }
    message.reply(body, headers);
  }
}
