package io.countergateway.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Keeps the flush-id table small: the ids of settled flushes are deleted about a second after they settle, instead
 * of living for a fixed retention. Why a retried flush still never counts twice:
 * <ol>
 *   <li>A flush id is {@code <source>:<sequence>[.<split path>]}; a source is one coalescer of one process run, the
 *   only writer that ever retries its flushes. Until a flush is settled (its requests answered) its id is never
 *   deleted, however long an outage lasts: a retry finds the id of an earlier committed attempt, as before.</li>
 *   <li>Once settled, only a zombie can bring it back: an earlier attempt's statement that reaches the database
 *   late (held in a buffer after the gateway gave up on it). Each source has a row with a <b>fence</b>; every flush
 *   statement takes that row shared and writes only if its sequence is at or above the fence. The writer raises the
 *   fence past its settled sequences and only then, in the same transaction, deletes their ids. A zombie that took
 *   the row before the raise finds its id still there; one that comes after sees the fence: it writes nothing.</li>
 *   <li>A process that died leaves its source and a few unsettled ids. The prune closes a source whose heartbeat is
 *   older than the retention (fence = {@link #CLOSED}, its ids deleted); a flush of a closed source fails instead of
 *   passing for committed, so a gateway that was only cut off that long retries loudly, never lies.</li>
 * </ol>
 * Confined to the event loop of the store's writer.
 */
final class FlushFence {
  static final long CLOSED = Long.MAX_VALUE;
  private static final long TICK_MS = 1_000;
  /** An idle source still proves it is alive this often; a source silent for the retention is closed as dead. */
  private static final long HEARTBEAT_MS = 60_000;

  /** The database side: register a source (fence 0), raise its fence and delete ids, in one transaction. */
  interface Sql {
    Future<Void> register(String source);

    Future<Void> advance(String source, long fence, List<String> ids);
  }

  private static final class Source {
    boolean registered;
    final TreeSet<Long> open = new TreeSet<>();
    long highest = -1;
    final TreeMap<Long, List<String>> settledIds = new TreeMap<>();
    long lastAdvance = System.currentTimeMillis();
    boolean advancing;
  }

  private final Vertx vertx;
  private final Sql sql;
  private final Map<String, Source> sources = new HashMap<>();
  private long timer = -1;

  FlushFence(Vertx vertx, Sql sql) {
    this.vertx = vertx;
    this.sql = sql;
  }

  /**
   * A flush of a source without a row, or closed as dead, is an error, never "already committed": nothing proves it
   * was written. (PostgreSQL raises it in the flush statement itself.)
   */
  static void requireOpen(Flush flush, Long fence) {
    if (fence == null) {
      throw new IllegalStateException("flush source " + FlushId.source(flush.id()) + " has no row in the flush-sources table");
    }
    if (fence == CLOSED) {
      throw new IllegalStateException("flush source " + FlushId.source(flush.id()) + " was closed as dead (silent longer than "
        + "batching.flushIdRetentionSeconds); flush " + flush.id() + " is not written");
    }
  }

  /** Before each attempt: the source is registered, and a flush as formed is open until the writer settles it. */
  Future<Void> beforeWrite(Flush flush) {
    Source source = sources.computeIfAbsent(FlushId.source(flush.id()), s -> new Source());
    long sequence = FlushId.sequence(flush.id());
    if (sequence > source.highest) {
      source.highest = sequence;
      source.open.add(sequence);
    }
    if (source.registered) {
      return Future.succeededFuture();
    }
    if (timer < 0) {
      timer = vertx.setPeriodic(TICK_MS, id -> tick());
    }
    return sql.register(FlushId.source(flush.id())).onSuccess(v -> source.registered = true);
  }

  /** The attempt found its id committed (now or earlier): the id may go once the fence passes its sequence. */
  void written(Flush flush) {
    Source source = sources.get(FlushId.source(flush.id()));
    source.settledIds.computeIfAbsent(FlushId.sequence(flush.id()), s -> new ArrayList<>()).add(flush.id());
  }

  /** The writer answered every request of this flush (and of its halves): it is never attempted again. */
  void settled(Flush formed) {
    Source source = sources.get(FlushId.source(formed.id()));
    if (source != null) {
      source.open.remove(FlushId.sequence(formed.id()));
    }
  }

  private void tick() {
    long now = System.currentTimeMillis();
    sources.forEach((name, source) -> {
      long fence = source.open.isEmpty() ? source.highest + 1 : source.open.first();
      SortedMap<Long, List<String>> below = source.settledIds.headMap(fence);
      if (!source.registered || source.advancing || below.isEmpty() && now - source.lastAdvance < HEARTBEAT_MS) {
        return;
      }
      List<Long> sequences = new ArrayList<>(below.keySet());
      List<String> ids = new ArrayList<>();
      below.values().forEach(ids::addAll);
      source.advancing = true;
      sql.advance(name, fence, ids).onComplete(done -> {
        source.advancing = false;
        if (done.succeeded()) {
          sequences.forEach(source.settledIds::remove);
          source.lastAdvance = now;
        }
      });
    });
  }

  void close() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
  }
}
