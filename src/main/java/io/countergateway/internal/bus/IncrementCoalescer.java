package io.countergateway.internal.bus;

import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.write.AckMode;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Joins the plain increments one event-loop context sends in one turn into one message per kind (committing,
 * accepted), as the gateway's batcher joins them into one statement: a writer that sends many small increments costs
 * the bus one message, not one per increment. Increments of one counter are summed.
 *
 * <p>Each caller gets the answer its own increment would have got alone. The message asks the gateway to take and
 * answer every increment as if sent alone ({@link Addresses#ANSWER}); where it refused one counter's summed increment
 * as a request (4xx but 429), each increment of it is sent again alone, since the sum may be what was refused. A whole
 * message refused as a request (a gateway whose batch limit is lower) is sent again increment by increment; one not
 * answered (timeout, no gateway) gives each increment that answer. An accepted increment's refusal is reported only to
 * a caller that asked to know it was taken ({@link #incrementTaken}); a plain accepted send is answered to no one. Calls from outside an event-loop context (a worker, a plain thread) are sent
 * as they come.
 */
public final class IncrementCoalescer {
  /** The most counters one batch message carries; more in one turn go in further messages. */
  static final int MAX_COUNTERS = 1_000;

  private final Object key = new Object();
  private final BusClient bus;

  public IncrementCoalescer(BusClient bus) {
    this.bus = bus;
  }

  /** Adds {@code delta}; completes once committed. */
  public Future<Void> increment(String type, String id, long delta) {
    return answered(false, type, id, delta);
  }

  /** Adds {@code delta} without waiting for its commit. */
  public void incrementAccepted(String type, String id, long delta) {
    Context context = Vertx.currentContext();
    if (context == null || !context.isEventLoopContext()) {
      bus.incrementAccepted(type, id, delta);
      return;
    }
    turn(context).accepted.add(type, id, delta, null);
  }

  /** Adds {@code delta}; completes once the gateway has taken it (the answer of {@code ack=accepted}). */
  public Future<Void> incrementTaken(String type, String id, long delta) {
    return answered(true, type, id, delta);
  }

  /** An increment whose caller waits for its answer: once committed, or ({@code accepted}) once taken. */
  private Future<Void> answered(boolean accepted, String type, String id, long delta) {
    Context context = Vertx.currentContext();
    if (context == null || !context.isEventLoopContext()) {
      return accepted ? bus.incrementTaken(type, id, delta) : bus.increment(type, id, delta);
    }
    Promise<Void> answer = Promise.promise();
    Turn turn = turn(context);
    (accepted ? turn.accepted : turn.committing).add(type, id, delta, answer);
    return answer.future();
  }

  /** This context's increments of the current turn, sent once the turn's other tasks have run. */
  private Turn turn(Context context) {
    Turn turn = context.get(key);
    if (turn == null) {
      turn = new Turn();
      context.put(key, turn);
    }
    if (!turn.scheduled) {
      turn.scheduled = true;
      Turn scheduled = turn;
      context.runOnContext(v -> scheduled.send());
    }
    return turn;
  }

  private final class Turn {
    final Pending committing = new Pending(false);
    final Pending accepted = new Pending(true);
    boolean scheduled;

    void send() {
      scheduled = false;
      committing.send();
      accepted.send();
    }
  }

  /** One kind's increments of the turn, by counter. */
  private final class Pending {
    private final boolean accepted;
    private Map<Counter, Entry> byCounter = new LinkedHashMap<>();

    Pending(boolean accepted) {
      this.accepted = accepted;
    }

    void add(String type, String id, long delta, Promise<Void> answer) {
      Counter counter = new Counter(type, id);
      Entry entry = byCounter.get(counter);
      if (entry != null && sumFits(entry.delta, delta)) {
        entry.delta += delta;
        entry.parts.add(new Part(delta, answer));
        return;
      }
      if (entry != null || byCounter.size() >= MAX_COUNTERS) {
        send();
      }
      entry = new Entry(counter);
      entry.delta = delta;
      entry.parts.add(new Part(delta, answer));
      byCounter.put(counter, entry);
    }

    void send() {
      if (byCounter.isEmpty()) {
        return;
      }
      Map<Counter, Entry> batch = byCounter;
      byCounter = new LinkedHashMap<>();
      if (batch.size() == 1 && batch.values().iterator().next().parts.size() == 1) {
        Entry only = batch.values().iterator().next();
        sendAlone(only.counter, only.parts.get(0));
        return;
      }
      JsonArray increments = new JsonArray(new ArrayList<>(batch.size()));
      for (Entry entry : batch.values()) {
        increments.add(new JsonObject().put("type", entry.counter.type).put("id", entry.counter.id)
          .put("delta", entry.delta));
      }
      bus.incrementEach(increments, accepted ? AckMode.ACCEPTED : AckMode.COMMIT).onComplete(result -> {
        if (result.failed()) {
          answerAll(batch, BusErrors.toApiError(result.cause()));
          return;
        }
        JsonObject refused = result.result().getJsonObject("refused");
        int index = 0;
        for (Entry entry : batch.values()) {
          JsonObject refusal = refused == null ? null : refused.getJsonObject(Integer.toString(index++));
          if (refusal == null) {
            entry.parts.forEach(part -> part.complete(null));
          } else if (entry.parts.size() > 1 && isRequestRefusal(refusal.getInteger("status", 500))) {
            // the sum of several increments may be what was refused: each is asked alone
            entry.parts.forEach(part -> sendAlone(entry.counter, part));
          } else {
            ApiError error = ApiError.fromJson(refusal.getInteger("status", 500), refusal);
            entry.parts.forEach(part -> part.complete(error));
          }
        }
      });
    }

    /**
     * The whole message failed: refused as a request (none of it taken: each increment is asked alone, as one of
     * them may be the cause), or not answered (what holds for the message holds for each increment in it).
     */
    private void answerAll(Map<Counter, Entry> batch, ApiError failure) {
      if (isRequestRefusal(failure.status())) {
        batch.values().forEach(entry -> entry.parts.forEach(part -> sendAlone(entry.counter, part)));
      } else {
        batch.values().forEach(entry -> entry.parts.forEach(part -> part.complete(failure)));
      }
    }

    private void sendAlone(Counter counter, Part part) {
      if (accepted && part.answer == null) {
        bus.incrementAccepted(counter.type, counter.id, part.delta);
      } else if (accepted) {
        bus.incrementTaken(counter.type, counter.id, part.delta).onComplete(part.answer);
      } else {
        bus.increment(counter.type, counter.id, part.delta).onComplete(part.answer);
      }
    }
  }

  /** A 4xx but 429: the request as sent was refused, and nothing of it taken. */
  private static boolean isRequestRefusal(int status) {
    return status >= 400 && status < 500 && status != 429;
  }

  private static boolean sumFits(long sum, long delta) {
    long total = sum + delta;
    // a sum that overflows changes sign against both of its terms
    return ((sum ^ total) & (delta ^ total)) >= 0;
  }

  private record Counter(String type, String id) {
  }

  private static final class Entry {
    final Counter counter;
    final List<Part> parts = new ArrayList<>(1);
    long delta;

    Entry(Counter counter) {
      this.counter = counter;
    }
  }

  /** One caller's increment: its delta and the answer it waits for (null for an accepted one nobody waits for). */
  private record Part(long delta, Promise<Void> answer) {
    void complete(Throwable failure) {
      if (answer == null) {
        return;
      }
      if (failure == null) {
        answer.tryComplete();
      } else {
        answer.tryFail(failure);
      }
    }
  }
}
