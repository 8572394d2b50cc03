package io.countergateway.store;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Keeps the flush-id table small, and lets a gateway whose flush source was closed carry on without counting anything
 * twice (src/DESIGN.md §4). Why a retried flush still never counts twice:
 * <ol>
 *   <li>A flush id is {@code <source>:<sequence>[.<split path>]}; a source is one coalescer of one process run, the
 *   only writer that ever retries its flushes. Until a flush is settled (its requests answered) its id is never
 *   deleted by its writer, however long an outage lasts: a retry finds the id of an earlier committed attempt.</li>
 *   <li>Once settled, only a zombie can bring it back: an earlier attempt's statement that reaches the database
 *   late (held in a buffer after the gateway gave up on it). Each source has a row with a <b>fence</b>; every flush
 *   statement takes that row shared and writes only if its sequence is at or above the fence. The writer raises the
 *   fence past its settled sequences and only then, in the same transaction, deletes their ids. A zombie that took
 *   the row before the raise finds its id still there; one that comes after sees the fence: it writes nothing.</li>
 *   <li>A source silent for {@code batching.flushIdRetentionSeconds} is closed by the prune (fence = {@link #CLOSED},
 *   {@code closed_at} set) and <b>keeps its ids</b>. From the moment the closing UPDATE commits (it waits for every
 *   flush statement holding the row shared) no flush of the source can commit any more, so the ids it holds are the
 *   final word on its unsettled flushes: committed if and only if their id (or a half's) is there. A gateway that finds
 *   its source closed reads them once ({@link #resolve}); a flush whose id is there is answered as committed, every
 *   other one is proven never committed and goes on under a <b>successor</b> source, its id the same but for the
 *   source ({@link FlushId#withSource}); the successor inherits the open sequences, so its fence never passes them.
 *   Then the closed source's row and ids are deleted: it holds nothing any more.</li>
 *   <li>A closed source no gateway came back for is deleted with its ids a further retention after {@code closed_at}
 *   (its process died). A gateway that comes back even later finds no row: a flush of it that had an attempt of
 *   unknown outcome can no longer be resolved ({@link FlushOutcomeUnknownException}, answered 504); the others had no
 *   such attempt, so they committed nowhere and go on under a successor.</li>
 *   <li>A graceful stop deletes the row and the ids of a source whose flushes are all settled; a late copy of one of
 *   them then finds no row and fails.</li>
 * </ol>
 * An idle source beats its heart (raises its fence to where it is) every {@link #heartbeatEvery heartbeat}, a tenth of
 * the retention; a busy one with every advance, about once a second. Confined to the event loop of the store's writer.
 * <p>
 * <b>A source's advance and its own attempts never overlap</b> (issue 25): the database would otherwise make each wait
 * for the other's row lock, the raise for every flush statement holding the row shared, and a flush for the raise's
 * transaction to commit. An advance that falls due waits until the source's attempts in flight have answered, and the
 * attempts that want to go meanwhile wait for the advance; so the only statements a raise can still wait for are
 * zombies, which is what the fence is for. The pause is bounded: once an advance is due no attempt of the source
 * starts, each attempt in flight ends within the attempt timeout, and the advance is one bounded statement (or
 * transaction); whether it succeeds or fails, the waiting attempts go. Settled ids thus never pile up behind a busy
 * source: each tick that finds some starts an advance that takes them all.
 */
final class FlushFence {
  private static final Logger LOG = LoggerFactory.getLogger(FlushFence.class);
  static final long CLOSED = Long.MAX_VALUE;
  private static final long TICK_MS = 1_000;
  /** The heartbeat at the default retention of a day; see {@link #heartbeatEvery}. */
  private static final long DEFAULT_HEARTBEAT_MS = 60_000;

  /** The database side of the fence. */
  interface Sql {
    /** A row for the source, fence 0. */
    Future<Void> register(String source);

    /**
     * Raises the fence, beats the heart and deletes the ids, in one transaction; false when the source's row is closed
     * or gone (the fence was not raised).
     */
    Future<Boolean> advance(String source, long fence, List<String> ids);

    /** The fence of the source's row (null without a row) and, when it is closed, the ids it holds, read together. */
    Future<Closure> closure(String source);

    /** Deletes the source's row, then its ids, in one transaction. */
    Future<Void> delete(String source);
  }

  /** A source's row as a writer that found it closed reads it: its fence, and the ids committed under it (not voided). */
  record Closure(Long fence, Set<String> committed) {
  }

  /** Where an attempt goes: {@code flush} under its own id or a successor's, or nowhere (it had committed). */
  record Route(Flush flush) {
    boolean alreadyCommitted() {
      return flush == null;
    }
  }

  private static final class Source {
    final String name;
    boolean registered;
    final TreeSet<Long> open = new TreeSet<>();
    long highest = -1;
    final TreeMap<Long, List<String>> settledIds = new TreeMap<>();
    /** Open sequences with an attempt of unknown outcome (a lost connection, a timeout), under this source. */
    final Set<Long> ambiguous = new HashSet<>();
    long lastAdvance = System.currentTimeMillis();
    /** An advance is due or in flight: no attempt of the source starts until it ends. */
    boolean advancing;
    /** Attempts of the source whose answer has not come yet. */
    int attempts;
    /** Attempts held back while the advance is due or in flight. */
    final List<Promise<Void>> waitingForAdvance = new ArrayList<>();
    /** Completes when the advance due or in flight ends (whatever its outcome). */
    Promise<Void> advanced = Promise.promise();
    /** The due advance's statement was sent and has not answered yet. */
    boolean sending;
    /** Set once the source was found closed; completes once its flushes are resolved. */
    Future<Void> resolution;
    /** After the resolution: the ids committed under the source; null when it had vanished (no row). */
    Set<String> committed;
    String successor;

    Source(String name) {
      this.name = name;
    }
  }

  private final Vertx vertx;
  private final Sql sql;
  private final long tickMs;
  private final Map<String, Source> sources = new HashMap<>();
  private long heartbeatMs = DEFAULT_HEARTBEAT_MS;
  private long timer = -1;
  private boolean retired;

  FlushFence(Vertx vertx, Sql sql) {
    this(vertx, sql, TICK_MS);
  }

  /** With the ticks every {@code tickMs}; a test that ticks by hand makes it longer than itself. */
  FlushFence(Vertx vertx, Sql sql, long tickMs) {
    this.vertx = vertx;
    this.sql = sql;
    this.tickMs = tickMs;
  }

  /** How often an idle source proves it is alive; the prune closes one silent for the retention (see BatchingOptions). */
  void heartbeatEvery(long millis) {
    heartbeatMs = Math.max(TICK_MS, millis);
  }

  /**
   * A flush of a source without a row, or closed as dead, is an error, never "already committed": nothing proves it
   * was written. (PostgreSQL raises it in the flush statement itself.)
   */
  static void requireOpen(Flush flush, Long fence) {
    String source = FlushId.source(flush.id());
    if (fence == null) {
      throw new FlushSourceClosedException(source, "flush source " + source + " has no row in the flush-sources table");
    }
    if (fence == CLOSED) {
      throw new FlushSourceClosedException(source, "flush source " + source + " was closed as dead (silent longer than "
        + "batching.flushIdRetentionSeconds); flush " + flush.id() + " is not written");
    }
  }

  /**
   * Where the next attempt of {@code flush} goes. Under its own id while its source is open; once the source was found
   * closed, nowhere if its id is among the committed ones, else under the successor (and so on down the chain).
   */
  Future<Route> route(Flush flush) {
    Source source = source(FlushId.source(flush.id()));
    if (source.resolution == null) {
      return Future.succeededFuture(new Route(flush));
    }
    return source.resolution.compose(resolved -> {
      long sequence = FlushId.sequence(flush.id());
      if (source.committed == null && source.ambiguous.contains(sequence)) {
        return Future.failedFuture(new FlushOutcomeUnknownException("flush " + flush.id() + " had an attempt of unknown "
          + "outcome, and its flush source was deleted with its ids before this gateway came back (closed, then kept "
          + "for batching.flushIdRetentionSeconds): whether it committed cannot be known"));
      }
      if (source.committed != null && source.committed.contains(flush.id())) {
        return Future.succeededFuture(new Route(null));
      }
      return route(new Flush(FlushId.withSource(flush.id(), source.successor), flush.rows()));
    });
  }

  /**
   * The source was found closed (or without a row): reads what it holds, once, and names its successor. Fails (and
   * may be tried again) when the database cannot be read.
   */
  Future<Void> resolve(String name) {
    Source source = source(name);
    if (source.resolution != null) {
      return source.resolution;
    }
    Future<Void> resolution = sql.closure(name).compose(closure -> {
      if (closure.fence() != null && closure.fence() != CLOSED) {
        return Future.failedFuture(new IllegalStateException("flush source " + name + " was reported closed but is open"));
      }
      source.committed = closure.fence() == null ? null : closure.committed();
      Source next = source(FlushId.successorOf(name));
      next.open.addAll(source.open);
      next.highest = source.highest;
      source.successor = next.name;
      source.settledIds.clear();
      if (source.committed == null) {
        LOG.error("flush source {} has no row any more (closed, then deleted after batching.flushIdRetentionSeconds); "
          + "its {} unsettled flushes go on under {}, except the {} that had an attempt of unknown outcome, which are "
          + "answered 504", name, source.open.size(), next.name, source.ambiguous.size());
      } else {
        LOG.warn("flush source {} was closed as dead (silent longer than batching.flushIdRetentionSeconds); of its {} "
          + "unsettled flushes, those whose ids it holds ({}) had committed, the others go on under {}", name,
          source.open.size(), source.committed.size(), next.name);
        sql.delete(name).onFailure(e -> LOG.warn("could not delete the closed flush source {} (the prune will): {}",
          name, e.toString()));
      }
      return Future.succeededFuture();
    });
    source.resolution = resolution;
    resolution.onFailure(e -> {
      if (source.resolution == resolution) {
        source.resolution = null;
      }
    });
    return resolution;
  }

  private Source source(String name) {
    return sources.computeIfAbsent(name, Source::new);
  }

  /**
   * Before each attempt of a routed flush: the source is registered, a flush as formed is open until settled, and no
   * advance of the source is due or in flight. Once this succeeds the attempt counts as in flight until
   * {@link #attemptEnded} is called for it.
   */
  Future<Void> beforeWrite(Flush flush) {
    Source source = source(FlushId.source(flush.id()));
    long sequence = FlushId.sequence(flush.id());
    if (sequence > source.highest) {
      source.highest = sequence;
      source.open.add(sequence);
    }
    if (source.registered) {
      return afterAdvance(source);
    }
    if (timer < 0) {
      timer = vertx.setPeriodic(tickMs, id -> tick());
    }
    return sql.register(source.name).compose(v -> {
      source.registered = true;
      return afterAdvance(source);
    });
  }

  private Future<Void> afterAdvance(Source source) {
    if (!source.advancing) {
      source.attempts++;
      return Future.succeededFuture();
    }
    Promise<Void> turn = Promise.promise();
    source.waitingForAdvance.add(turn);
    return turn.future();
  }

  /** The attempt {@link #beforeWrite} let go has its answer (or gave up waiting for one). */
  void attemptEnded(Flush flush) {
    Source source = sources.get(FlushId.source(flush.id()));
    if (source != null && source.attempts > 0) {
      source.attempts--;
      advanceIfQuiet(source);
    }
  }

  /** The attempt found its id committed (now or earlier), or voided it: the id may go once the fence passes it. */
  void written(Flush flush) {
    Source source = sources.get(FlushId.source(flush.id()));
    if (source != null && source.resolution == null) {
      source.settledIds.computeIfAbsent(FlushId.sequence(flush.id()), s -> new ArrayList<>()).add(flush.id());
    }
  }

  /** An attempt of the routed flush ended without an answer from the database: it may have committed. */
  void ambiguous(Flush flush) {
    Source source = sources.get(FlushId.source(flush.id()));
    if (source != null) {
      source.ambiguous.add(FlushId.sequence(flush.id()));
    }
  }

  /** The writer answered every request of this flush (and of its halves): it is never attempted again. */
  void settled(Flush formed) {
    long sequence = FlushId.sequence(formed.id());
    for (Source source = sources.get(FlushId.source(formed.id())); source != null;
         source = source.successor == null ? null : sources.get(source.successor)) {
      source.open.remove(sequence);
      source.ambiguous.remove(sequence);
    }
  }

  /** Marks an advance due on every source with settled ids below its fence, or whose heartbeat is due. */
  void tick() {
    long now = System.currentTimeMillis();
    List<Source> all = new ArrayList<>(sources.values());
    for (Source source : all) {
      if (!source.registered || source.resolution != null || source.advancing
        || idsBelowFence(source).isEmpty() && now - source.lastAdvance < heartbeatMs) {
        continue;
      }
      source.advancing = true;
      source.advanced = Promise.promise();
      advanceIfQuiet(source);
    }
  }

  private static SortedMap<Long, List<String>> idsBelowFence(Source source) {
    return source.settledIds.headMap(fenceOf(source));
  }

  /** Every sequence below it is settled: the lowest open one, or past the highest when none is open. */
  private static long fenceOf(Source source) {
    return source.open.isEmpty() ? source.highest + 1 : source.open.first();
  }

  /** Sends the due advance once no attempt of the source is in flight; the fence and ids are taken as of now. */
  private void advanceIfQuiet(Source source) {
    if (!source.advancing || source.attempts > 0 || source.sending) {
      return;
    }
    source.sending = true;
    long now = System.currentTimeMillis();
    long fence = fenceOf(source);
    SortedMap<Long, List<String>> below = source.settledIds.headMap(fence);
    List<Long> sequences = new ArrayList<>(below.keySet());
    List<String> ids = new ArrayList<>();
    below.values().forEach(ids::addAll);
    sql.advance(source.name, fence, ids).onComplete(done -> {
      source.sending = false;
      source.advancing = false;
      List<Promise<Void>> waiting = new ArrayList<>(source.waitingForAdvance);
      source.waitingForAdvance.clear();
      source.attempts += waiting.size();
      waiting.forEach(Promise::complete);
      source.advanced.complete();
      if (sources.get(source.name) != source) {
        return; // retired meanwhile
      }
      if (done.succeeded()) {
        sequences.forEach(source.settledIds::remove);
        source.lastAdvance = now;
        if (!done.result() && source.resolution == null && !retired) {
          // closed while idle (or paused): resolve now, so the next flush goes straight to the successor
          resolve(source.name).onFailure(e -> LOG.warn("could not resolve the closed flush source {}, will try again: {}",
            source.name, e.toString()));
        }
      }
    });
  }

  /**
   * The journal replay's flushes are all settled: every source but {@code live} (and its successors) is an earlier
   * run's and is never written under again. Its row and ids are deleted now, as a graceful stop deletes its own,
   * rather than kept alive by this process's heartbeat until it stops (a late copy of one of its flushes then finds no
   * row and writes nothing).
   */
  Future<Void> retireAllBut(String live) {
    Set<String> keep = new HashSet<>();
    for (String name = live; name != null && keep.add(name); ) {
      Source source = sources.get(name);
      name = source == null ? null : source.successor;
    }
    List<Future<Void>> deletes = new ArrayList<>();
    for (Source source : new ArrayList<>(sources.values())) {
      if (!keep.contains(source.name) && source.registered && source.resolution == null && source.open.isEmpty()
        && !source.advancing) {
        sources.remove(source.name);
        deletes.add(sql.delete(source.name).onFailure(e -> LOG.warn("could not delete the replayed flush source {} "
          + "(the prune will): {}", source.name, e.toString())));
      }
    }
    return Future.join(deletes).mapEmpty();
  }

  /**
   * At a graceful stop: the row and ids of every source whose flushes are all settled are deleted (a late copy of one of
   * them then finds no row and writes nothing). A source with a flush still open stays, for the prune to close.
   */
  Future<Void> retire() {
    retired = true;
    if (timer >= 0) {
      vertx.cancelTimer(timer);
      timer = -1;
    }
    List<Future<Void>> deletes = new ArrayList<>();
    for (Source source : sources.values()) {
      if (source.registered && source.resolution == null && source.open.isEmpty()) {
        // after an advance due or in flight, not beside it: the delete would wait for the raise's row lock
        Future<Void> quiet = source.advancing ? source.advanced.future() : Future.succeededFuture();
        deletes.add(quiet.compose(v -> sql.delete(source.name)).onFailure(e -> LOG.warn("could not delete flush source {} "
          + "at stop (the prune will close it, then delete it): {}", source.name, e.toString())));
      }
    }
    return Future.join(deletes).mapEmpty();
  }
}
