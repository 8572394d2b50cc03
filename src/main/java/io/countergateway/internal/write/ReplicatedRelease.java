package io.countergateway.internal.write;

import io.countergateway.internal.store.ReplicationPosition;
import io.countergateway.internal.time.Timers;
import io.vertx.core.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * {@code database.keepUntilReplicated} (src/DESIGN.md §4 "Replication"): a committed flush job is released — its
 * journal frames freed, its ids settled in their source, whose fence may then pass them — only once every standby
 * streaming from the primary has flushed its commit. Until then it is held, and a failover makes it write again, under
 * the same ids, what the promoted server lacks.
 *
 * <p>Which position a commit has is read without a statement per flush: every {@value #POLL_MS} ms one statement asks
 * the primary for its timeline, its WAL insert position and the lowest position its standbys flushed
 * ({@link ReplicationPosition}). A job settled before that statement was sent committed at or below the insert position
 * it reads, so the job is stamped with it and released once the standbys' lowest flushed position reaches it. Polls
 * never overlap, so stamps only grow on one timeline and jobs are released in order.
 *
 * <p>The rules, each on the side of holding:
 * <ul>
 *   <li>A new timeline (a standby was promoted) releases nothing: every held job is checked again ({@code recheck}):
 *   written again under its ids, it finds them on the promoted server (committed there, nothing written) or commits
 *   now, once; the first poll treats whatever settled before it the same way.</li>
 *   <li>A standby counts once seen streaming on the current timeline; while fewer stream than were seen, nothing is
 *   released (the missing one may be the one promoted).</li>
 *   <li>Without standbys there is nothing to wait for: jobs are released at the next poll.</li>
 *   <li>A failed poll (the primary away) releases nothing.</li>
 *   <li>A job held longer than {@code database.replicationLagMax} makes {@link #lagging()} true: the coalescer refuses
 *   intake 503 then, as with a full journal, and nothing is released or dropped until the standbys catch up.</li>
 * </ul>
 * Confined to the coalescer's event loop.
 */
final class ReplicatedRelease {
  private static final Logger LOG = LoggerFactory.getLogger(ReplicatedRelease.class);
  static final long POLL_MS = 100;

  /** A held job: when it settled, and the insert position of the first poll sent after that (-1 until read). */
  private static final class Held {
    final FlushJob job;
    final long sinceNanos;
    long position = -1;

    Held(FlushJob job, long sinceNanos) {
      this.job = job;
      this.sinceNanos = sinceNanos;
    }
  }

  private final Supplier<Future<ReplicationPosition>> read;
  private final Consumer<FlushJob> release;
  private final Consumer<FlushJob> recheck;
  private final Runnable afterPoll;
  private final Timers timers;
  private final LongSupplier nanoClock;
  private final long lagMaxNanos;
  /** Settled since the last poll was sent: their commits may lie past what it read. */
  private List<Held> unstamped = new ArrayList<>();
  /** Stamped, by position (polls never overlap, so positions only grow). */
  private final ArrayDeque<Held> stamped = new ArrayDeque<>();
  /** The primary's timeline at the last poll; -1 before the first. */
  private long timeline = -1;
  /** The most standbys seen streaming on {@link #timeline}. */
  private int standbysSeen;
  private boolean polling;
  private long timer = -1;
  private long rechecks;
  /** When polls started failing (nanoClock); -1 while the last one answered. */
  private long failingSinceNanos = -1;

  /**
   * {@code read}: one statement on the primary, answered on the coalescer's loop; {@code release}: the job may let go;
   * {@code recheck}: the job must be written again under its ids (it comes back through {@link #hold} once settled);
   * {@code afterPoll}: run after each poll, for the coalescer to end a shed that {@link #lagging()} caused.
   */
  ReplicatedRelease(Supplier<Future<ReplicationPosition>> read, Consumer<FlushJob> release, Consumer<FlushJob> recheck,
                    Runnable afterPoll, Timers timers, LongSupplier nanoClock, long lagMaxMs) {
    this.read = read;
    this.release = release;
    this.recheck = recheck;
    this.afterPoll = afterPoll;
    this.timers = timers;
    this.nanoClock = nanoClock;
    this.lagMaxNanos = TimeUnit.MILLISECONDS.toNanos(lagMaxMs);
  }

  /** A job whose requests are all answered: held until the standbys have its commits. */
  void hold(FlushJob job) {
    job.replicating();
    unstamped.add(new Held(job, nanoClock.getAsLong()));
    if (timer < 0) {
      timer = timers.periodic(POLL_MS, this::poll);
    }
  }

  /** Jobs held now. */
  int held() {
    return unstamped.size() + stamped.size();
  }

  /** Jobs written again after a failover (or a first poll) found a timeline other than their commits'. */
  long rechecks() {
    return rechecks;
  }

  /** Whether a job has waited for the standbys longer than {@code database.replicationLagMax}. */
  boolean lagging() {
    long now = nanoClock.getAsLong();
    return !stamped.isEmpty() && now - stamped.peekFirst().sinceNanos > lagMaxNanos
      || !unstamped.isEmpty() && now - unstamped.get(0).sinceNanos > lagMaxNanos;
  }

  /** How long polls have failed without one answering in between (0 while they answer): the primary is away. */
  long failingForMs() {
    return failingSinceNanos < 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(nanoClock.getAsLong() - failingSinceNanos);
  }

  void poll() {
    if (polling) {
      return;
    }
    if (held() == 0) {
      timers.cancel(timer);
      timer = -1;
      return;
    }
    polling = true;
    List<Held> toStamp = unstamped;
    unstamped = new ArrayList<>();
    read.get().onComplete(answer -> {
      polling = false;
      if (answer.failed()) {
        // the primary is away: nothing is known of any commit, so every job waits for a poll that answers
        toStamp.addAll(unstamped);
        unstamped = toStamp;
        if (failingSinceNanos < 0) {
          failingSinceNanos = nanoClock.getAsLong();
        }
      } else {
        failingSinceNanos = -1;
        read(answer.result(), toStamp);
      }
      afterPoll.run();
    });
  }

  private void read(ReplicationPosition at, List<Held> toStamp) {
    if (at.timeline() != timeline) {
      boolean first = timeline < 0;
      timeline = at.timeline();
      standbysSeen = at.standbys();
      List<Held> again = new ArrayList<>(stamped);
      stamped.clear();
      again.addAll(toStamp);
      if (!first) {
        LOG.atWarn().addKeyValue("event", "replication_timeline_changed").addKeyValue("timeline", timeline)
          .addKeyValue("flushes", again.size())
          .log("the primary is on a new timeline ({}): a standby was promoted; {} committed flush(es) the standbys "
            + "had not confirmed are written again under their own ids, counted once whether it has them or not",
            timeline, again.size());
      }
      rechecks += again.size();
      again.forEach(held -> recheck.accept(held.job));
      return;
    }
    standbysSeen = Math.max(standbysSeen, at.standbys());
    for (Held held : toStamp) {
      held.position = at.insertLsn();
      stamped.addLast(held);
    }
    if (at.standbys() < standbysSeen) {
      return;
    }
    long replicated = at.standbys() == 0 ? Long.MAX_VALUE : at.minFlushedLsn();
    while (!stamped.isEmpty() && stamped.peekFirst().position <= replicated) {
      release.accept(stamped.pollFirst().job);
    }
  }

  /** Stops polling; what is held stays held (the journal keeps its frames for the next start). */
  void stop() {
    if (timer >= 0) {
      timers.cancel(timer);
      timer = -1;
    }
  }
}
