package io.countergateway.internal.write.journal;

import io.countergateway.config.ConfigException;
import io.countergateway.config.JournalOptions;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.time.Timers;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;

/**
 * The write-ahead journal of one ingest verticle, as its event loop sees it (src/DESIGN.md §4 "Journal"): every
 * increment answered 202/204 is appended here before the answer, with the flushes formed from it and their
 * settlement, so that a restart replays exactly what was held.
 *
 * <p>The event loop encodes each record as one frame and hands it to the {@link JournalWriter}, which writes and
 * forces on its own thread (group commit); it never makes a system call. {@link Segments} makes the segment files
 * ahead of need on the file worker, {@link JournalRecovery} replays what an earlier run left before the journal
 * takes anything, and every file operation goes through {@link JournalFiles}.
 *
 * <p><b>Positions</b> (LSNs) are byte offsets of record payloads in this run's stream. The coalescer tells, through
 * {@link #neededBy}, the lowest position it still needs (its pending counters' and in-flight flushes' first journaled
 * increment); a segment wholly below it is deleted, about once a second, and the directory synced after.
 *
 * <p><b>Answers.</b> {@link #committed()} completes once everything appended is forced ({@code fsync: always}) or
 * written ({@code everyMs}, {@code off}); a formed flush and a split are forced before they count, whatever the policy.
 * A write or force that fails fails every answer it covered, and the journal answers nothing more.
 *
 * <p>Confined to the verticle's event loop.
 */
public final class Journal {
  private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
  private static final long RELEASE_INTERVAL_MS = 1_000;
  /** Past the bound, what is held is counted (an O(pending) walk) at most this often. */
  private static final long HELD_CHECK_NANOS = 100_000_000L;
  private static final Future<Void> DONE = Future.succeededFuture();
  private static final byte[] NO_ID = new byte[0];

  /**
   * What a replay hands the coalescer: deltas to hold again, flushes to write again under their own ids (among them
   * any the replay rebuilt from the deltas pending before damage that hid their record; see {@link ReplayReport}),
   * those of them none of whose attempts ever left the process ({@code neverSent}: they never reached the database),
   * and what the replay found.
   */
  public record Recovered(Map<CounterKey, Long> pending, List<Flush> unsettled, Set<FlushId> neverSent,
                          ReplayReport replay) {
  }

  /** What waits for a position: to be written, or forced. */
  private record Waiter(long lsn, Promise<Void> promise) {
  }

  /** A frame with no room yet: it waits for the next segment, in order. */
  private record Unplaced(byte kind, byte[] id, byte[] payload) {
    long frameBytes() {
      return Frames.frameBytes(id.length, payload.length);
    }
  }

  private record Checkpoint(long lsn, long millis) {
  }

  private final Timers timers;
  private final Context context;
  private final Thread eventLoop;
  private final JournalOptions options;
  private final boolean always;
  private final Path dir;
  private final SegmentFiles files;
  private final WorkerExecutor fileWorker;
  private final WorkerExecutor writerThread;
  private final Segments segments;
  private final JournalWriter writer;
  private final Consumer<Boolean> fullChanged;
  private final Recovered recovered;
  private final JournalTarget writtenFor;

  private final JournalRecords.Out buffer = new JournalRecords.Out(64 * 1024);
  private final byte[] header = new byte[Frames.FRAME_HEADER_BYTES + Frames.MAX_ID_BYTES];
  private final CRC32C crc = new CRC32C();
  private long appendedLsn;
  /** Everything below is queued for the writer (or written). */
  private long queuedLsn;
  /** Everything below is written, as the writer last told. */
  private long writtenLsn;
  /** Everything below is forced, as the writer last told. */
  private long durableLsn;
  private int nextSeq = 1;
  private int flushFrames;
  private Segment current;
  private final ArrayDeque<Segment> live = new ArrayDeque<>();
  private final ArrayDeque<Unplaced> unplaced = new ArrayDeque<>();
  private long unplacedBytes;
  private final ArrayDeque<Waiter> writtenWaiters = new ArrayDeque<>();
  private final ArrayDeque<Waiter> durableWaiters = new ArrayDeque<>();
  private final Set<String> journaledFlushes = new HashSet<>();
  private final Map<String, List<String>> replacedBy = new HashMap<>();
  /** Journaled flushes whose last ATTEMPTS record says none of their attempts left the process. */
  private final Set<String> recordedNeverSent = new HashSet<>();
  /** Journaled flushes a statement of which left the process, in this run or possibly in an earlier one. */
  private final Set<String> sentOnce = new HashSet<>();
  private final ArrayDeque<Checkpoint> checkpoints = new ArrayDeque<>();
  private LongSupplier needed;
  private boolean overBound;
  private boolean full;
  private long heldBytes;
  private long heldCheckedAt;
  private boolean failed;
  private final Promise<Throwable> failure = Promise.promise();
  /** {@code journal.dir} no longer names the files written: what they hold lives on only until they are closed. */
  private boolean unreachable;
  private boolean closed;
  private Future<Void> closing;
  private long releaseTimer = -1;
  private long fsyncTimer = -1;

  // read by the scrape thread
  private volatile long liveBytes;
  private volatile long oldestMillis;
  private volatile long appendedTotal;

  private Journal(Vertx vertx, Timers timers, JournalOptions options, SegmentFiles files, WorkerExecutor fileWorker,
                  WorkerExecutor writerThread, Consumer<Boolean> fullChanged, JournalRecovery.Result start) {
    this.timers = timers;
    this.context = vertx.getOrCreateContext();
    this.heldCheckedAt = timers.nanoTime() - HELD_CHECK_NANOS - 1; // the first check counts
    this.eventLoop = Thread.currentThread();
    this.options = options;
    this.always = options.getFsync() == JournalOptions.Fsync.ALWAYS;
    this.dir = files.dir;
    this.files = files;
    this.fileWorker = fileWorker;
    this.writerThread = writerThread;
    this.fullChanged = fullChanged;
    this.recovered = start.recovered();
    this.writtenFor = start.writtenFor();
    this.current = start.current();
    current.startLsn = 0;
    current.endLsn = start.snapshotBytes();
    live.add(current);
    appendedLsn = queuedLsn = writtenLsn = durableLsn = start.snapshotBytes();
    appendedTotal = appendedLsn;
    liveBytes = appendedLsn;
    needed = () -> appendedLsn;
    for (Flush flush : recovered.unsettled()) {
      String id = flush.id().toString();
      journaledFlushes.add(id);
      (recovered.neverSent().contains(flush.id()) ? recordedNeverSent : sentOnce).add(id);
    }
    this.writer = new JournalWriter(writerThread, files.files, context, always, new JournalWriter.Listener() {
      @Override
      public void progress(long written, long forced) {
        Journal.this.progress(written, forced);
      }

      @Override
      public void failed(Throwable cause) {
        fail(cause);
      }

      @Override
      public void unreachable(Path file) {
        Journal.this.unreachable(file);
      }
    });
    this.segments = new Segments(vertx, timers, fileWorker, files, options.getSegmentBytes(),
      JournalRecovery.reserveBytes(options), JournalRecovery.restartRoomBytes(options), start.nextSegno(),
      start.reserve(), start.restartRoom(), this::segmentsChanged);
    checkpoints.addLast(new Checkpoint(appendedLsn, timers.currentTimeMillis()));
    releaseTimer = timers.periodic(RELEASE_INTERVAL_MS, this::release);
    if (options.getFsync() == JournalOptions.Fsync.EVERY_MS) {
      fsyncTimer = timers.periodic(options.getFsyncIntervalMs(), this::askForce);
    }
    segments.prepare(0);
    updateFull();
  }

  /**
   * Opens the journal of ingest verticle {@code index} of {@code instances}, on that verticle's event loop, for
   * {@code target} (the database, the counters table, the namespaces' windows): replays the streams it inherits (see
   * {@link JournalRecovery}), refusing work held for another target (see {@link JournalTarget}); {@link #recovered()}
   * then tells the coalescer what to hold and resolve. {@code fullChanged} hears when the journal starts and stops
   * refusing accepted increments.
   */
  public static Future<Journal> open(Vertx vertx, JournalOptions options, JournalTarget target, int index,
                                     int instances, Consumer<Boolean> fullChanged) {
    return open(vertx, options, JournalFiles.disk(), target, index, instances, fullChanged);
  }

  /** For the counters table {@code table} only: the database and the namespaces are not checked. */
  public static Future<Journal> open(Vertx vertx, JournalOptions options, String table, int index, int instances,
                                     Consumer<Boolean> fullChanged) {
    return open(vertx, options, JournalFiles.disk(), JournalTarget.tableOnly(table), index, instances, fullChanged);
  }

  /** {@link #open(Vertx, JournalOptions, String, int, int, Consumer)} on the file operations {@code files}. */
  public static Future<Journal> open(Vertx vertx, JournalOptions options, JournalFiles files, String table, int index,
                                     int instances, Consumer<Boolean> fullChanged) {
    return open(vertx, options, files, JournalTarget.tableOnly(table), index, instances, fullChanged);
  }

  /** {@link #open(Vertx, JournalOptions, JournalTarget, int, int, Consumer)} on the file operations {@code files}. */
  public static Future<Journal> open(Vertx vertx, JournalOptions options, JournalFiles files, JournalTarget target,
                                     int index, int instances, Consumer<Boolean> fullChanged) {
    return open(vertx, Timers.of(vertx), options, files, target, index, instances, fullChanged);
  }

  /**
   * {@link #open(Vertx, JournalOptions, JournalFiles, JournalTarget, int, int, Consumer)} on {@code timers}: the group
   * fsync of {@code fsync: everyMs}, the release of what is committed (and the check that {@code journal.dir} still
   * names the files) every second, the retry of a segment that could not be made, and the age of what is held.
   */
  public static Future<Journal> open(Vertx vertx, Timers timers, JournalOptions options, JournalFiles files,
                                     JournalTarget target, int index, int instances, Consumer<Boolean> fullChanged) {
    // one thread each, so each runs its tasks in the order given; they are submitted unordered because Vert.x orders
    // "ordered" tasks per calling context, across executors: the writer's passes would wait behind a segment's making
    String name = "journal-" + index + "-" + Integer.toHexString(System.identityHashCode(new Object()));
    WorkerExecutor fileWorker = vertx.createSharedWorkerExecutor(name, 1, 5, TimeUnit.MINUTES);
    WorkerExecutor writerThread = vertx.createSharedWorkerExecutor(name + "-writer", 1, 5, TimeUnit.MINUTES);
    SegmentFiles segmentFiles = new SegmentFiles(files, Path.of(options.getDir()).toAbsolutePath().normalize(), index,
      target.table());
    return fileWorker.<JournalRecovery.Result>executeBlocking(
        () -> JournalRecovery.recover(segmentFiles, options, target, instances), false)
      .map(start -> new Journal(vertx, timers, options, segmentFiles, fileWorker, writerThread, fullChanged, start))
      .onFailure(e -> {
        fileWorker.close();
        writerThread.close();
      });
  }

  /**
   * With {@code journal.enabled: false}, a journal directory that still holds segments is refused: they hold increments
   * answered 202/204 that nothing would write. Blocking; run it off the event loop.
   */
  public static void refuseIfHeld(JournalOptions options) {
    Path dir = Path.of(options.getDir()).toAbsolutePath().normalize();
    if (options.isEnabled() || !Files.isDirectory(dir)) {
      return;
    }
    long held;
    try {
      held = new SegmentFiles(JournalFiles.disk(), dir, 0, "").listed().stream().filter(file -> !file.temporary())
        .count();
    } catch (java.io.IOException e) {
      throw new ConfigException(JournalOptions.DIR.name(), "cannot be read (" + e + ")");
    }
    if (held > 0) {
      throw new ConfigException(JournalOptions.ENABLED.name(), "is false, but " + JournalOptions.DIR.name() + " ("
        + dir + ") holds " + held + " journal segments of accepted increments not yet written: start once with "
        + JournalOptions.ENABLED.name() + ": true so the replay writes them, or delete the journal-*.seg files there "
        + "to give them up");
    }
  }

  /** Measurements, once the meter registry is known; the fsync timer is recorded by the writer. */
  public void registerMetrics(MeterRegistry registry, Tags tags) {
    Gauge.builder("gateway.journal.bytes", this, j -> j.liveBytes).tags(tags).baseUnit("bytes")
      .description("bytes of journal segments still held (deleted once every increment in them is committed)")
      .register(registry);
    Gauge.builder("gateway.journal.oldest.age", this, j -> j.oldestMillis == 0 ? 0
        : Math.max(0, j.timers.currentTimeMillis() - j.oldestMillis) / 1000.0).tags(tags).baseUnit("seconds")
      .description("age of the oldest journaled increment not yet in a committed flush (1 s resolution)")
      .register(registry);
    FunctionCounter.builder("gateway.journal.appended", this, j -> j.appendedTotal).tags(tags).baseUnit("bytes")
      .description("bytes appended to the journal").register(registry);
    writer.fsyncLatency(Timer.builder("gateway.journal.fsync.duration").tags(tags)
      .description("one journal fsync (group commit: one covers every increment appended before it)")
      .publishPercentiles(0.5, 0.9, 0.99, 0.999).register(registry));
  }

  /** What the replay found; the coalescer takes it once, before the verticle listens. */
  public Recovered recovered() {
    return recovered;
  }

  /**
   * What this run's work is for: the configured target, but while the database has not answered, the database that
   * the carried-over work was written for (it must prove to be that one before anything is written to it).
   */
  public JournalTarget writtenFor() {
    return writtenFor;
  }

  /** The coalescer's lowest needed position (see the class comment); segments wholly below it are deleted. */
  public void neededBy(LongSupplier lowestNeeded) {
    this.needed = lowestNeeded;
  }

  /** The position the next record will have: everything held is at or above what the coalescer reports. */
  public long position() {
    return appendedLsn;
  }

  // ---- appending ----

  /**
   * Before taking increments of about {@code bytes}: 503 (nothing taken) when the journal cannot write, holds its
   * maximum, or has no room: no reserve segment (a full disk), or no next segment for them.
   */
  public void checkRoom(long bytes) {
    checkContext();
    if (failed || closed || unreachable) {
      throw ApiError.unavailable("journal_unavailable", "the journal cannot be written; accepted increments are refused "
        + "(ack=commit still works); retry shortly");
    }
    // the files' bytes bound what is held from above; only past the bound is what is held counted (an O(pending)
    // walk, so at most every 100 ms)
    if (appendedLsn - oldestStart() + bytes > options.getMaxBytes()) {
      long now = timers.nanoTime();
      if (now - heldCheckedAt > HELD_CHECK_NANOS) {
        heldCheckedAt = now;
        heldBytes = appendedLsn - Math.min(needed.getAsLong(), appendedLsn);
      }
      if (heldBytes + bytes > options.getMaxBytes()) {
        overBound = true;
        updateFull();
        throw ApiError.unavailable("journal_full", "the journal holds journal.maxBytes of increments not yet written "
          + "to the database; retry shortly");
      }
    }
    // an increment never takes the room the bookkeeping needs: none while the reserve is missing, none that would
    // wait for a segment that cannot be made, and not too many waiting for one that is being made
    long frame = Frames.frameBytes(0, bytes);
    if (!segments.hasReserve() || segments.noRoom() && (!unplaced.isEmpty() || !current.fits(frame))
      || unplacedBytes + frame > options.getSegmentBytes() / 2) {
      throw ApiError.unavailable("journal_no_room", "the journal cannot make its next segment (is its disk full?); "
        + "accepted increments are refused until it can; retry shortly");
    }
  }

  /**
   * The most the rows of one flush may take in its record ({@link JournalRecords#rowBytesAtMost} each): a flush
   * formed within it always finds room, even in the reserve on a full disk.
   */
  public int flushRecordBytes() {
    return JournalRecovery.flushRecordBytes(options) - 2 * Frames.MAX_ID_BYTES - 64;
  }

  /** Appends one accepted increment; returns its position. */
  public long appendIncrement(Increment increment) {
    long lsn = appendedLsn;
    JournalRecords.increment(buffer, increment);
    place(JournalRecords.INCREMENTS, NO_ID);
    return lsn;
  }

  /** Appends the accepted increments of one request; returns the position of their record. */
  public long appendIncrements(List<Increment> increments) {
    long lsn = appendedLsn;
    JournalRecords.increments(buffer, increments);
    place(JournalRecords.INCREMENTS, NO_ID);
    return lsn;
  }

  /**
   * Completes once everything appended so far may be answered: forced under {@code always}, written under
   * {@code everyMs} and {@code off}. Fails when the journal could not keep it, and once the journal failed or closed.
   */
  public Future<Void> committed() {
    if (failed || unreachable) {
      return Future.failedFuture(unavailable());
    }
    if (always ? durableLsn >= appendedLsn : writtenLsn >= appendedLsn) {
      return DONE;
    }
    if (closed) {
      return Future.failedFuture(new IllegalStateException("the journal is closed"));
    }
    // a pass that found the directory gone tells so before its progress: what it wrote is answered as not kept
    return (always ? durable(appendedLsn) : written(appendedLsn)).compose(written -> unreachable
      ? Future.failedFuture(unavailable()) : DONE);
  }

  /**
   * Completes once everything appended so far is forced, whatever the policy: the write side waits for it before it
   * deletes what a replay would need (a flush source's row may go only once every flush of it is durably settled).
   */
  public Future<Void> force() {
    if (failed) {
      return Future.failedFuture(unavailable());
    }
    if (durableLsn >= appendedLsn) {
      return DONE;
    }
    if (closed) {
      return Future.failedFuture(new IllegalStateException("the journal is closed"));
    }
    return durable(appendedLsn);
  }

  /** A write or a force failed: nothing appended from now on is kept (see {@link #fail}). */
  public boolean failed() {
    return failed;
  }

  /**
   * Completes with the I/O error once a write or force failed: from then on only a restart (its replay) writes what
   * this journal holds, so whoever runs the gateway must stop it once it drained and start it again.
   */
  public Future<Throwable> failure() {
    return failure.future();
  }

  /**
   * A flush formed from journaled increments: recorded and forced before its first attempt (whatever the policy), so
   * that a replay resolves it by its id instead of taking its increments again. The journaled counters that summed to
   * 0 ({@code zeroKeys}) are taken with it. Fails when the journal cannot keep the record: the flush must then not be
   * attempted (a restart replays what it holds).
   */
  public Future<Void> formed(Flush flush, List<CounterKey> zeroKeys) {
    if (closed || failed) {
      return Future.failedFuture("the journal cannot record the flush " + flush.id());
    }
    String id = flush.id().toString();
    JournalRecords.formed(buffer, id, flush.rows(), zeroKeys);
    place(JournalRecords.FORMED, idBytes(id));
    if (copies()) {
      JournalRecords.formed(buffer, id, flush.rows(), zeroKeys);
      place(Frames.COPY, idBytes(id));
    }
    journaledFlushes.add(id);
    return durable(appendedLsn);
  }

  /**
   * A flush record is written twice (the copy guards it against one damaged frame) but while the reserve or the restart
   * room is missing: on a full disk, what the drain records must take less room than the increments it frees, so
   * that draining always makes room (see {@code JournalRecovery.reserveBytes}).
   */
  private boolean copies() {
    return segments.hasReserve();
  }

  /** Journaled counters that summed to 0 and were taken with nothing to write. */
  public void taken(List<CounterKey> zeroKeys) {
    if (closed || failed) {
      return;
    }
    JournalRecords.formed(buffer, "", List.of(), zeroKeys);
    place(Frames.TAKEN, NO_ID);
  }

  /**
   * A journaled flush proven uncommitted is replaced by {@code children} (a split): recorded and forced before any
   * child is attempted. A flush never journaled (commit requests only) needs no record. Fails as {@link #formed}.
   */
  public Future<Void> replaced(Flush parent, List<Flush> children) {
    if (!journaledFlushes.contains(parent.id().toString())) {
      return DONE;
    }
    if (closed || failed) {
      return Future.failedFuture("the journal cannot record the split of " + parent.id());
    }
    String parentId = parent.id().toString();
    JournalRecords.replaced(buffer, parentId, children);
    place(JournalRecords.REPLACED, idBytes(parentId));
    if (copies()) {
      JournalRecords.replaced(buffer, parentId, children);
      place(Frames.COPY, idBytes(parentId));
    }
    List<String> ids = new ArrayList<>();
    for (Flush child : children) {
      journaledFlushes.add(child.id().toString());
      ids.add(child.id().toString());
    }
    replacedBy.computeIfAbsent(parent.id().toString(), p -> new ArrayList<>()).addAll(ids);
    return durable(appendedLsn);
  }

  /**
   * The flush formed under {@code id} is settled for good (committed, or refused). No need to wait: until this is on
   * disk a replay would write the flush again under its id, which finds it committed (or behind its source's fence);
   * {@link #force()} waits for it where that matters.
   */
  public void settled(String id) {
    if (!forget(id) || closed || failed) {
      return;
    }
    JournalRecords.settled(buffer, id);
    place(JournalRecords.SETTLED, NO_ID);
  }

  /**
   * A statement of the journaled flush {@code id} is about to leave the process: completes once the journal says so
   * on disk, if it last recorded that none had (a replay would otherwise take the flush for one that never reached
   * the database); at once otherwise, since a flush without that record is taken for one that may have been sent.
   * Fails when the record is needed and cannot be kept: the statement must then not be sent.
   */
  public Future<Void> beforeSend(String id) {
    if (!journaledFlushes.contains(id)) {
      return DONE;
    }
    if (!recordedNeverSent.contains(id)) {
      sentOnce.add(id);
      return DONE;
    }
    if (closed || failed) {
      return Future.failedFuture("the journal cannot record that flush " + id + " is being sent");
    }
    recordedNeverSent.remove(id);
    sentOnce.add(id);
    JournalRecords.attempts(buffer, id, true);
    place(JournalRecords.ATTEMPTS, NO_ID);
    return durable(appendedLsn);
  }

  /**
   * An attempt of the journaled flush {@code id} failed before its statement left the process: when no statement of
   * it ever did, the journal records that it never reached the database, so a replay after a long outage writes it
   * again instead of taking it for one whose outcome is unknown. Not forced: a record lost with a crash only leaves
   * the conservative reading (may have been sent).
   */
  public void notSent(String id) {
    if (!journaledFlushes.contains(id) || sentOnce.contains(id) || recordedNeverSent.contains(id) || closed
      || failed) {
      return;
    }
    recordedNeverSent.add(id);
    JournalRecords.attempts(buffer, id, false);
    place(JournalRecords.ATTEMPTS, NO_ID);
  }

  private boolean forget(String id) {
    recordedNeverSent.remove(id);
    sentOnce.remove(id);
    boolean known = journaledFlushes.remove(id);
    List<String> children = replacedBy.remove(id);
    if (children != null) {
      children.forEach(this::forget);
    }
    return known;
  }

  private static byte[] idBytes(String id) {
    byte[] utf8 = id.getBytes(StandardCharsets.UTF_8);
    if (utf8.length > Frames.MAX_ID_BYTES) {
      throw new IllegalArgumentException("a flush id longer than " + Frames.MAX_ID_BYTES + " bytes: " + id);
    }
    return utf8;
  }

  /**
   * Forces what is appended and closes the files, each cut to what it holds. With {@code nothingHeld} (a drain
   * wrote everything) the segments are deleted: a restart has nothing to replay.
   */
  public Future<Void> close(boolean nothingHeld) {
    if (closing != null) {
      return closing;
    }
    // what is queued is written and forced by the writer's next pass (frames still waiting for room are not: their
    // answers fail below); a waiter on the queued position would sit behind those frames' own waiters
    askForce();
    closing = writer.idle().transform(forced -> {
      closed = true;
      timers.cancel(releaseTimer);
      timers.cancel(fsyncTimer);
      failWaiters(new IllegalStateException("the journal is closed"));
      return segments.close();
    }).compose(unused -> {
      List<Segment> held = List.copyOf(live);
      boolean delete = nothingHeld && !failed;
      boolean directoryGone = unreachable;
      return fileWorker.<Void>executeBlocking(() -> {
        files.close(held, unused, delete, directoryGone);
        return null;
      }, false);
    }).eventually(() -> {
      writerThread.close();
      return fileWorker.close();
    });
    return closing;
  }

  // ---- placing frames ----

  /** Queues the record in the buffer as one frame for the writer, or behind the frames waiting for room. */
  private void place(byte kind, byte[] id) {
    int length = buffer.length();
    appendedLsn += length;
    appendedTotal = appendedLsn;
    if (failed || closed) {
      buffer.reset(); // nothing more is written; what waits on it fails
      return;
    }
    long frameBytes = Frames.frameBytes(id.length, length);
    if (unplaced.isEmpty() && (current.fits(frameBytes) || roll(frameBytes))) {
      queueFrame(kind, id, buffer.array(), length);
    } else {
      unplaced.addLast(new Unplaced(kind, id, buffer.copy()));
      unplacedBytes += frameBytes;
      segments.prepare(frameBytes);
    }
    buffer.reset();
  }

  /** Gives one frame its place in the current segment and its header, and queues it for the writer. */
  private void queueFrame(byte kind, byte[] id, byte[] payload, int length) {
    Segment segment = current;
    int at = segment.position;
    crc.reset();
    crc.update(payload, 0, length);
    int payloadCrc = (int) crc.getValue();
    if (Frames.isFlush(kind)) {
      flushFrames++;
    }
    int headerLength = Frames.frameHeader(header, kind, id, length, nextSeq++, flushFrames, payloadCrc, crc);
    segment.position = at + headerLength + length;
    queuedLsn += length;
    if (segment.startLsn < 0) {
      segment.startLsn = queuedLsn - length;
    }
    segment.endLsn = queuedLsn;
    writer.queue(segment, at, header, headerLength, payload, length, queuedLsn);
  }

  /** Makes the next segment current, its predecessor forced and closed by the writer; false without one. */
  private boolean roll(long frameBytes) {
    Segment next = segments.next(frameBytes);
    if (next == null) {
      return false;
    }
    writer.close(current);
    current = next;
    live.addLast(next);
    return true;
  }

  /** A segment was made, or could not be: frames waiting for room go into it, in order, and the room is re-told. */
  private void segmentsChanged() {
    if (closed) {
      return;
    }
    while (!unplaced.isEmpty()) {
      Unplaced next = unplaced.peekFirst();
      long frameBytes = next.frameBytes();
      if (!current.fits(frameBytes) && !roll(frameBytes)) {
        break;
      }
      unplaced.pollFirst();
      unplacedBytes -= frameBytes;
      queueFrame(next.kind(), next.id(), next.payload(), next.payload().length);
    }
    if (!unplaced.isEmpty() && segments.noRoom()) {
      release(); // on a full disk, what the drain freed makes the room the waiting frames need
    }
    if (!durableWaiters.isEmpty()) {
      askForce();
    }
    updateFull();
  }

  // ---- waiting for the writer ----

  private Future<Void> written(long lsn) {
    if (writtenLsn >= lsn) {
      return DONE;
    }
    return await(writtenWaiters, lsn);
  }

  /** Completes once everything below {@code lsn} is forced; asks for the force. */
  private Future<Void> durable(long lsn) {
    if (durableLsn >= lsn) {
      return DONE;
    }
    askForce();
    return await(durableWaiters, lsn);
  }

  private Future<Void> await(ArrayDeque<Waiter> waiters, long lsn) {
    Waiter last = waiters.peekLast();
    if (last != null && last.lsn == lsn) {
      return last.promise.future();
    }
    Promise<Void> promise = Promise.promise();
    waiters.addLast(new Waiter(lsn, promise));
    return promise.future();
  }

  private static void complete(ArrayDeque<Waiter> waiters, long upTo) {
    while (!waiters.isEmpty() && waiters.peekFirst().lsn <= upTo) {
      waiters.pollFirst().promise.tryComplete();
    }
  }

  private void askForce() {
    if (!failed && !closed) {
      writer.askForce();
    }
  }

  /** From the writer: everything below {@code written} is written, below {@code forced} forced. */
  private void progress(long written, long forced) {
    if (failed) {
      return;
    }
    writtenLsn = Math.max(writtenLsn, written);
    durableLsn = Math.max(durableLsn, forced);
    complete(writtenWaiters, writtenLsn);
    complete(durableWaiters, durableLsn);
  }

  /**
   * A write or a force failed (an I/O error): what it covered may not be on disk, and after a failed fsync the kernel
   * may report a later one clean. Nothing more is appended or answered by this journal; flushes of journaled
   * increments are not attempted any more (their records cannot be kept), so a restart replays what the journal holds,
   * once. Accepted increments get 503 and readiness is 503 until a restart; ack=commit goes on.
   */
  void fail(Throwable cause) {
    if (!failed) {
      failed = true;
      failure.tryComplete(cause);
      LOG.atError().addKeyValue("event", "journal_failed").addKeyValue("dir", dir.toString())
        .log("the journal cannot be written to disk ({}); accepted increments get 503, and what it holds is written by "
          + "the replay after a restart: restart the gateway", cause.toString());
      updateFull();
    }
    failWaiters(cause);
  }

  /**
   * {@code journal.dir} no longer names the segment written last (the directory was removed or replaced): what the
   * journal holds is in files no restart will find. It fails closed for intake (503 {@code journal_unavailable},
   * readiness 503; an answer waiting for a write is not given as 202), and goes on recording flushes in the files it
   * has open, so the drain still writes what is held to the database; a stop that cannot is reported as a loss
   * (src/DESIGN.md §4 "Journal").
   */
  void unreachable(Path file) {
    if (unreachable || failed || closed) {
      return;
    }
    unreachable = true;
    LOG.atError().addKeyValue("event", "journal_unreachable").addKeyValue("dir", dir.toString())
      .addKeyValue("file", file.toString())
      .log("the journal directory {} no longer holds the journal's files (removed or replaced while the gateway runs): "
        + "accepted increments get 503; what the journal holds is written to the database, and a stop that cannot "
        + "write it all says so and exits non-zero; restart the gateway once journal.dir is back", dir);
    updateFull();
  }

  /** The journal's directory no longer names its files (see {@link #unreachable(Path)}). */
  public boolean unreachable() {
    return unreachable;
  }

  private static ApiError unavailable() {
    return ApiError.unavailable("journal_unavailable", "the journal cannot be written; retry shortly");
  }

  private void failWaiters(Throwable cause) {
    for (ArrayDeque<Waiter> waiters : List.of(writtenWaiters, durableWaiters)) {
      while (!waiters.isEmpty()) {
        waiters.pollFirst().promise.tryFail(cause);
      }
    }
  }

  // ---- bounds, deletion, age ----

  private long oldestStart() {
    Segment oldest = live.peekFirst();
    return oldest == null || oldest.startLsn < 0 ? queuedLsn : oldest.startLsn;
  }

  /** Deletes the segments wholly below the lowest needed position; updates the byte and age gauges. */
  void release() {
    if (closed || failed || unreachable) {
      // a failed journal keeps every segment for the replay after the restart; an unreachable one deletes nothing by
      // names that are not its files' any more
      return;
    }
    // the directory's check when the writer is idle or its policy forces seldom
    writer.askCheck(current);
    long now = timers.currentTimeMillis();
    if (checkpoints.isEmpty() || checkpoints.peekLast().lsn < appendedLsn) {
      checkpoints.addLast(new Checkpoint(appendedLsn, now));
    }
    long need = Math.min(needed.getAsLong(), appendedLsn);
    List<Path> gone = new ArrayList<>();
    while (live.size() > 1 && live.peekFirst().endLsn <= need) {
      gone.add(live.pollFirst().path);
    }
    segments.delete(gone);
    while (checkpoints.size() > 1 && nth(1).lsn <= need) {
      checkpoints.pollFirst();
    }
    oldestMillis = need >= appendedLsn ? 0 : checkpoints.peekFirst().millis;
    liveBytes = appendedLsn - oldestStart();
    heldBytes = appendedLsn - need;
    heldCheckedAt = timers.nanoTime();
    if (overBound && heldBytes < options.getMaxBytes() * 9 / 10) {
      overBound = false;
      updateFull();
    }
  }

  private Checkpoint nth(int n) {
    var iterator = checkpoints.iterator();
    Checkpoint checkpoint = iterator.next();
    for (int i = 0; i < n; i++) {
      checkpoint = iterator.next();
    }
    return checkpoint;
  }

  /** Tells {@code fullChanged} whether accepted increments are refused now, when that changed. */
  private void updateFull() {
    boolean nowFull = failed || unreachable || overBound || segments.noRoom() || !segments.hasReserve();
    if (full != nowFull) {
      full = nowFull;
      fullChanged.accept(nowFull);
    }
  }

  private void checkContext() {
    if (Thread.currentThread() != eventLoop) {
      throw new IllegalStateException("the journal must be called on the event loop of the verticle that opened it");
    }
  }

  /** Completes once the writer has done what it was asked before (for tests that check nothing more is written). */
  Future<Void> writerIdle() {
    return writer.idle();
  }

  /** Where the next frame goes in the current segment file (for tests that damage a frame). */
  long fileOffset() {
    return current.position;
  }

  /** The current segment's file (for tests that damage a frame). */
  Path currentFile() {
    return current.path;
  }
}
