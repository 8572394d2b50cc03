package io.countergateway.testing;

import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.store.FlushSourceClosedException;
import io.countergateway.internal.store.FlushSourceRow;
import io.countergateway.internal.store.ReplicationPosition;
import io.countergateway.internal.store.StatementNotSentException;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.VoidOutcome;
import io.countergateway.internal.store.WriteOutcome;
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
import java.util.function.Supplier;

/**
 * A {@link CounterStore} for the state machines' unit tests: it keeps a table, the flush-id table and the flush-source
 * rows like the real stores (a repeated id, or a sequence below its source's fence, writes nothing; a flush of a
 * source closed or without a row fails), records every write attempt, and fails on cue — with a chosen SQLSTATE, with
 * an answer lost after the commit, or by holding the answer until the test releases it. {@link #closeSource} and
 * {@link #dropSource} do what another replica's prune does. Confined to the event loop of the code under test, like
 * the real stores.
 */
public final class ScriptedStore implements CounterStore {
  /** What the next write attempt does; once the script is empty, attempts commit. */
  public sealed interface Step permits Commit, Fail, FailBeforeSending, CommitThenLoseAnswer, Hold, ReleaseThenFail,
    Meanwhile {
  }

  /** No connection could be had ({@code cause}: refused, unreachable): the statement never leaves the process. */
  public record FailBeforeSending(Throwable cause) implements Step {
  }

  /** {@code meanwhile} happens in the database as this attempt arrives (a prune, say), then the attempt is {@code step}. */
  public record Meanwhile(Runnable meanwhile, Step step) implements Step {
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
  /** The flush-source rows: source to fence ({@link FlushSourceRow#CLOSED} once closed). */
  public final Map<String, Long> sources = new HashMap<>();
  /** The flush-id table as it is now: id to whether it is voided. Ids go when their source's fence passes them. */
  public final Map<String, Boolean> idTable = new HashMap<>();
  /** Every source ever registered, in order. */
  public final List<String> registered = new ArrayList<>();
  /** Every source deleted by its writer, in order. */
  public final List<String> deletedSources = new ArrayList<>();
  /** The ids of every SUM query, in the order they were sent. */
  public final List<List<String>> sumQueries = new ArrayList<>();
  /** Every id that committed rows, ever (the id table forgets them as fences pass). */
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

  /** Every attempt's id whose statement left the process (its {@code beforeSend} completed), in order. */
  public final List<String> sent = new ArrayList<>();

  public static Throwable connectionRefused() {
    return new java.net.ConnectException("scripted: connection refused");
  }

  /**
   * As the real stores: a step that fails before sending fails with {@link StatementNotSentException} and never calls
   * {@code beforeSend}; every other step waits for it first (and fails as not sent if it fails).
   */
  @Override
  public Future<WriteOutcome> write(Flush flush, Supplier<Future<Void>> beforeSend) {
    attempts.add(flush);
    Step first = script.isEmpty() ? new Commit() : script.pollFirst();
    if (first instanceof FailBeforeSending notSent) {
      return Future.failedFuture(new StatementNotSentException(notSent.cause()));
    }
    return beforeSend.get().transform(mayGo -> {
      if (mayGo.failed()) {
        return Future.failedFuture(new StatementNotSentException(mayGo.cause()));
      }
      sent.add(flush.id().toString());
      return sendStep(flush, first);
    });
  }

  private Future<WriteOutcome> sendStep(Flush flush, Step step) {
    if (step instanceof Meanwhile meanwhile) {
      meanwhile.meanwhile().run();
      step = meanwhile.step();
    }
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
    return step instanceof CommitThenLoseAnswer && outcome.succeeded() ? Future.failedFuture(connectionLost()) : outcome;
  }

  /** A closed or missing source fails the statement, as the real stores' fence check does. */
  private Throwable sourceClosed(Flush flush) {
    Long fence = sources.get(flush.id().source());
    if (fence == null || fence == FlushSourceRow.CLOSED) {
      return new FlushSourceClosedException(flush.id().source(), "scripted: flush source " + flush.id().source()
        + (fence == null ? " has no row" : " is closed"));
    }
    return null;
  }

  private Future<WriteOutcome> commit(Flush flush) {
    Throwable closed = sourceClosed(flush);
    if (closed != null) {
      return Future.failedFuture(closed);
    }
    String id = flush.id().toString();
    if (flush.id().sequence() < sources.get(flush.id().source()) || idTable.containsKey(id)) {
      return Future.succeededFuture(WriteOutcome.ALREADY_COMMITTED);
    }
    if (flush.rows().stream().anyMatch(refused)) {
      return Future.failedFuture(sqlState("22003"));
    }
    idTable.put(id, false);
    committedIds.add(id);
    commits++;
    for (FlushRow row : flush.rows()) {
      table.merge(new CounterKey(row.type(), row.id()), BigInteger.valueOf(row.delta()), BigInteger::add);
    }
    walPosition++;
    wal.add(new Committed(walPosition, flush));
    return Future.succeededFuture(WriteOutcome.COMMITTED);
  }

  /** As the real stores: the id inserted as voided, unless it is there (committed: the flush counted whole). */
  @Override
  public Future<VoidOutcome> voidFlush(Flush flush) {
    String id = flush.id().toString();
    voids.add(id);
    if (voidsLost > 0) {
      voidsLost--;
      return Future.failedFuture(connectionLost());
    }
    Throwable closed = sourceClosed(flush);
    if (closed != null) {
      return Future.failedFuture(closed);
    }
    Boolean voided = idTable.get(id);
    if (voided != null) {
      return Future.succeededFuture(voided ? VoidOutcome.VOIDED : VoidOutcome.ALREADY_COMMITTED);
    }
    idTable.put(id, true);
    voidedIds.add(id);
    return Future.succeededFuture(VoidOutcome.VOIDED);
  }

  /** How many of the next voids lose their connection before the database answers (nothing of them is done). */
  public int voidsLost;

  /** How many of the next reads of a source's row lose their connection before the database answers. */
  public int sourceRowReadsLost;

  /** How many of the next source registrations fail as a refused connection would. */
  public int registrationsRefused;

  @Override
  public Future<Void> registerSource(String source) {
    if (registrationsRefused > 0) {
      registrationsRefused--;
      return Future.failedFuture(new StatementNotSentException(connectionRefused()));
    }
    registered.add(source);
    sources.putIfAbsent(source, 0L);
    return Future.succeededFuture();
  }

  @Override
  public Future<Boolean> raiseFence(String source, long fence) {
    Long current = sources.get(source);
    if (current == null || current == FlushSourceRow.CLOSED) {
      return Future.succeededFuture(false);
    }
    sources.put(source, Math.max(current, fence));
    return Future.succeededFuture(true);
  }

  @Override
  public Future<Void> deleteSettledIds(List<String> ids) {
    ids.forEach(idTable::remove);
    return Future.succeededFuture();
  }

  @Override
  public Future<FlushSourceRow> sourceRow(String source) {
    if (sourceRowReadsLost > 0) {
      sourceRowReadsLost--;
      return Future.failedFuture(connectionLost());
    }
    Long fence = sources.get(source);
    Set<FlushId> committed = new HashSet<>();
    if (fence != null && fence == FlushSourceRow.CLOSED) {
      idTable.forEach((id, voided) -> {
        FlushId flushId = FlushId.parse(id);
        if (!voided && flushId.source().equals(source)) {
          committed.add(flushId);
        }
      });
    }
    return Future.succeededFuture(new FlushSourceRow(fence, committed));
  }

  @Override
  public Future<Void> deleteSource(String source) {
    deletedSources.add(source);
    dropSource(source);
    return Future.succeededFuture();
  }

  /** What another replica's prune does to a source silent for the retention: closed, its ids kept. */
  public void closeSource(String source) {
    if (sources.containsKey(source)) {
      sources.put(source, FlushSourceRow.CLOSED);
    }
  }

  /** The row and ids of a source gone: deleted by its writer, or by a prune a retention after closing it. */
  public void dropSource(String source) {
    sources.remove(source);
    idTable.keySet().removeIf(id -> FlushId.parse(id).source().equals(source));
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

  /** A flush's commit and where it lies in the primary's WAL. */
  private record Committed(long position, Flush flush) {
  }

  /** The primary's timeline: a promotion makes a new one. */
  public long timeline = 1;
  /** The primary's WAL position: one more with each commit of rows. */
  public long walPosition;
  /** The standbys streaming from the primary. */
  public int standbys = 1;
  /** How far the standbys have flushed (the lowest of them). */
  public long standbysFlushed;
  /** Whether the primary is away: reading positions fails. */
  public boolean primaryAway;
  public int positionReads;
  private final List<Committed> wal = new ArrayList<>();

  @Override
  public Future<ReplicationPosition> replicationPosition() {
    positionReads++;
    if (primaryAway) {
      return Future.failedFuture(connectionRefused());
    }
    return Future.succeededFuture(new ReplicationPosition(timeline, walPosition, standbys, standbysFlushed));
  }

  /**
   * The primary is lost and its standby promoted: the commits past {@link #standbysFlushed} are gone (their ids and
   * rows), the timeline is a new one, and the promoted server has no standby of its own.
   */
  public void promoteStandby() {
    for (Committed committed : wal) {
      if (committed.position() > standbysFlushed) {
        String id = committed.flush().id().toString();
        idTable.remove(id);
        committedIds.remove(id);
        for (FlushRow row : committed.flush().rows()) {
          table.merge(new CounterKey(row.type(), row.id()), BigInteger.valueOf(-row.delta()), BigInteger::add);
        }
      }
    }
    wal.removeIf(committed -> committed.position() > standbysFlushed);
    walPosition = standbysFlushed;
    timeline++;
    standbys = 0;
    primaryAway = false;
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
