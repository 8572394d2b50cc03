package io.countergateway.internal.write;

import io.countergateway.internal.time.Timers;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushSourceRow;
import io.countergateway.internal.store.FlushSourceStatements;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * The one owner of the flush sources of one flush writer: names, sequences, fences, and when a source's row may be
 * created or deleted (src/DESIGN.md §4 "Flush sources"). It holds only what is true of a source as a whole; what is
 * true of one flush (its attempts, the id it went on under) is its {@link FlushJob}'s. Why a flush never counts twice:
 * <ol>
 *   <li>A flush id is {@code <source>:<sequence>[.<split path>]}. The <b>live</b> source is minted here, once per
 *   coalescer run, and is the only writer that ever retries its flushes. Its row is created before any of its
 *   flushes is recorded in the journal or attempted ({@link #registered}), so a replay that finds a source without a
 *   row knows it was deleted, never that it was not yet made.</li>
 *   <li>Until a flush is settled its id is never deleted: a retry finds the id of an earlier committed attempt. Once
 *   settled, only a zombie (an earlier attempt reaching the database late) can bring it back. Each source has a row
 *   with a <b>fence</b>; every flush statement takes that row shared and writes only at or above the fence. The fence
 *   is raised past the settled sequences, and once that has committed their ids are deleted, in statements that hold
 *   no source's row (the source's flushes go on meanwhile); a zombie that took the row before the raise finds its id,
 *   one that comes after sees the fence.</li>
 *   <li>A source silent for {@code batching.flushIdRetention} is closed by the prune of any replica and keeps
 *   its ids: from then on nothing of it commits, so the ids are the final word. A writer that finds a source closed
 *   reads them once ({@link #found}): a flush whose id is there had committed; every other one is proven never
 *   committed and goes on under the live source, with a new id recorded in the journal before its first attempt
 *   ({@link FlushLog#replaced}). A closed live source is replaced by a fresh one at once.</li>
 *   <li>A source without a row was closed and deleted (a gateway down longer than two retentions): a flush one of
 *   whose statements was sent and lost its answer — in this run, or for a journal replay in an earlier one, as the
 *   journal's records say; its job knows ({@link FlushJob#mayHaveCommittedUnseen}) — can no longer be resolved, and is <b>outcome unknown</b>: reported, never written again.
 *   Any other flush never reached the database or was refused whole, so it committed nowhere and goes on under the
 *   live source.</li>
 *   <li>A source's row is deleted by this class only once every flush of it is settled (or went on under a live
 *   source) and the journal has forced its record of that ({@link FlushLog#force}): at a graceful stop for the live
 *   sources, after the replay for the sources of an earlier run, once resolved for a closed one. A late copy of one
 *   of their flushes then finds no row and fails. A source nobody deletes is closed by the prune and deleted with its
 *   ids a further retention later.</li>
 * </ol>
 * An idle live source beats its heart (raises its fence to where it is) every heartbeat, a tenth of the retention; a
 * busy one with every advance, about once a second. <b>A source's fence raise and its own attempts never overlap</b>:
 * the database would otherwise make each wait for the other's row lock. An advance that falls due waits until the
 * source's attempts in flight have answered, and attempts that want to go meanwhile wait for the advance (bounded: at
 * most one attempt timeout, then one statement; they go whatever its outcome).
 * <p>Confined to the writer's event loop; time is read from the clock passed in.
 */
final class FlushSources {
  private static final Logger LOG = LoggerFactory.getLogger(FlushSources.class);
  static final long TICK_MS = 1_000;

  /** What a flush's source says of it, for its next attempt. */
  enum Route {
    /** Its source is not known to be closed or gone: the flush is written under its own id. */
    OPEN,
    /** Its id is among the closed source's committed ones: it counted. */
    COMMITTED,
    /** Its source is closed and its id is not there: proven never committed, it goes on under the live source. */
    NOT_COMMITTED,
    /**
     * Its source has no row any more (class comment, 4): it goes on under the live source unless a statement of it
     * was sent and lost its answer ({@link FlushJob#mayHaveCommittedUnseen}), which makes it outcome unknown.
     */
    GONE
  }

  private static final class Source {
    final String name;
    /** A source of an earlier run whose flushes a journal replay writes again: its row is never created here. */
    final boolean inherited;
    /** A live source's row: the INSERT in flight or done; null before it is sent and after it failed. */
    Future<Void> registered;
    boolean rowMade;
    final TreeSet<Long> open = new TreeSet<>();
    long highest = -1;
    final TreeMap<Long, List<String>> settledIds = new TreeMap<>();
    long lastAdvance;
    /** An advance is due or in flight: no attempt of the source starts until it ends. */
    boolean advancing;
    boolean sending;
    int attempts;
    final List<Promise<Void>> waitingForAdvance = new ArrayList<>();
    Promise<Void> advanced = Promise.promise();
    /** Read once the source was found closed or missing: its row as it is then, final. */
    Future<FlushSourceRow> row;
    /** Inherited: replayed flushes not settled yet. */
    int replaying;
    boolean deleting;

    Source(String name, boolean inherited, long now) {
      this.name = name;
      this.inherited = inherited;
      this.lastAdvance = now;
    }

    /** Every sequence below it is settled: the lowest open one, or past the highest when none is open. */
    long fence() {
      return open.isEmpty() ? highest + 1 : open.first();
    }
  }

  private static final Future<Void> DONE = Future.succeededFuture();

  private final Timers timers;
  private final FlushSourceStatements statements;
  private final FlushLog log;
  private final String suffix;
  private final LongSupplier millis;
  private final long heartbeatMs;
  private final long tickMs;
  private final Map<String, Source> sources = new LinkedHashMap<>();
  private Source live;
  private long timer = -1;
  private boolean retired;
  /** How many open flushes of a source were sent and lost their answer (their jobs know): for the log of a gone one. */
  private ToLongFunction<String> sentAndLost = name -> 0;

  /**
   * {@code index}: the coalescer's, kept in every source name it mints ({@code <random>-<index>}, at most 17
   * characters); {@code heartbeatMs}: see {@code BatchingOptions#flushSourceHeartbeatMs}; {@code millis}: the wall
   * clock in milliseconds ({@code System::currentTimeMillis} but in tests); {@code tickMs}: how often advances are
   * considered ({@link #TICK_MS}; a test that ticks by hand makes it long).
   */
  FlushSources(Vertx vertx, FlushSourceStatements statements, FlushLog log, int index, long heartbeatMs,
               LongSupplier millis, long tickMs) {
    this(statements, log, index, heartbeatMs, millis, tickMs, Timers.of(vertx));
  }

  /** {@code timers}: where its ticks are set ({@link Timers#of} but in tests). */
  FlushSources(FlushSourceStatements statements, FlushLog log, int index, long heartbeatMs, LongSupplier millis,
               long tickMs, Timers timers) {
    this.timers = timers;
    this.statements = statements;
    this.log = log;
    this.suffix = "-" + index;
    this.millis = millis;
    this.heartbeatMs = Math.max(TICK_MS, heartbeatMs);
    this.tickMs = tickMs;
    this.live = mint();
  }

  /** A fresh live source: random, so restarts and replicas never share one. */
  private Source mint() {
    Source source = new Source(Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36) + suffix, false,
      millis.getAsLong());
    sources.put(source.name, source);
    return source;
  }

  /** Where the count of a gone source's flushes that can no longer be resolved comes from: the flush jobs. */
  void countSentAndLostBy(ToLongFunction<String> count) {
    this.sentAndLost = count;
  }

  /** The live source's name (for logs and tests). */
  String liveSource() {
    return live.name;
  }

  /** The id of the next flush the coalescer forms: open (the fence never passes it) until {@link #settled}. */
  FlushId nextId() {
    long sequence = ++live.highest;
    live.open.add(sequence);
    return FlushId.formed(live.name, sequence);
  }

  /**
   * A flush of an earlier run that a journal replay writes again: its source is inherited (its row is never created
   * here), and is deleted once its last such flush is settled and durably recorded so.
   */
  void inherit(FlushId id) {
    Source source = sources.computeIfAbsent(id.source(), name -> new Source(name, true, millis.getAsLong()));
    if (source.inherited) {
      source.replaying++;
    }
  }

  /**
   * Completes once the row of {@code id}'s source exists: before a flush of it is recorded in the journal or attempted
   * (class comment, 1). Fails when the database cannot be reached; the caller retries.
   */
  Future<Void> registered(FlushId id) {
    Source source = sources.get(id.source());
    if (source == null || source.inherited || source.rowMade) {
      return DONE;
    }
    if (source.registered != null) {
      return source.registered;
    }
    startTicks();
    Future<Void> inserting = statements.registerSource(source.name);
    source.registered = inserting;
    inserting.onComplete(done -> {
      if (done.succeeded()) {
        source.rowMade = true;
        source.lastAdvance = millis.getAsLong();
      } else if (source.registered == inserting) {
        source.registered = null;
      }
    });
    return inserting;
  }

  /**
   * What {@code id}'s source says of it: open while the source is not known to be closed or missing; else as the
   * source's final row says (class comment, 3 and 4).
   */
  Future<Route> route(FlushId id) {
    Source source = sources.get(id.source());
    if (source == null || source.row == null) {
      return Future.succeededFuture(Route.OPEN);
    }
    return source.row.map(row -> row.committed().contains(id) ? Route.COMMITTED
      : row.missing() ? Route.GONE : Route.NOT_COMMITTED);
  }

  /**
   * An attempt found {@code name} closed or without a row: reads the row once (the final word, class comment 3) and,
   * if it was the live source, mints a fresh one for every flush formed from now on. Fails (and may be tried again)
   * when the database cannot be read.
   */
  Future<Void> found(String name) {
    Source source = sources.get(name);
    if (source == null) {
      return DONE;
    }
    if (source.row != null) {
      return source.row.mapEmpty();
    }
    Future<FlushSourceRow> reading = statements.sourceRow(name).compose(row -> {
      if (!row.missing() && !row.closed()) {
        return Future.failedFuture(new IllegalStateException("flush source " + name + " was reported closed but is open"));
      }
      if (source == live) {
        live = mint();
      }
      source.settledIds.clear();
      report(source, row);
      return Future.succeededFuture(row);
    });
    source.row = reading;
    reading.onFailure(e -> {
      if (source.row == reading) {
        source.row = null;
      }
    });
    return reading.mapEmpty();
  }

  private void report(Source source, FlushSourceRow row) {
    int open = source.inherited ? source.replaying : source.open.size();
    if (row.missing()) {
      long unknown = sentAndLost.applyAsLong(source.name);
      LOG.atError().addKeyValue("event", "flush_source_gone").addKeyValue("source", source.name)
        .addKeyValue("flushes_open", open).addKeyValue("flushes_outcome_unknown", unknown)
        .log("flush source {} has no row any more (closed as dead, then deleted a retention later): {} of its {} open "
            + "flushes can no longer be resolved and are outcome unknown (never written again{}); the others go on "
            + "under {}", source.name, unknown, open,
          source.inherited ? ", their increments may be lost: the gateway was down longer than twice "
            + "batching.flushIdRetention with flushes sent whose answer it never got" : "; their requests get 504",
          live.name);
    } else {
      LOG.atWarn().addKeyValue("event", "flush_source_closed").addKeyValue("source", source.name)
        .addKeyValue("flushes_open", open).addKeyValue("ids_committed", row.committed().size())
        .log("flush source {} was closed as dead (silent longer than batching.flushIdRetention): of its {} open "
          + "flushes, those whose ids it holds had committed, the others go on under {}", source.name, open, live.name);
    }
  }

  /**
   * Before each attempt of a routed flush: no advance of its source is due or in flight. Once this completes the
   * attempt counts as in flight until {@link #attemptEnded}.
   */
  Future<Void> beforeAttempt(Flush target) {
    Source source = sources.get(target.id().source());
    if (source == null || source.inherited) {
      return DONE;
    }
    if (!source.advancing) {
      source.attempts++;
      return DONE;
    }
    Promise<Void> turn = Promise.promise();
    source.waitingForAdvance.add(turn);
    return turn.future();
  }

  /** The attempt {@link #beforeAttempt} let go has its answer (or gave up waiting for one). */
  void attemptEnded(Flush target, FlushJob.Outcome outcome) {
    Source source = sources.get(target.id().source());
    if (source == null || source.inherited) {
      return;
    }
    long sequence = target.id().sequence();
    if (outcome == FlushJob.Outcome.COMMITTED && source.row == null) {
      source.settledIds.computeIfAbsent(sequence, s -> new ArrayList<>()).add(target.id().toString());
    }
    if (source.attempts > 0) {
      source.attempts--;
      advanceIfQuiet(source);
    }
  }

  /**
   * Every request of the flush {@code id} (as formed, or as it went on under a live source) is answered: it is never
   * attempted again. An inherited source whose last replayed flush this was is deleted once the journal forced it.
   */
  void settled(FlushId id) {
    Source source = sources.get(id.source());
    if (source == null) {
      return;
    }
    if (source.inherited) {
      if (--source.replaying == 0) {
        retireResolved(source, "the replay's flushes of it are settled");
      }
      return;
    }
    source.open.remove(id.sequence());
    if (source.row != null && source.open.isEmpty()) {
      retireResolved(source, "found closed, its flushes are settled or went on under a live source");
    }
  }

  /** A source nothing will be written under any more: deleted once the journal forced that (class comment, 5). */
  private void retireResolved(Source source, String why) {
    boolean gone = source.row != null && source.row.succeeded() && source.row.result().missing();
    if (!gone && !retired) {
      deleteWhenDurable(source, why);
    }
  }

  /** Deletes the source's row once the journal forced everything recorded so far (class comment, 5). */
  private Future<Void> deleteWhenDurable(Source source, String why) {
    if (source.deleting) {
      return DONE;
    }
    source.deleting = true;
    Future<Void> quiet = source.advancing ? source.advanced.future() : DONE;
    return quiet.compose(v -> log.force())
      .compose(forced -> statements.deleteSource(source.name))
      .onSuccess(deleted -> sources.remove(source.name))
      .onFailure(e -> {
        source.deleting = false;
        LOG.warn("flush source {} is kept ({}; the prune closes it, then deletes it): {}", source.name, why,
          e.toString());
      });
  }

  private void startTicks() {
    if (timer < 0 && !retired) {
      timer = timers.periodic(tickMs, this::tick);
    }
  }

  /** Marks an advance due on every live source with settled ids below its fence, or whose heartbeat is due. */
  void tick() {
    long now = millis.getAsLong();
    for (Source source : new ArrayList<>(sources.values())) {
      if (source.inherited || !source.rowMade || source.row != null || source.advancing || source.deleting
        || idsBelowFence(source).isEmpty() && now - source.lastAdvance < heartbeatMs) {
        continue;
      }
      source.advancing = true;
      source.advanced = Promise.promise();
      advanceIfQuiet(source);
    }
  }

  private static SortedMap<Long, List<String>> idsBelowFence(Source source) {
    return source.settledIds.headMap(source.fence());
  }

  /** Sends the due advance once no attempt of the source is in flight; the fence and ids are taken as of now. */
  private void advanceIfQuiet(Source source) {
    if (!source.advancing || source.attempts > 0 || source.sending) {
      return;
    }
    source.sending = true;
    long now = millis.getAsLong();
    long fence = source.fence();
    SortedMap<Long, List<String>> settled = new TreeMap<>(idsBelowFence(source));
    statements.raiseFence(source.name, fence).onComplete(done -> {
      source.sending = false;
      source.advancing = false;
      List<Promise<Void>> waiting = new ArrayList<>(source.waitingForAdvance);
      source.waitingForAdvance.clear();
      source.attempts += waiting.size();
      waiting.forEach(Promise::complete);
      source.advanced.complete();
      if (done.succeeded()) {
        settled.keySet().forEach(source.settledIds::remove);
        source.lastAdvance = now;
        if (done.result() && !settled.isEmpty()) {
          deleteSettled(source, settled);
        }
        if (!done.result() && !retired) {
          // closed while idle (or paused): read it now, so the next flush goes straight to a fresh source
          found(source.name).onFailure(e -> LOG.warn("could not read the closed flush source {}, will try again: {}",
            source.name, e.toString()));
        }
      }
    });
  }

  /**
   * The settled ids below the fence just raised, deleted while the source's flushes go on: they hold no row of the
   * source, and until they are gone the fence refuses a late copy of theirs all the same. Ids whose delete failed go
   * with the source's next advance (a live source's only; a closed source keeps its ids).
   */
  private void deleteSettled(Source source, SortedMap<Long, List<String>> settled) {
    List<String> ids = new ArrayList<>();
    settled.values().forEach(ids::addAll);
    statements.deleteSettledIds(ids).onFailure(e -> {
      LOG.warn("could not delete {} settled flush ids of source {}, will try again with its next advance: {}",
        ids.size(), source.name, e.toString());
      if (!source.deleting && source.row == null) {
        source.settledIds.putAll(settled);
      }
    });
  }

  /**
   * At a graceful stop: every live source whose flushes are all settled is deleted once the journal forced their
   * records (a late copy of one of them then finds no row and writes nothing). A source with a flush still open stays,
   * for the prune to close; so does every source when the journal cannot force.
   */
  Future<Void> retire() {
    retired = true;
    if (timer >= 0) {
      timers.cancel(timer);
      timer = -1;
    }
    List<Future<Void>> deletes = new ArrayList<>();
    for (Source source : new ArrayList<>(sources.values())) {
      if (!source.inherited && source.rowMade && source.row == null && source.open.isEmpty()) {
        deletes.add(deleteWhenDurable(source, "stopping").otherwiseEmpty());
      }
    }
    return Future.join(deletes).mapEmpty();
  }
}
