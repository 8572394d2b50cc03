package io.countergateway.internal.write.journal;

import io.countergateway.internal.time.Timers;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the journal's next segments come from, on the event loop (src/DESIGN.md §4 "Journal"): the file worker makes
 * them ahead of need, so the event loop never waits for a file to be made.
 *
 * <p><b>The reserve.</b> Beside the next segment (the spare), two segments are kept unused. The reserve is taken only
 * when the spare cannot be made (a full disk), and then holds the frames that must go on: the flushes formed, split
 * and settled while the database drains what the journal holds, which is what frees its segments. It is sized for the
 * drain to free the oldest segments before it is full (see {@code JournalRecovery.reserveBytes}); while frames wait
 * on a full disk, the next spare is asked for before the reserve is made again, since what the drain frees comes a
 * segment at a time. The restart room is never taken: the next start deletes it, as every segment that holds no
 * frame, before it writes its snapshot, so a start on a full disk has room for it. Accepted increments are refused
 * (503 {@code journal_no_room}) while either is missing, so they never take the room the bookkeeping needs; both are
 * made again as soon as there is room and no frame waits. A spare made for smaller frames is discarded for a larger
 * one. Segments grow from 256 KiB, each next spare twice the last made, up to {@code journal.segmentBytes}; a failed
 * attempt does not grow them.
 */
final class Segments {
  private static final Logger LOG = LoggerFactory.getLogger(Segments.class);
  static final long RETRY_MS = 1_000;
  static final long WAITING_RETRY_MS = 100;

  private final Timers timers;
  private final Context context;
  private final WorkerExecutor worker;
  private final SegmentFiles files;
  private final long maxCapacity;
  private final int reserveCapacity;
  private final int restartRoomCapacity;
  /** Hears when a segment was made or could not be: waiting frames may go, and the room may have changed. */
  private final Runnable changed;
  private long nextSegno;
  private long nextCapacity;
  private Segment spare;
  private Segment reserve;
  private Segment restartRoom;
  /** The frame size the next spare must take. */
  private long wanted;
  private boolean making;
  /** Completes once the segment asked for last is taken in (made or not). */
  private Future<Void> made = Future.succeededFuture();
  /** The last attempt to make a segment failed. */
  private boolean noRoom;
  private long retryTimer = -1;
  private boolean closed;
  private final List<Segment> madeAfterClose = new ArrayList<>();

  /** The kinds of segment made: see the class comment. */
  private enum Kind { SPARE, RESERVE, RESTART_ROOM }

  Segments(Vertx vertx, Timers timers, WorkerExecutor worker, SegmentFiles files, long maxCapacity, int reserveCapacity,
           int restartRoomCapacity, long nextSegno, Segment reserve, Segment restartRoom, Runnable changed) {
    this.timers = timers;
    this.context = vertx.getOrCreateContext();
    this.worker = worker;
    this.files = files;
    this.maxCapacity = maxCapacity;
    this.reserveCapacity = reserveCapacity;
    this.restartRoomCapacity = restartRoomCapacity;
    this.nextSegno = nextSegno;
    this.reserve = reserve;
    this.restartRoom = restartRoom;
    this.noRoom = reserve == null || restartRoom == null;
    this.changed = changed;
    this.nextCapacity = Math.min(maxCapacity, JournalRecovery.FIRST_SEGMENT_BYTES);
  }

  /** Both the reserve and the restart room are there. */
  boolean hasReserve() {
    return reserve != null && restartRoom != null;
  }

  /** The last attempt to make a segment failed (a full disk, most likely); cleared by the next one that succeeds. */
  boolean noRoom() {
    return noRoom;
  }

  /**
   * The segment a frame of {@code frameBytes} goes into once the current one is full: the spare, or — when no spare
   * could be made — the reserve. Null when neither is there or takes it: the frame waits, and one is asked for.
   */
  Segment next(long frameBytes) {
    if (spare != null && spare.fits(frameBytes)) {
      Segment next = spare;
      spare = null;
      prepare(0);
      return next;
    }
    if (noRoom && reserve != null && reserve.fits(frameBytes)) {
      Segment next = reserve;
      reserve = null;
      wanted = 0;
      LOG.atWarn().addKeyValue("event", "journal_reserve_taken").addKeyValue("file", next.path.toString())
        .log("no journal segment could be made; the reserve segment takes what must be recorded to drain the journal, "
          + "and accepted increments are refused until there is room again");
      prepare(0);
      return next;
    }
    prepare(frameBytes);
    return null;
  }

  /**
   * Asks the file worker for what is missing: the reserve first, then a spare that takes a frame of {@code frameBytes}
   * — except on a full disk while frames wait, when the spare they need comes first.
   */
  void prepare(long frameBytes) {
    wanted = Math.max(wanted, frameBytes);
    if (making || closed) {
      return;
    }
    boolean spareMissing = spare == null || !spare.fits(wanted);
    if (noRoom && wanted > 0 && spareMissing) {
      makeSpare();
    } else if (reserve == null) {
      make(Kind.RESERVE, reserveCapacity);
    } else if (restartRoom == null) {
      make(Kind.RESTART_ROOM, restartRoomCapacity);
    } else if (spareMissing) {
      makeSpare();
    }
  }

  private void makeSpare() {
    if (spare != null) {
      discard(spare); // made for smaller frames
      spare = null;
    }
    // on a full disk, no more than the waiting frames need: what the drain frees comes a segment at a time
    long capacity = Math.max(noRoom ? Math.min(nextCapacity, JournalRecovery.FIRST_SEGMENT_BYTES) : nextCapacity,
      Frames.FILE_HEADER_BYTES + wanted);
    if (capacity > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException("a journal frame of " + wanted + " bytes is larger than a segment can be");
    }
    make(Kind.SPARE, capacity);
  }

  private void make(Kind kind, long capacity) {
    making = true;
    long segno = nextSegno++;
    Promise<Void> takenIn = Promise.promise();
    made = takenIn.future();
    // taken in on a later turn of the event loop, never inside this call: a file made before the handler is set
    // would run it at once, in the middle of the roll that asked for it
    worker.executeBlocking(() -> files.create(segno, (int) capacity), false)
      .onComplete(result -> context.runOnContext(v -> {
        takeIn(kind, capacity, segno, result);
        takenIn.complete();
      }));
  }

  /** A segment asked for was made, or could not be. */
  private void takeIn(Kind kind, long capacity, long segno, AsyncResult<Segment> result) {
    making = false;
    if (closed) {
      if (result.succeeded()) {
        madeAfterClose.add(result.result()); // the close deletes it
      }
      return;
    }
    if (result.failed()) {
      if (!noRoom) {
        LOG.atError().addKeyValue("event", "journal_segment_failed").addKeyValue("file", files.path(segno).toString())
          .log("cannot make the next journal segment ({}); accepted increments are refused until it can be made; "
            + "retrying every second", result.cause().toString());
      }
      noRoom = true;
      if (kind != Kind.SPARE && wanted > 0) {
        prepare(0); // frames wait: the spare they need may fit where the reserve did not
      } else {
        // frames waiting on a full disk are the drain's records: asked for again as soon as a segment may be freed
        retryTimer = timers.schedule(wanted > 0 ? WAITING_RETRY_MS : RETRY_MS, () -> {
          retryTimer = -1;
          prepare(0);
        });
      }
    } else {
      if (noRoom) {
        LOG.atInfo().addKeyValue("event", "journal_room").log("the journal can make its segments again");
      }
      noRoom = false;
      switch (kind) {
        case RESERVE -> reserve = result.result();
        case RESTART_ROOM -> restartRoom = result.result();
        default -> {
          spare = result.result();
          wanted = 0;
          nextCapacity = Math.min(maxCapacity, Math.max(nextCapacity, capacity) * 2);
        }
      }
      prepare(0);
    }
    changed.run();
  }

  private void discard(Segment segment) {
    worker.executeBlocking(() -> {
      files.discard(segment);
      return null;
    }, false).onFailure(e -> LOG.warn("could not delete the unused journal segment {}: {}", segment.path, e.toString()));
  }

  /** Deletes segments the journal no longer needs, then syncs the directory, on the file worker. */
  void delete(List<Path> gone) {
    if (gone.isEmpty()) {
      return;
    }
    worker.executeBlocking(() -> {
      files.delete(gone);
      return null;
    }, false).onFailure(e -> LOG.warn("could not delete journal segments {}: {}", gone, e.toString()));
  }

  /**
   * No segment is made any more; completes, once the file worker is done with what it was asked, with the segments
   * made and never used (the close deletes them).
   */
  Future<List<Segment>> close() {
    closed = true;
    timers.cancel(retryTimer);
    // a segment being made is waited for, so it is deleted below rather than left behind by a file made after the close
    return made.transform(done -> worker.executeBlocking(() -> null, false)).transform(idle -> {
      List<Segment> unused = new ArrayList<>(madeAfterClose);
      if (spare != null) {
        unused.add(spare);
      }
      for (Segment kept : new Segment[] {reserve, restartRoom}) {
        if (kept != null) {
          unused.add(kept);
        }
      }
      spare = null;
      reserve = null;
      restartRoom = null;
      return Future.succeededFuture(unused);
    });
  }
}
