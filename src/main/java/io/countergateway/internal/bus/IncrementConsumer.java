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
import io.vertx.core.Handler;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * The event-bus door of {@link Addresses#INCREMENT}: a JSON object is one increment, a JSON array a batch; a
 * {@code request} is answered after the commit, a {@code send} is taken as accepted and gets no reply. It turns the
 * message into a {@link WriteRequest} and the {@link WriteAnswer} into a reply — the answer the HTTP routes give the
 * same request, a refusal as the failure code (the HTTP status) with the JSON error ({@link BusErrors}).
 */
public final class IncrementConsumer implements Handler<Message<Object>> {
  private static final Logger LOG = LoggerFactory.getLogger(IncrementConsumer.class);
  private static final String COMMITTED = new JsonObject().put("committed", true).encode();

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
    boolean waitsForCommit = message.replyAddress() != null;
    WriteRequest request;
    try {
      request = request(message.body(), waitsForCommit ? AckMode.COMMIT : AckMode.ACCEPTED)
        .withIdempotencyKey(IdempotentIncrements.key(message.headers().get(Addresses.IDEMPOTENCY_KEY),
          Addresses.IDEMPOTENCY_KEY), COMMITTED);
    } catch (ApiError e) {
      if (waitsForCommit) {
        BusErrors.fail(message, e);
      }
      return;
    }
    writes.submit(request).onSuccess(answer -> {
      if (waitsForCommit) {
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

  private static void reply(Message<Object> message, WriteRequest request, WriteAnswer answer) {
    if (answer.isRefused()) {
      BusErrors.fail(message, answer.refusal());
      return;
    }
    JsonObject body = new JsonObject(answer.storedBody() != null ? answer.storedBody() : COMMITTED);
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
