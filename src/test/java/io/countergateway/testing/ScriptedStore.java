package io.countergateway.testing;

import io.countergateway.store.Flush;
import io.countergateway.store.FlushRow;
import io.countergateway.model.CounterKey;
import io.countergateway.store.CounterStore;
import io.countergateway.store.VoidOutcome;
import io.countergateway.store.WriteOutcome;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;

import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A {@link CounterStore} for the state machines' unit tests: it keeps a table and the committed flush ids like the real
 * stores (a repeated id writes nothing), records every write attempt, and fails on cue — with a chosen SQLSTATE, with
 * an answer lost after the commit, or by holding the answer until the test releases it. Confined to the event loop
 * of the code under test, like the real stores.
 */
public final class ScriptedStore implements CounterStore {
  /** What the next write attempt does; once the script is empty, attempts commit. */
  public sealed interface Step permits Commit, Fail, CommitThenLoseAnswer, Hold, ReleaseThenFail {
  }

  public record Commit() implements Step {
  }

  public record Fail(Throwable cause) implements Step {
  }

  /** The write commits but its answer never arrives: an ambiguous commit. */
  public record CommitThenLoseAnswer() implements Step {
  }

  /** The answer waits until {@link #release()}; then the write commits. */
  public record Hold() implements Step {
  }

  /** The oldest held write is released first (a late copy that reaches the database now), then this attempt fails. */
  public record ReleaseThenFail(Throwable cause) implements Step {
  }

  public final List<Flush> attempts = new ArrayList<>();
  /** The ids of every SUM query, in the order they were sent. */
  public final List<List<String>> sumQueries = new ArrayList<>();
  public final Set<String> committedIds = new HashSet<>();
  /** Ids voided after a refused value ({@link #voidFlush}): a late attempt of one of them writes nothing. */
  public final Set<String> voidedIds = new HashSet<>();
  /** The ids of every void, in order. */
  public final List<String> voids = new ArrayList<>();
  /** Attempts that wrote rows; more than {@code committedIds.size()} would mean an id was committed twice. */
  public int commits;
  public final Map<CounterKey, BigInteger> table = new HashMap<>();
  private final Deque<Step> script = new ArrayDeque<>();
  private final Deque<Runnable> held = new ArrayDeque<>();
  private Predicate<FlushRow> refused = row -> false;
  private boolean holdSums;
  private final Deque<Runnable> heldSums = new ArrayDeque<>();

  public static PgException sqlState(String state) {
    return new PgException("scripted failure " + state, "ERROR", state, null);
  }

  public static Throwable connectionLost() {
    return ClosedConnectionException.INSTANCE;
  }

  public ScriptedStore then(Step... steps) {
    script.addAll(List.of(steps));
    return this;
  }

  /** Drops the steps not yet taken: attempts commit from now on. */
  public ScriptedStore clearScript() {
    script.clear();
    return this;
  }

  /** Every attempt holding such a row fails with 22003 numeric_value_out_of_range, as a BIGINT overflow does. */
  public ScriptedStore refuseRows(Predicate<FlushRow> rule) {
    refused = rule;
    return this;
  }

  /** Completes the oldest held write (or sum); returns whether one was held. */
  public boolean release() {
    Runnable next = held.pollFirst();
    if (next == null) {
      next = heldSums.pollFirst();
    }
    if (next != null) {
      next.run();
    }
    return next != null;
  }

  private record HeldWaiter(int count, Promise<Void> reached) {
    boolean tryHeld(int held) {
      return held >= count && reached.tryComplete();
    }
  }

  private final List<HeldWaiter> heldWaiters = new ArrayList<>();

  /** Completes once {@code count} writes are held (at once if they are); call it on the store's event loop. */
  public Future<Void> whenHeld(int count) {
    HeldWaiter waiter = new HeldWaiter(count, Promise.promise());
    if (!waiter.tryHeld(held.size())) {
      heldWaiters.add(waiter);
    }
    return waiter.reached().future();
  }

  public int heldWrites() {
    return held.size();
  }

  /** SUM queries held until {@link #release()}. */
  public int heldSums() {
    return heldSums.size();
  }

  public ScriptedStore holdSums(boolean hold) {
    holdSums = hold;
    return this;
  }

  public long value(String type, String id) {
    return table.getOrDefault(new CounterKey(type, id), BigInteger.ZERO).longValueExact();
  }

  public void set(String type, String id, BigInteger value) {
    table.put(new CounterKey(type, id), value);
  }

  @Override
  public Future<WriteOutcome> write(Flush flush) {
    attempts.add(flush);
    Step step = script.isEmpty() ? new Commit() : script.pollFirst();
    if (step instanceof Fail fail) {
      return Future.failedFuture(fail.cause());
    }
    if (step instanceof ReleaseThenFail releaseThenFail) {
      release();
      return Future.failedFuture(releaseThenFail.cause());
    }
    if (step instanceof Hold) {
      Promise<WriteOutcome> answer = Promise.promise();
      held.add(() -> answer.handle(commit(flush)));
      heldWaiters.removeIf(waiter -> waiter.tryHeld(held.size()));
      return answer.future();
    }
    Future<WriteOutcome> outcome = commit(flush);
    return step instanceof CommitThenLoseAnswer ? Future.failedFuture(connectionLost()) : outcome;
  }

  private Future<WriteOutcome> commit(Flush flush) {
    if (committedIds.contains(flush.id()) || voidedIds.contains(flush.id())) {
      return Future.succeededFuture(WriteOutcome.ALREADY_COMMITTED);
    }
    if (flush.rows().stream().anyMatch(refused)) {
      return Future.failedFuture(sqlState("22003"));
    }
    committedIds.add(flush.id());
    commits++;
    for (FlushRow row : flush.rows()) {
      table.merge(new CounterKey(row.type(), row.id()), BigInteger.valueOf(row.delta()), BigInteger::add);
    }
    return Future.succeededFuture(WriteOutcome.COMMITTED);
  }

  /** As the real stores: the id inserted as voided, unless it is there (committed: the flush counted whole). */
  @Override
  public Future<VoidOutcome> voidFlush(Flush flush) {
    voids.add(flush.id());
    if (committedIds.contains(flush.id())) {
      return Future.succeededFuture(VoidOutcome.ALREADY_COMMITTED);
    }
    voidedIds.add(flush.id());
    return Future.succeededFuture(VoidOutcome.VOIDED);
  }

  @Override
  public Future<Map<String, BigInteger>> sum(String type, List<String> ids) {
    sumQueries.add(List.copyOf(ids));
    Promise<Map<String, BigInteger>> answer = Promise.promise();
    Runnable reply = () -> {
      Map<String, BigInteger> values = new HashMap<>();
      ids.forEach(id -> values.put(id, table.getOrDefault(new CounterKey(type, id), BigInteger.ZERO)));
      answer.complete(values);
    };
    if (holdSums) {
      heldSums.add(reply);
    } else {
      reply.run();
    }
    return answer.future();
  }

  @Override
  public Future<Void> createSchema() {
    return Future.succeededFuture();
  }

  @Override
  public Future<Void> checkSchema() {
    return Future.succeededFuture();
  }

  @Override
  public Future<Void> reset(CounterKey key) {
    table.remove(key);
    return Future.succeededFuture();
  }

  @Override
  public Future<Integer> pruneFlushIds(int olderThanSeconds) {
    return Future.succeededFuture(0);
  }

  @Override
  public Future<Void> ping() {
    return Future.succeededFuture();
  }

  @Override
  public Future<Void> close() {
    return Future.succeededFuture();
  }
}
