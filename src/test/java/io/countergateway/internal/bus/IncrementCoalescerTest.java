package io.countergateway.internal.bus;

import io.countergateway.internal.model.ApiError;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The coalescing of a verticle's increments against a gateway scripted to answer each message as told: what each
 * caller is answered, and how many messages the bus carried.
 */
@ExtendWith(VertxExtension.class)
class IncrementCoalescerTest {
  private final List<Message<Object>> messages = new CopyOnWriteArrayList<>();
  private volatile int awaited;
  private volatile Promise<Void> arrived = Promise.promise();

  /** Waits until the bus carried {@code count} increment messages in all. */
  private void awaitMessages(int count) {
    arrived = Promise.promise();
    awaited = count;
    if (messages.size() >= count) {
      return;
    }
    await(arrived.future());
  }

  private IncrementCoalescer coalescer(Vertx vertx, Consumer<Message<Object>> gateway) {
    vertx.eventBus().<Object>consumer(Addresses.INCREMENT, message -> {
      messages.add(message);
      if (messages.size() >= awaited) {
        arrived.tryComplete();
      }
      gateway.accept(message);
    });
    return new IncrementCoalescer(new BusClient(vertx, 30_000));
  }

  /** Sends {@code increments} from one turn of an event loop; the answers, once all came. */
  private static List<Future<Void>> oneTurn(Vertx vertx, IncrementCoalescer coalescer, List<Object[]> increments) {
    Promise<List<Future<Void>>> sent = Promise.promise();
    vertx.getOrCreateContext().runOnContext(v -> {
      List<Future<Void>> answers = new ArrayList<>();
      for (Object[] increment : increments) {
        answers.add(coalescer.increment((String) increment[0], (String) increment[1], (Long) increment[2]));
      }
      sent.complete(answers);
    });
    List<Future<Void>> answers = await(sent.future());
    await(Future.join(answers).otherwiseEmpty());
    return answers;
  }

  private static List<Object[]> increments(int count, int counters) {
    List<Object[]> increments = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      increments.add(new Object[] {"likes", "c" + (i % counters), 1L});
    }
    return increments;
  }

  @Test
  @DisplayName("100 increments of 10 counters in one turn are one message of 10 summed increments, each caller answered")
  void oneMessagePerTurn(Vertx vertx) {
    IncrementCoalescer coalescer = coalescer(vertx, message -> message.reply(new JsonObject().put("committed", true)));
    List<Future<Void>> answers = oneTurn(vertx, coalescer, increments(100, 10));
    assertThat(answers).allMatch(Future::succeeded);
    assertThat(messages).hasSize(1);
    Message<Object> message = messages.get(0);
    assertThat(message.headers().get(Addresses.ANSWER)).isEqualTo(Addresses.ANSWER_EACH);
    JsonArray body = (JsonArray) message.body();
    assertThat(body).hasSize(10);
    assertThat(body.getJsonObject(3).getLong("delta")).isEqualTo(10L);
  }

  @Test
  @DisplayName("a message the gateway did not answer in time gives every caller in it 504, none a success")
  void timeoutReachesEveryCaller(Vertx vertx) {
    IncrementCoalescer coalescer = coalescer(vertx,
      message -> message.fail(504, new ApiError(504, "timeout", "the gateway did not answer in time", null).toJson().encode()));
    List<Future<Void>> answers = oneTurn(vertx, coalescer, increments(30, 3));
    assertThat(answers).allMatch(Future::failed);
    assertThat(answers).allMatch(answer -> ((ApiError) answer.cause()).status() == 504);
    assertThat(messages).hasSize(1);
  }

  @Test
  @DisplayName("a message refused whole as a request (a gateway without answers for each) is asked again increment by increment")
  void wholeRefusalAsksEachAlone(Vertx vertx) {
    IncrementCoalescer coalescer = coalescer(vertx, message -> {
      if (message.body() instanceof JsonArray) {
        message.fail(413, new ApiError(413, "batch_too_large", "too large", "body").toJson().encode());
      } else {
        message.reply(new JsonObject().put("committed", true));
      }
    });
    List<Future<Void>> answers = oneTurn(vertx, coalescer, increments(6, 3));
    assertThat(answers).allMatch(Future::succeeded);
    assertThat(messages).hasSize(1 + 6);
  }

  @Test
  @DisplayName("an increment refused in the message gets its own refusal; one summed with another is asked again alone")
  void refusedIncrementsKeepTheirOwnAnswer(Vertx vertx) {
    IncrementCoalescer coalescer = coalescer(vertx, message -> {
      if (message.body() instanceof JsonArray items) {
        JsonObject refused = new JsonObject();
        for (int i = 0; i < items.size(); i++) {
          if (items.getJsonObject(i).getLong("delta") > 1) {
            refused.put(Integer.toString(i), new ApiError(400, "invalid_delta", "too large", "delta").toJson().put("status", 400));
          }
        }
        message.reply(refused.isEmpty() ? new JsonObject().put("committed", true) : new JsonObject().put("refused", refused));
      } else {
        message.reply(new JsonObject().put("committed", true));
      }
    });
    // "a" twice (summed to 2, refused, asked again alone: each 1 is taken); "b" once with 5 (refused as itself)
    List<Future<Void>> answers = oneTurn(vertx, coalescer,
      List.of(new Object[] {"likes", "a", 1L}, new Object[] {"likes", "a", 1L}, new Object[] {"likes", "b", 5L},
        new Object[] {"likes", "c", 1L}));
    assertThat(answers.get(0).succeeded()).isTrue();
    assertThat(answers.get(1).succeeded()).isTrue();
    assertThat(((ApiError) answers.get(2).cause()).code()).isEqualTo("invalid_delta");
    assertThat(answers.get(3).succeeded()).isTrue();
    assertThat(messages).hasSize(3);
  }

  @Test
  @DisplayName("accepted increments of one turn are one message asking for the answer once taken; off an event loop each goes alone")
  void acceptedAndOffTheLoop(Vertx vertx) {
    IncrementCoalescer coalescer = coalescer(vertx, message -> {
      if (message.replyAddress() != null) {
        message.reply(new JsonObject().put("accepted", true));
      }
    });
    Promise<Void> sent = Promise.promise();
    vertx.getOrCreateContext().runOnContext(v -> {
      for (int i = 0; i < 50; i++) {
        coalescer.incrementAccepted("likes", "c" + (i % 5), 1);
      }
      sent.complete();
    });
    await(sent.future());
    awaitMessages(1);
    assertThat(messages).hasSize(1);
    assertThat(messages.get(0).headers().get(Addresses.ACK)).isEqualTo("accepted");
    assertThat((JsonArray) messages.get(0).body()).hasSize(5);

    coalescer.incrementAccepted("likes", "alone", 1);
    coalescer.incrementAccepted("likes", "alone", 1);
    awaitMessages(3);
    assertThat(messages).hasSize(3);
    assertThat(messages.get(2).body()).isInstanceOf(JsonObject.class);
  }

  @Test
  @DisplayName("an increment waiting to be taken is answered once the gateway took it, in the turn's message or alone, and gets 503 when it was not taken")
  void takenIncrementsAreAnswered(Vertx vertx) {
    IncrementCoalescer coalescer = coalescer(vertx, message -> {
      if (message.body() instanceof JsonObject alone && alone.getString("id").equals("full")) {
        message.fail(503, new ApiError(503, "full", "the gateway is full", null).toJson().encode());
      } else {
        message.reply(new JsonObject().put("accepted", true));
      }
    });
    Promise<List<Future<Void>>> sent = Promise.promise();
    vertx.getOrCreateContext().runOnContext(v -> {
      List<Future<Void>> answers = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        answers.add(coalescer.incrementTaken("likes", "c" + (i % 5), 1));
      }
      coalescer.incrementAccepted("likes", "c0", 1);
      sent.complete(answers);
    });
    List<Future<Void>> answers = await(sent.future());
    await(Future.join(answers).otherwiseEmpty());
    assertThat(answers).allMatch(Future::succeeded);
    assertThat(messages).hasSize(1);
    assertThat(messages.get(0).headers().get(Addresses.ACK)).isEqualTo("accepted");
    assertThat(((JsonArray) messages.get(0).body()).getJsonObject(0).getLong("delta")).isEqualTo(3L);

    Promise<Future<Void>> alone = Promise.promise();
    vertx.getOrCreateContext().runOnContext(v -> alone.complete(coalescer.incrementTaken("likes", "full", 1)));
    Future<Void> refused = await(alone.future());
    await(refused.otherwiseEmpty());
    assertThat(((ApiError) refused.cause()).status()).isEqualTo(503);
    assertThat(messages).hasSize(2);
    assertThat(messages.get(1).headers().get(Addresses.ACK)).isEqualTo("accepted");
    assertThat(messages.get(1).replyAddress()).isNotNull();
  }
}
