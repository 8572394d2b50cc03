package io.countergateway.write.journal;

import io.countergateway.config.JournalOptions;
import io.countergateway.model.ApiError;
import io.countergateway.model.CounterKey;
import io.countergateway.model.Increment;
import io.countergateway.store.Flush;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * The write-ahead journal of one ingest verticle (src/DESIGN.md §4 "Journal"): every increment answered 202/204 is
 * appended here before the answer, with the flushes formed from it and their settlement, so that a restart replays
 * exactly what was held.
 *
 * <p><b>Files.</b> Segment files {@code journal-<verticle>-<segment>.seg} in the configured directory: an 8-byte
 * header ({@code CGJ1} and a version), then frames {@code [length][CRC32C][payload]} whose payload is records
 * ({@link JournalRecords}). A frame is what one append carries; a torn or corrupt frame ends its file at replay, and
 * a frame header of zeros is where the writing stopped.
 *
 * <p><b>Segments are made ahead of need</b> by the journal's file worker: filled with zeros up to their capacity and
 * forced, so a full disk is met there, as a refusal of new increments, never half-way through one, and a later
 * {@code fdatasync} need not write the file's size. Zeros where a frame header should be end the file at replay.
 *
 * <p><b>Group commit, without the event loop on the way.</b> The event loop encodes a frame (payload and checksum) and
 * appends it to an in-memory queue; the journal's writer thread — never the event loop — takes everything queued,
 * writes it, forces it when asked ({@code fsync: always} always; a formed flush, a split and the {@code everyMs}
 * timer whatever the policy), tells the event loop how far the journal is written and forced, and goes straight on
 * while more was queued meanwhile. One fsync thus covers every request queued during the previous one, and the next
 * write never waits for the event loop to hear of the last. {@code always} answers after the force that covers the
 * increment, {@code everyMs} and {@code off} after its write (in the page cache: it outlives the process, not the
 * machine), as Redis's {@code appendfsync} does. A formed flush and a split are always forced before they count, so a
 * replay never counts twice.
 *
 * <p><b>Deletion.</b> Positions (LSNs) are byte offsets of record payloads in this run's stream. The coalescer tells,
 * through {@code needed}, the lowest position it still needs (its pending counters' and its in-flight flushes' first
 * journaled increment); a segment wholly below it is deleted, about once a second. A clean close cuts each segment
 * file to what it holds.
 *
 * <p>Confined to the verticle's event loop, except the file work on the two workers.
 */
public final class Journal {
  private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
  private static final Pattern FILE = Pattern.compile("journal-(\\d+)-(\\d+)\\.seg");
  private static final int VERSION = 1;
  private static final long RELEASE_INTERVAL_MS = 1_000;
  private static final long SPARE_RETRY_MS = 1_000;
  private static final int SNAPSHOT_BATCH = 1_000;
  private static final int FIRST_SEGMENT_BYTES = 256 << 10;
  private static final int ZERO_CHUNK = 1 << 20;
  private static final Future<Void> DONE = Future.succeededFuture();
  private static final int SPARE_CHUNKS = 4;
  private static final int SPARE_CHUNK_BYTES = 64 << 10;

  /** What a replay hands the coalescer: deltas to hold again, and flushes to write again under their own ids. */
  public record Recovered(Map<CounterKey, Long> pending, List<Flush> unsettled) {
  }

  /** A segment file, zero-filled to its capacity. */
  private static final class Segment {
    final Path path;
    final FileChannel channel;
    final int capacity;
    // event loop
    long startLsn = -1;
    long endLsn;
    /** Where the next frame goes. */
    int position = JournalReader.FILE_HEADER_BYTES;
    // the writer's
    boolean dirty;

    Segment(Path path, FileChannel channel, int capacity) {
      this.path = path;
      this.channel = channel;
      this.capacity = capacity;
    }

    boolean fits(int payloadBytes) {
      return (long) position + JournalReader.FRAME_HEADER_BYTES + payloadBytes <= capacity;
    }
  }

  /**
   * Frames queued for the writer: contiguous bytes of one segment from {@code offset}. Written chunks go back to the
   * event loop for the next group (up to {@link #SPARE_CHUNKS} of at most {@link #SPARE_CHUNK_BYTES}): a new 4 KiB
   * buffer per group was 2.6 % of the event loops' allocated bytes in issue 24's profile.
   */
  private static final class Chunk {
    Segment segment;
    long offset;
    final JournalRecords.Out bytes = new JournalRecords.Out(4096);

    Chunk of(Segment segment, long offset) {
      this.segment = segment;
      this.offset = offset;
      bytes.reset();
      return this;
    }
  }

  /** What waits for a position: to be written, or forced. */
  private record Waiter(long lsn, Promise<Void> promise) {
  }

  /** A frame with no room yet: it waits for the next segment, in order. */
  private record Unplaced(byte[] payload, long endLsn) {
  }

  private record Checkpoint(long lsn, long millis) {
  }

  private final Vertx vertx;
  private final JournalOptions options;
  private final Path dir;
  private final int index;
  private final WorkerExecutor files;
  private final WorkerExecutor writer;
  private final Consumer<Boolean> fullChanged;
  private final Thread eventLoop;
  private final io.vertx.core.Context context;
  private final boolean always;

  // event loop
  private final JournalRecords.Out buffer = new JournalRecords.Out(64 * 1024);
  private final CRC32C crc = new CRC32C();
  private long appendedLsn;
  /** Everything below is queued for the writer (or written). */
  private long queuedLsn;
  /** Everything below is written, as the writer last told. */
  private long writtenLsn;
  /** Everything below is forced, as the writer last told. */
  private long durableLsn;
  private Segment current;
  private Segment spare;
  /** The spare being made, or the last one made: a close waits for it, so no segment is made after the close. */
  private Future<Segment> spareMade = Future.succeededFuture();
  private boolean spareComing;
  /** The last attempt to make a segment failed. */
  private boolean segmentFailure;
  private long spareRetryTimer = -1;
  private long nextCapacity;
  private final ArrayDeque<Unplaced> unplaced = new ArrayDeque<>();
  private final ArrayDeque<Waiter> writtenWaiters = new ArrayDeque<>();
  private final ArrayDeque<Waiter> durableWaiters = new ArrayDeque<>();
  private final ArrayDeque<Segment> segments = new ArrayDeque<>();
  private long nextSegno;
  private final Set<String> journaledFlushes = new HashSet<>();
  private final Map<String, List<String>> replacedBy = new HashMap<>();
  private final ArrayDeque<Checkpoint> checkpoints = new ArrayDeque<>();
  private LongSupplier needed;
  private boolean full;
  private long heldBytes;
  private long heldCheckedAt = System.nanoTime() - 1_000_000_000L;
  private boolean failed;
  private boolean closed;
  private long releaseTimer = -1;
  private long fsyncTimer = -1;
  private Recovered recovered;

  // between the event loop and the writer, under queueLock
  private final Object queueLock = new Object();
  private ArrayDeque<Chunk> queue = new ArrayDeque<>();
  /** Written chunks, for the event loop to fill again. */
  private final ArrayDeque<Chunk> spareChunks = new ArrayDeque<>();
  private long queueEndLsn;
  private boolean forceAsked;
  private List<Segment> toClose = new ArrayList<>();
  private boolean writing;

  // read by the scrape thread
  private volatile long liveBytes;
  private volatile long oldestMillis;
  private volatile long appendedTotal;

  // the writer's
  private Segment lastWritten;

  // the file worker's
  private FileChannel lockChannel;
  private FileLock lock;
  private volatile Timer fsyncLatency;

  private Journal(Vertx vertx, JournalOptions options, int index, WorkerExecutor files, WorkerExecutor writer,
                  Consumer<Boolean> fullChanged) {
    this.vertx = vertx;
    this.options = options;
    this.dir = Path.of(options.getDir()).toAbsolutePath().normalize();
    this.index = index;
    this.files = files;
    this.writer = writer;
    this.fullChanged = fullChanged;
    this.eventLoop = Thread.currentThread();
    this.context = vertx.getOrCreateContext();
    this.always = options.getFsync() == JournalOptions.Fsync.ALWAYS;
    this.nextCapacity = Math.min(options.getSegmentBytes(), FIRST_SEGMENT_BYTES);
    this.needed = () -> appendedLsn;
  }

  /**
   * Opens the journal of ingest verticle {@code index} of {@code instances}, on that verticle's event loop: replays
   * the streams it inherits (its own, and those of verticles a previous run had and this one does not), writes what
   * they still hold as a snapshot at the head of a new segment, and deletes them. {@link #recovered()} then tells
   * the coalescer what to hold and resolve. {@code fullChanged} hears when the byte bound starts and stops refusing.
   */
  public static Future<Journal> open(Vertx vertx, JournalOptions options, int index, int instances,
                                     Consumer<Boolean> fullChanged) {
    String name = "journal-" + index + "-" + Integer.toHexString(System.identityHashCode(new Object()));
    WorkerExecutor files = vertx.createSharedWorkerExecutor(name, 1, 5, TimeUnit.MINUTES);
    WorkerExecutor writer = vertx.createSharedWorkerExecutor(name + "-writer", 1, 5, TimeUnit.MINUTES);
    Journal journal = new Journal(vertx, options, index, files, writer, fullChanged);
    return files.<Recovered>executeBlocking(() -> journal.recoverBlocking(instances), true)
      .map(recovered -> {
        journal.recovered = recovered;
        recovered.unsettled().forEach(flush -> journal.journaledFlushes.add(flush.id()));
        journal.startTimers();
        journal.prepareSpare(0);
        return journal;
      })
      .onFailure(e -> {
        files.close();
        writer.close();
      });
  }

  /** Measurements, once the meter registry is known; the fsync timer is recorded by the worker. */
  public void registerMetrics(MeterRegistry registry, Tags tags) {
    Gauge.builder("gateway.journal.bytes", this, j -> j.liveBytes).tags(tags).baseUnit("bytes")
      .description("bytes of journal segments still held (deleted once every increment in them is committed)")
      .register(registry);
    Gauge.builder("gateway.journal.oldest.age", this, j -> j.oldestMillis == 0 ? 0
        : Math.max(0, System.currentTimeMillis() - j.oldestMillis) / 1000.0).tags(tags).baseUnit("seconds")
      .description("age of the oldest journaled increment not yet in a committed flush (1 s resolution)")
      .register(registry);
    FunctionCounter.builder("gateway.journal.appended", this, j -> j.appendedTotal).tags(tags).baseUnit("bytes")
      .description("bytes appended to the journal").register(registry);
    fsyncLatency = Timer.builder("gateway.journal.fsync.duration").tags(tags)
      .description("one journal fsync (group commit: one covers every increment appended before it)")
      .publishPercentiles(0.5, 0.9, 0.99, 0.999).register(registry);
  }

  /** What the replay found; the coalescer takes it once, before the verticle listens. */
  public Recovered recovered() {
    return recovered;
  }

  /** The coalescer's lowest needed position (see the class comment); segments wholly below it are deleted. */
  public void neededBy(LongSupplier lowestNeeded) {
    this.needed = lowestNeeded;
  }

  /** The position the next record will have: everything held is at or above what the coalescer reports. */
  public long position() {
    return appendedLsn;
  }

  /**
   * Before taking increments of about {@code bytes}: 503 (nothing taken) when the journal holds its maximum, cannot
   * write, or has no room for them and cannot make its next segment (a full disk).
   */
  public void checkRoom(long bytes) {
    // maxBytes bounds the bytes held (appended and still needed); the files hold at most a segment and a frame more
    checkContext();
    if (failed || closed) {
      throw ApiError.unavailable("journal_unavailable", "the journal cannot be written; accepted increments are refused "
        + "(ack=commit still works); retry shortly");
    }
    // the files' bytes bound what is held from above; only past the bound is what is held counted (an O(pending)
    // walk, so at most every 100 ms)
    if (appendedLsn - oldestStart() + bytes > options.getMaxBytes()) {
      long now = System.nanoTime();
      if (now - heldCheckedAt > 100_000_000L) {
        heldCheckedAt = now;
        heldBytes = appendedLsn - Math.min(needed.getAsLong(), appendedLsn);
      }
      if (heldBytes + bytes > options.getMaxBytes()) {
        setFull(true);
        throw ApiError.unavailable("journal_full", "the journal holds journal.maxBytes of increments not yet written "
          + "to the database; retry shortly");
      }
    }
    // without a segment to go into, an increment would wait in memory for one; past a failure to make it (a full
    // disk), it is refused instead
    if (segmentFailure && (!unplaced.isEmpty() || !current.fits((int) Math.min(bytes, Integer.MAX_VALUE))
      && !spareFits(bytes))) {
      throw ApiError.unavailable("journal_no_room", "the journal cannot make its next segment (is its disk full?); "
        + "accepted increments are refused until it can; retry shortly");
    }
  }

  /** Appends one accepted increment; returns its position. */
  public long appendIncrement(Increment increment) {
    long lsn = appendedLsn;
    JournalRecords.increment(buffer, increment);
    place();
    return lsn;
  }

  /** Appends the accepted increments of one request; returns the position of their record. */
  public long appendIncrements(List<Increment> increments) {
    long lsn = appendedLsn;
    JournalRecords.increments(buffer, increments);
    place();
    return lsn;
  }

  /**
   * Completes once everything appended so far may be answered: forced under {@code always}, written under
   * {@code everyMs} and {@code off}. Fails only if the journal could not keep it.
   */
  public Future<Void> committed() {
    if (closed) {
      return DONE;
    }
    if (failed) {
      return Future.failedFuture("the journal cannot be written");
    }
    return always ? durable(appendedLsn) : written(appendedLsn);
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
    JournalRecords.formed(buffer, flush.id(), flush.rows(), zeroKeys);
    place();
    journaledFlushes.add(flush.id());
    return durable(appendedLsn);
  }

  /** Journaled counters that summed to 0 and were taken with nothing to write. */
  public void taken(List<CounterKey> zeroKeys) {
    if (closed || failed) {
      return;
    }
    JournalRecords.formed(buffer, "", List.of(), zeroKeys);
    place();
  }

  /**
   * A journaled flush proven uncommitted is replaced by {@code children} (a split): recorded and forced before any
   * child is attempted. A flush never journaled (commit requests only) needs no record. Fails as {@link #formed}.
   */
  public Future<Void> replaced(Flush parent, List<Flush> children) {
    if (!journaledFlushes.contains(parent.id())) {
      return DONE;
    }
    if (closed || failed) {
      return Future.failedFuture("the journal cannot record the split of " + parent.id());
    }
    JournalRecords.replaced(buffer, parent.id(), children);
    place();
    List<String> ids = new ArrayList<>();
    for (Flush child : children) {
      journaledFlushes.add(child.id());
      ids.add(child.id());
    }
    replacedBy.computeIfAbsent(parent.id(), p -> new ArrayList<>()).addAll(ids);
    return durable(appendedLsn);
  }

  /**
   * The flush formed under {@code id} is settled for good (committed, or refused). No need to wait: until this is on
   * disk a replay would write the flush again under its id, which finds it committed (or behind its source's fence).
   */
  public void settled(String id) {
    if (!forget(id) || closed || failed) {
      return;
    }
    JournalRecords.settled(buffer, id);
    place();
  }

  private boolean forget(String id) {
    boolean known = journaledFlushes.remove(id);
    List<String> children = replacedBy.remove(id);
    if (children != null) {
      children.forEach(this::forget);
    }
    return known;
  }

  /**
   * Forces what is appended and closes the files, each cut to what it holds. With {@code nothingHeld} (a drain
   * wrote everything) the segments are deleted: a restart has nothing to replay.
   */
  public Future<Void> close(boolean nothingHeld) {
    if (closed) {
      return DONE;
    }
    Future<Void> forced = failed ? DONE : durable(queuedLsn).recover(e -> DONE);
    return forced.transform(done -> {
      closed = true;
      vertx.cancelTimer(releaseTimer);
      vertx.cancelTimer(fsyncTimer);
      vertx.cancelTimer(spareRetryTimer);
      failWaiters(new IllegalStateException("the journal is closed"));
      // after the file worker's deletions and the making of a spare, whose answer comes before this one's
      return files.<Void>executeBlocking(() -> null, true);
    }).transform(filesDone -> {
      // a spare asked for from another context (a journal opened off its event loop) is not ordered with the task
      // above: wait for it too, so that it is the spare deleted below rather than a file made after the close
      return spareMade.<Void>transform(made -> DONE);
    }).transform(spareDone -> {
      List<Segment> live = new ArrayList<>(segments);
      Segment unused = spare;
      spare = null;
      boolean delete = nothingHeld && !failed;
      // ordered after the writer's last write: no file is closed under it
      return writer.<Void>executeBlocking(() -> {
        closeFiles(live, unused, delete);
        return null;
      }, true);
    }).eventually(() -> {
      writer.close();
      return files.close();
    });
  }

  // ---- event loop: queueing frames and waiting for them ----

  /** Queues the records in the buffer as one frame for the writer, or behind the frames waiting for room. */
  private void place() {
    int length = buffer.length();
    appendedLsn += length;
    appendedTotal = appendedLsn;
    if (unplaced.isEmpty() && (current.fits(length) || roll(length))) {
      queueFrame(buffer.array(), length);
    } else {
      unplaced.addLast(new Unplaced(buffer.copy(), appendedLsn));
      prepareSpare(length);
    }
    buffer.reset();
  }

  /** Gives one frame its place in the current segment and queues it for the writer. */
  private void queueFrame(byte[] payload, int length) {
    Segment segment = current;
    int at = segment.position;
    segment.position = at + JournalReader.FRAME_HEADER_BYTES + length;
    crc.reset();
    crc.update(payload, 0, length);
    int checksum = (int) crc.getValue();
    queuedLsn += length;
    if (segment.startLsn < 0) {
      segment.startLsn = queuedLsn - length;
    }
    segment.endLsn = queuedLsn;
    boolean start;
    synchronized (queueLock) {
      Chunk last = queue.peekLast();
      if (last == null || last.segment != segment || last.offset + last.bytes.length() != at) {
        Chunk spareChunk = spareChunks.pollFirst();
        last = (spareChunk != null ? spareChunk : new Chunk()).of(segment, at);
        queue.addLast(last);
      }
      last.bytes.putInt(length);
      last.bytes.putInt(checksum);
      last.bytes.put(payload, 0, length);
      queueEndLsn = queuedLsn;
      start = !writing;
      writing = true;
    }
    if (start) {
      // at once, not after this event-loop turn: the fsync of the first frames then overlaps the reading of the
      // rest. Deferred to the turn's end, groups grew (up to 1.85 x) but accepted increments/s fell to about half
      // (the disk waited for the loop, and the loop for the disk; issue 24's A/B)
      startWriter();
    }
  }

  private boolean spareFits(long payloadBytes) {
    return spare != null && JournalReader.FILE_HEADER_BYTES + JournalReader.FRAME_HEADER_BYTES + payloadBytes
      <= spare.capacity;
  }

  /** Makes the spare segment current, its predecessor forced and closed by the writer; false without one. */
  private boolean roll(int payloadBytes) {
    if (!spareFits(payloadBytes)) {
      if (spare != null) {
        discard(spare); // made for smaller frames
        spare = null;
      }
      return false;
    }
    Segment previous = current;
    current = spare;
    spare = null;
    segments.addLast(current);
    synchronized (queueLock) {
      toClose.add(previous);
    }
    prepareSpare(0);
    return true;
  }

  /** Asks the file worker for the next segment, if none is ready or coming; sized for a frame of {@code payloadBytes}. */
  private void prepareSpare(long payloadBytes) {
    if (spareComing || closed || spare != null && spareFits(payloadBytes)) {
      return;
    }
    spareComing = true;
    long capacity = Math.max(nextCapacity,
      JournalReader.FILE_HEADER_BYTES + JournalReader.FRAME_HEADER_BYTES + payloadBytes);
    if (capacity > Integer.MAX_VALUE - 8) {
      throw new IllegalStateException("a journal frame of " + payloadBytes + " bytes is larger than a segment can be");
    }
    nextCapacity = Math.min(options.getSegmentBytes(), nextCapacity * 2);
    Path path = dir.resolve(fileName(index, nextSegno++));
    spareMade = files.executeBlocking(() -> createSegment(path, (int) capacity), true);
    spareMade.onComplete(made -> {
      spareComing = false;
      segmentFailure = made.failed();
      if (made.failed()) {
        LOG.atError().addKeyValue("event", "journal_segment_failed").addKeyValue("file", path.toString())
          .log("cannot make the next journal segment ({}); accepted increments are refused until it can be made; "
            + "retrying every second", made.cause().toString());
        spareRetryTimer = vertx.setTimer(SPARE_RETRY_MS, id -> prepareSpare(payloadBytes));
        return;
      }
      spare = made.result(); // none was ready (spareComing); after a close, the close deletes it
      if (!closed) {
        placeWaiting();
      }
    });
  }

  /** Frames that waited for room go into the new segment, in order. */
  private void placeWaiting() {
    while (!unplaced.isEmpty()) {
      Unplaced next = unplaced.peekFirst();
      if (!current.fits(next.payload.length) && !roll(next.payload.length)) {
        prepareSpare(next.payload.length);
        return;
      }
      unplaced.pollFirst();
      queueFrame(next.payload, next.payload.length);
    }
    if (!durableWaiters.isEmpty()) {
      askForce();
    }
  }

  private void discard(Segment segment) {
    files.executeBlocking(() -> {
      segment.channel.close();
      return Files.deleteIfExists(segment.path);
    }, true);
  }

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

  /** The next write is forced (under always every write is); starts the writer if it is idle. */
  private void askForce() {
    if (failed || closed || always && writing) {
      return;
    }
    boolean start;
    synchronized (queueLock) {
      forceAsked = true;
      start = !writing;
      writing = true;
    }
    if (start) {
      startWriter();
    }
  }

  private void startWriter() {
    writer.executeBlocking(() -> {
      writeLoop();
      return null;
    }, true);
  }

  /** From the writer: everything below {@code written} is written, below {@code forced} forced. */
  private void progress(long written, long forced) {
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
      LOG.atError().addKeyValue("event", "journal_failed").addKeyValue("dir", dir.toString())
        .log("the journal cannot be written to disk ({}); accepted increments get 503, and what it holds is written by "
          + "the replay after a restart: restart the gateway", cause.toString());
      setFull(true);
    }
    failWaiters(cause);
  }

  private void failWaiters(Throwable cause) {
    for (ArrayDeque<Waiter> waiters : List.of(writtenWaiters, durableWaiters)) {
      while (!waiters.isEmpty()) {
        waiters.pollFirst().promise.tryFail(cause);
      }
    }
  }

  // ---- event loop: bounds, deletion, age ----

  private void startTimers() {
    checkpoints.addLast(new Checkpoint(0, System.currentTimeMillis()));
    releaseTimer = vertx.setPeriodic(RELEASE_INTERVAL_MS, id -> release());
    if (options.getFsync() == JournalOptions.Fsync.EVERY_MS) {
      fsyncTimer = vertx.setPeriodic(options.getFsyncIntervalMs(), id -> askForce());
    }
  }

  private long oldestStart() {
    Segment oldest = segments.peekFirst();
    return oldest == null || oldest.startLsn < 0 ? queuedLsn : oldest.startLsn;
  }

  /** Deletes the segments wholly below the lowest needed position; updates the byte and age gauges. */
  void release() {
    if (closed || failed) {
      // a failed journal keeps every segment for the replay after the restart
      return;
    }
    long now = System.currentTimeMillis();
    if (checkpoints.isEmpty() || checkpoints.peekLast().lsn < appendedLsn) {
      checkpoints.addLast(new Checkpoint(appendedLsn, now));
    }
    long need = Math.min(needed.getAsLong(), appendedLsn);
    while (segments.size() > 1 && segments.peekFirst().endLsn <= need) {
      // a segment below the current one was rolled away from: the writer closed it after its last write
      Path gone = segments.pollFirst().path;
      files.executeBlocking(() -> Files.deleteIfExists(gone), true)
        .onFailure(e -> LOG.warn("could not delete journal segment {}: {}", gone, e.toString()));
    }
    while (checkpoints.size() > 1 && nth(1).lsn <= need) {
      checkpoints.pollFirst();
    }
    oldestMillis = need >= appendedLsn ? 0 : checkpoints.peekFirst().millis;
    liveBytes = appendedLsn - oldestStart();
    heldBytes = appendedLsn - need;
    heldCheckedAt = System.nanoTime();
    if (full && !failed && heldBytes < options.getMaxBytes() * 9 / 10) {
      setFull(false);
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

  private void setFull(boolean nowFull) {
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

  /** Where the next frame goes in the current segment file (for tests that damage a frame). */
  long fileOffset() {
    return current.position;
  }

  static String fileName(int index, long segno) {
    return String.format("journal-%d-%010d.seg", index, segno);
  }

  // ---- the writer's ----

  /**
   * Writes what is queued, forces it when asked, tells the event loop, and goes on while more was queued meanwhile.
   * A segment rolled away from is forced and closed once its last frames are written, before a later segment's
   * frames are: a replay never finds a frame whose predecessors did not reach the disk before it.
   */
  private void writeLoop() {
    ArrayDeque<Chunk> written = null;
    while (true) {
      ArrayDeque<Chunk> chunks;
      List<Segment> closing;
      boolean force;
      long upTo;
      synchronized (queueLock) {
        recycle(written);
        if (queue.isEmpty() && !forceAsked && toClose.isEmpty()) {
          writing = false;
          return;
        }
        chunks = queue;
        closing = toClose;
        force = always || forceAsked;
        upTo = queueEndLsn;
        queue = new ArrayDeque<>();
        toClose = new ArrayList<>();
        forceAsked = false;
      }
      try {
        for (Chunk chunk : chunks) {
          if (lastWritten != null && chunk.segment != lastWritten && lastWritten.dirty) {
            force(lastWritten);
          }
          ByteBuffer bytes = ByteBuffer.wrap(chunk.bytes.array(), 0, chunk.bytes.length());
          long at = chunk.offset;
          while (bytes.hasRemaining()) {
            at += chunk.segment.channel.write(bytes, at);
          }
          chunk.segment.dirty = true;
          lastWritten = chunk.segment;
        }
        for (Segment segment : closing) {
          if (segment.dirty) {
            force(segment);
          }
          segment.channel.close();
        }
        if (force && lastWritten != null && lastWritten.dirty) {
          force(lastWritten);
        }
        long forced = force ? upTo : -1;
        context.runOnContext(v -> progress(upTo, forced));
        written = chunks;
      } catch (IOException | RuntimeException ioFailure) {
        synchronized (queueLock) {
          writing = false;
        }
        context.runOnContext(v -> fail(ioFailure));
        return;
      }
    }
  }

  /** Under queueLock: chunks the writer is done with, kept for the event loop's next groups. */
  private void recycle(ArrayDeque<Chunk> written) {
    if (written == null) {
      return;
    }
    for (Chunk chunk : written) {
      chunk.segment = null; // a closed segment is not held by a spare chunk
      if (spareChunks.size() < SPARE_CHUNKS && chunk.bytes.array().length <= SPARE_CHUNK_BYTES) {
        spareChunks.addLast(chunk);
      }
    }
  }

  private void force(Segment segment) throws IOException {
    long started = System.nanoTime();
    segment.channel.force(false);
    segment.dirty = false;
    if (fsyncLatency != null) {
      fsyncLatency.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
    }
  }

  // ---- the file worker's ----

  /** A new segment file: its header, zeros up to its capacity (the disk blocks taken now), forced, left open. */
  private Segment createSegment(Path path, int capacity) throws IOException {
    FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    try {
      ByteBuffer zeros = ByteBuffer.allocate(Math.min(ZERO_CHUNK, capacity));
      long written = 0;
      while (written < capacity) {
        zeros.clear().limit((int) Math.min(zeros.capacity(), capacity - written));
        written += channel.write(zeros, written);
      }
      ByteBuffer header = fileHeader();
      while (header.hasRemaining()) {
        channel.write(header, header.position());
      }
      channel.force(true);
      syncDirectory();
      return new Segment(path, channel, capacity);
    } catch (IOException | RuntimeException e) {
      channel.close();
      Files.deleteIfExists(path);
      throw e;
    }
  }

  private static ByteBuffer fileHeader() {
    return ByteBuffer.allocate(JournalReader.FILE_HEADER_BYTES).put(JournalReader.MAGIC).putInt(VERSION).flip();
  }

  private void syncDirectory() {
    try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
      directory.force(true);
    } catch (IOException notSupported) {
      // some file systems cannot sync a directory; the file's own fsync is what they offer
    }
  }

  /** At close, on the writer after its last write: cuts each file to what it holds and closes it, or deletes them. */
  private void closeFiles(List<Segment> live, Segment unused, boolean delete) throws IOException {
    try {
      for (Segment segment : live) {
        if (!segment.channel.isOpen()) {
          continue; // rolled away from and closed by the writer; cut below
        }
        if (!delete) {
          segment.channel.truncate(segment.position);
          segment.channel.force(true);
        }
        segment.channel.close();
      }
      for (Segment segment : live) {
        if (delete) {
          Files.deleteIfExists(segment.path);
        } else if (Files.exists(segment.path) && Files.size(segment.path) > segment.position) {
          try (FileChannel channel = FileChannel.open(segment.path, StandardOpenOption.WRITE)) {
            channel.truncate(segment.position);
            channel.force(true);
          }
        }
      }
      if (unused != null) {
        unused.channel.close();
        Files.deleteIfExists(unused.path);
      }
      syncDirectory();
    } finally {
      if (lock != null) {
        lock.release();
      }
      if (lockChannel != null) {
        lockChannel.close();
      }
    }
  }

  /** Replays the inherited streams into one snapshot segment and deletes them (see {@link #open}). */
  private Recovered recoverBlocking(int instances) throws IOException {
    long started = System.nanoTime();
    Files.createDirectories(dir);
    lockChannel = FileChannel.open(dir.resolve("journal-" + index + ".lock"), StandardOpenOption.CREATE,
      StandardOpenOption.WRITE);
    try {
      lock = lockChannel.tryLock();
    } catch (OverlappingFileLockException sameJvm) {
      lock = null;
    }
    if (lock == null) {
      lockChannel.close();
      throw new IllegalStateException("the journal directory " + dir + " is in use by another gateway (journal-" + index
        + ".lock is held); give each gateway a journal.dir of its own");
    }
    Map<Integer, TreeMap<Long, Path>> streams = new TreeMap<>();
    long highest = 0;
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "journal-*.seg")) {
      for (Path file : files) {
        Matcher name = FILE.matcher(file.getFileName().toString());
        if (name.matches()) {
          int stream = Integer.parseInt(name.group(1));
          long segno = Long.parseLong(name.group(2));
          highest = Math.max(highest, segno);
          if (stream % instances == index) {
            streams.computeIfAbsent(stream, s -> new TreeMap<>()).put(segno, file);
          }
        }
      }
    }
    Map<Integer, JournalReader.Reduction> reductions = new TreeMap<>();
    Set<String> superseded = new HashSet<>();
    for (Map.Entry<Integer, TreeMap<Long, Path>> stream : streams.entrySet()) {
      JournalReader.Reduction reduction = new JournalReader.Reduction();
      JournalReader.read(new ArrayList<>(stream.getValue().values()), reduction);
      reductions.put(stream.getKey(), reduction);
      superseded.addAll(reduction.superseded);
    }
    // a snapshot of another stream (an earlier run had other verticles) names files it carried over: read without them
    for (Map.Entry<Integer, TreeMap<Long, Path>> stream : streams.entrySet()) {
      List<Path> kept = stream.getValue().values().stream()
        .filter(file -> !superseded.contains(file.getFileName().toString())).toList();
      if (kept.size() < stream.getValue().size()) {
        JournalReader.Reduction reduction = new JournalReader.Reduction();
        JournalReader.read(kept, reduction);
        reductions.put(stream.getKey(), reduction);
      }
    }
    Map<CounterKey, Long> pending = new LinkedHashMap<>();
    List<Flush> unsettled = new ArrayList<>();
    long records = 0;
    long lostBytes = 0;
    long lostIncrements = 0;
    int lostFrames = 0;
    for (JournalReader.Reduction reduction : reductions.values()) {
      reduction.pending.forEach((key, delta) -> pending.merge(key, delta, (a, b) -> a + b == 0 ? null : a + b));
      unsettled.addAll(reduction.unsettled.values());
      records += reduction.records;
      lostBytes += reduction.lostBytes;
      lostIncrements += reduction.lostIncrements;
      lostFrames += reduction.lostFrames;
    }
    List<Path> read = streams.values().stream().flatMap(files -> files.values().stream()).toList();

    JournalRecords.Out snapshot = new JournalRecords.Out(1024);
    JournalRecords.snapshotBegin(snapshot);
    for (Flush flush : unsettled) {
      JournalRecords.formed(snapshot, flush.id(), flush.rows(), List.of());
    }
    List<Increment> batch = new ArrayList<>(SNAPSHOT_BATCH);
    for (Map.Entry<CounterKey, Long> held : pending.entrySet()) {
      batch.add(new Increment(held.getKey(), held.getValue()));
      if (batch.size() == SNAPSHOT_BATCH) {
        JournalRecords.increments(snapshot, batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      JournalRecords.increments(snapshot, batch);
    }
    JournalRecords.snapshotEnd(snapshot, read.stream().map(file -> file.getFileName().toString()).toList());
    byte[] payload = snapshot.copy();

    nextSegno = highest + 1;
    int capacity = (int) Math.max(nextCapacity,
      JournalReader.FILE_HEADER_BYTES + JournalReader.FRAME_HEADER_BYTES + (long) payload.length);
    current = createSegment(dir.resolve(fileName(index, nextSegno++)), capacity);
    segments.add(current);
    CRC32C checksum = new CRC32C();
    checksum.update(payload);
    ByteBuffer frame = ByteBuffer.allocate(JournalReader.FRAME_HEADER_BYTES + payload.length).putInt(payload.length)
      .putInt((int) checksum.getValue()).put(payload).flip();
    while (frame.hasRemaining()) {
      current.channel.write(frame, JournalReader.FILE_HEADER_BYTES + frame.position());
    }
    current.channel.force(false);
    current.position = JournalReader.FILE_HEADER_BYTES + frame.limit();
    current.startLsn = 0;
    current.endLsn = payload.length;
    appendedLsn = queuedLsn = writtenLsn = durableLsn = payload.length;
    appendedTotal = appendedLsn;
    liveBytes = appendedLsn;
    for (Path file : read) {
      Files.deleteIfExists(file);
    }
    if (!read.isEmpty()) {
      syncDirectory();
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    long heldIncrements = pending.size();
    if (!read.isEmpty() || lostBytes > 0) {
      (lostBytes > 0 ? LOG.atWarn() : LOG.atInfo()).addKeyValue("event", "journal_replay")
        .addKeyValue("verticle", index).addKeyValue("files", read.size()).addKeyValue("records", records)
        .addKeyValue("counters_held", heldIncrements).addKeyValue("flushes_to_resolve", unsettled.size())
        .addKeyValue("lost_bytes", lostBytes).addKeyValue("lost_frames", lostFrames)
        .addKeyValue("lost_increments", lostIncrements).addKeyValue("duration_ms", tookMs)
        .log(lostBytes > 0
          ? "journal replayed; a torn or corrupt tail was cut at the last good frame: " + lostBytes + " bytes, "
            + lostIncrements + " increments readable in them (never answered under fsync always)"
          : "journal replayed");
    }
    return new Recovered(pending, unsettled);
  }
}
