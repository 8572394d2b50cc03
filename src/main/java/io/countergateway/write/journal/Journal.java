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
 * ({@link JournalRecords}). A frame is what one write carries; a torn or corrupt frame ends its file at replay.
 *
 * <p><b>Group commit.</b> Appends happen on the event loop, into a buffer. Whenever no write is under way the buffer
 * becomes one frame, written (and with {@code fsync: always}, forced) by the journal's own worker thread — never the
 * event loop; while that runs, the next frame grows. Every caller that appended into a frame shares one future, which
 * completes once the frame is written (forced under {@code always}): one fsync answers everything appended before it.
 * A formed flush, a split and a settlement are always forced before they count, whatever the policy, so a replay
 * never counts twice; the policy only decides when an accepted increment is answered.
 *
 * <p><b>Deletion.</b> Positions (LSNs) are byte offsets in this run's stream. The coalescer tells, through
 * {@code needed}, the lowest position it still needs (its pending counters' and its in-flight flushes' first journaled
 * increment); a segment wholly below it is deleted, about once a second.
 *
 * <p>Confined to the verticle's event loop, except the file work on the worker.
 */
public final class Journal {
  private static final Logger LOG = LoggerFactory.getLogger(Journal.class);
  private static final Pattern FILE = Pattern.compile("journal-(\\d+)-(\\d+)\\.seg");
  private static final int VERSION = 1;
  private static final long RELEASE_INTERVAL_MS = 1_000;
  private static final int SNAPSHOT_BATCH = 1_000;
  private static final Future<Void> DONE = Future.succeededFuture();

  /** What a replay hands the coalescer: deltas to hold again, and flushes to write again under their own ids. */
  public record Recovered(Map<CounterKey, Long> pending, List<Flush> unsettled) {
  }

  private static final class Segment {
    final Path path;
    final long startLsn;
    long endLsn;
    long bytes;

    Segment(Path path, long startLsn) {
      this.path = path;
      this.startLsn = startLsn;
    }
  }

  private record Checkpoint(long lsn, long millis) {
  }

  private final Vertx vertx;
  private final JournalOptions options;
  private final Path dir;
  private final int index;
  private final WorkerExecutor worker;
  private final Consumer<Boolean> fullChanged;
  private final Thread eventLoop;
  private final io.vertx.core.Context context;

  // event loop
  private final JournalRecords.Out buffer = new JournalRecords.Out(64 * 1024);
  private long appendedLsn;
  private long cutLsn;
  /** The next frame's waiters: those answered once it is written, and those once it is forced. */
  private Promise<Void> nextWritten;
  private Promise<Void> nextForced;
  private boolean forceRequested;
  /** Frames handed to the worker and not yet done; at most {@link #maxFramesInFlight}, written in order. */
  private int framesInFlight;
  /**
   * Under {@code always} one: a request that arrives while a frame is being forced goes into the very next frame, so it
   * waits for about one and a half fsyncs (two frames in flight would make it wait behind both). Otherwise two: the
   * frames are mostly not forced, and the next one is written while the event loop hears of the last.
   */
  private final int maxFramesInFlight;
  /** The newest frame handed to the worker: what a caller waits on when all it appended is in it. */
  private Promise<Void> lastWritten;
  private Promise<Void> lastForced;
  private long writtenLsn;
  private long durableLsn;
  private final ArrayDeque<Segment> segments = new ArrayDeque<>();
  private long nextSegno;
  private final Set<String> journaledFlushes = new HashSet<>();
  private final Map<String, List<String>> replacedBy = new HashMap<>();
  private final ArrayDeque<Checkpoint> checkpoints = new ArrayDeque<>();
  private final List<Promise<Void>> idleWaiters = new ArrayList<>();
  private LongSupplier needed;
  private boolean full;
  private long heldBytes;
  private long heldCheckedAt = System.nanoTime() - 1_000_000_000L;
  private boolean failed;
  private boolean closed;
  private long releaseTimer = -1;
  private long fsyncTimer = -1;
  private Recovered recovered;

  // read by the scrape thread
  private volatile long liveBytes;
  private volatile long oldestMillis;
  private volatile long appendedTotal;

  // the worker's
  private FileChannel channel;
  private FileChannel lockChannel;
  private FileLock lock;
  private volatile Timer fsyncLatency;

  private Journal(Vertx vertx, JournalOptions options, int index, WorkerExecutor worker, Consumer<Boolean> fullChanged) {
    this.vertx = vertx;
    this.options = options;
    this.dir = Path.of(options.getDir()).toAbsolutePath().normalize();
    this.index = index;
    this.worker = worker;
    this.fullChanged = fullChanged;
    this.eventLoop = Thread.currentThread();
    this.context = vertx.getOrCreateContext();
    this.maxFramesInFlight = options.getFsync() == JournalOptions.Fsync.ALWAYS ? 1 : 2;
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
    WorkerExecutor worker = vertx.createSharedWorkerExecutor("journal-" + index + "-" + Integer.toHexString(
      System.identityHashCode(new Object())), 1, 5, TimeUnit.MINUTES);
    Journal journal = new Journal(vertx, options, index, worker, fullChanged);
    return worker.<Recovered>executeBlocking(() -> journal.recoverBlocking(instances), true)
      .map(recovered -> {
        journal.recovered = recovered;
        recovered.unsettled().forEach(flush -> journal.journaledFlushes.add(flush.id()));
        journal.startTimers();
        return journal;
      })
      .onFailure(e -> worker.close());
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
   * Before taking increments of about {@code bytes}: 503 (nothing taken) when the journal holds its maximum, or
   * cannot write.
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
  }

  /** Appends one accepted increment; returns its position. */
  public long appendIncrement(Increment increment) {
    long lsn = appendedLsn;
    JournalRecords.increment(buffer, increment);
    advance();
    return lsn;
  }

  /** Appends the accepted increments of one request; returns the position of their record. */
  public long appendIncrements(List<Increment> increments) {
    long lsn = appendedLsn;
    JournalRecords.increments(buffer, increments);
    advance();
    return lsn;
  }

  /**
   * Completes once everything appended so far may be answered: written and forced under {@code always}, written
   * under {@code everyMs} and {@code off}. Fails only if the journal could not write it.
   */
  public Future<Void> committed() {
    if (closed) {
      return DONE;
    }
    boolean always = options.getFsync() == JournalOptions.Fsync.ALWAYS;
    if (failed) {
      return Future.failedFuture("the journal cannot be written");
    }
    if (buffer.length() == 0) {
      // everything appended is in a frame handed to the worker (say, cut by a flush's record just now), or done
      return framesInFlight == 0 ? DONE : always ? lastForced.future() : lastWritten.future();
    }
    Future<Void> frame = always ? nextForced() : nextWritten();
    kick();
    return frame;
  }

  private Future<Void> nextWritten() {
    if (nextWritten == null) {
      nextWritten = Promise.promise();
    }
    return nextWritten.future();
  }

  private Future<Void> nextForced() {
    if (nextForced == null) {
      nextForced = Promise.promise();
    }
    return nextForced.future();
  }

  /**
   * A flush formed from journaled increments: recorded and forced before its first attempt (whatever the policy), so
   * that a replay resolves it by its id instead of taking its increments again. The journaled counters that summed to
   * 0 ({@code zeroKeys}) are taken with it.
   */
  public Future<Void> formed(Flush flush, List<CounterKey> zeroKeys) {
    if (closed || failed) {
      return DONE;
    }
    JournalRecords.formed(buffer, flush.id(), flush.rows(), zeroKeys);
    advance();
    journaledFlushes.add(flush.id());
    return forced();
  }

  /** Journaled counters that summed to 0 and were taken with nothing to write. */
  public void taken(List<CounterKey> zeroKeys) {
    if (closed || failed) {
      return;
    }
    JournalRecords.formed(buffer, "", List.of(), zeroKeys);
    advance();
    kick();
  }

  /**
   * A journaled flush proven uncommitted is replaced by {@code children} (a split): recorded and forced before any
   * child is attempted. A flush never journaled (commit requests only) needs no record.
   */
  public Future<Void> replaced(Flush parent, List<Flush> children) {
    if (closed || failed || !journaledFlushes.contains(parent.id())) {
      return DONE;
    }
    JournalRecords.replaced(buffer, parent.id(), children);
    advance();
    List<String> ids = new ArrayList<>();
    for (Flush child : children) {
      journaledFlushes.add(child.id());
      ids.add(child.id());
    }
    replacedBy.computeIfAbsent(parent.id(), p -> new ArrayList<>()).addAll(ids);
    return forced();
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
    advance();
    kick();
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
   * Writes what is buffered, forces it and closes the files. With {@code nothingHeld} (a drain wrote everything)
   * the segments are deleted: a restart has nothing to replay.
   */
  public Future<Void> close(boolean nothingHeld) {
    if (closed) {
      return DONE;
    }
    forceRequested = true;
    kick();
    Promise<Void> idle = Promise.promise();
    if (framesInFlight == 0 && buffer.length() == 0) {
      idle.complete();
    } else {
      idleWaiters.add(idle);
    }
    return idle.future().transform(flushed -> {
      closed = true;
      vertx.cancelTimer(releaseTimer);
      vertx.cancelTimer(fsyncTimer);
      List<Path> files = segments.stream().map(segment -> segment.path).toList();
      boolean delete = nothingHeld && !failed;
      return worker.<Void>executeBlocking(() -> {
        closeFiles(delete ? files : List.of());
        return null;
      }, true);
    }).eventually(worker::close);
  }

  // ---- event loop: frames ----

  private void advance() {
    appendedLsn = cutLsn + buffer.length();
    appendedTotal = appendedLsn;
  }

  /** The next frame, forced whatever the policy; a journal that cannot write does not hold the flush back. */
  private Future<Void> forced() {
    if (failed) {
      return DONE;
    }
    Future<Void> frame = nextForced();
    kick();
    return frame.recover(failure -> DONE);
  }

  private void kick() {
    if (framesInFlight < maxFramesInFlight && !closed) {
      cut();
    }
  }

  /** Hands the buffer to the worker as one frame (group commit: everything appended since the last cut). */
  private void cut() {
    if (buffer.length() == 0) {
      if (forceRequested && durableLsn < writtenLsn && framesInFlight == 0) {
        forceOnly();
      } else if (framesInFlight == 0) {
        completeIdle();
      }
      return;
    }
    if (failed) {
      buffer.reset();
      cutLsn = appendedLsn;
      completeIdle();
      return;
    }
    byte[] payload = buffer.copy();
    buffer.reset();
    long end = cutLsn + payload.length;
    Segment segment = segments.peekLast();
    boolean roll = segment == null || segment.bytes > 0 && segment.bytes + payload.length > options.getSegmentBytes();
    if (roll) {
      segment = new Segment(dir.resolve(fileName(index, nextSegno++)), cutLsn);
      segments.addLast(segment);
    }
    cutLsn = end;
    segment.endLsn = end;
    segment.bytes += payload.length + JournalReader.FRAME_HEADER_BYTES;
    boolean force = nextForced != null || forceRequested || options.getFsync() == JournalOptions.Fsync.ALWAYS;
    forceRequested = false;
    Promise<Void> written = nextWritten != null ? nextWritten : Promise.promise();
    Promise<Void> forced = force ? (nextForced != null ? nextForced : Promise.promise()) : null;
    nextWritten = null;
    nextForced = null;
    lastWritten = written;
    lastForced = forced != null ? forced : written;
    framesInFlight++;
    Path newFile = roll ? segment.path : null;
    // under always nobody waits for the write alone
    Promise<Void> answeredEarly = options.getFsync() == JournalOptions.Fsync.ALWAYS ? null : written;
    worker.<Void>executeBlocking(() -> {
      writeFrame(newFile, payload, force, answeredEarly);
      return null;
    }, true).onComplete(done -> {
      framesInFlight--;
      if (done.succeeded()) {
        writtenLsn = Math.max(writtenLsn, end);
        written.tryComplete();
        if (force) {
          durableLsn = Math.max(durableLsn, end);
          forced.tryComplete();
        }
      } else {
        fail(done.cause(), written, forced);
      }
      cut();
    });
  }

  /** everyMs: the periodic fsync when nothing else is being written. */
  private void forceOnly() {
    forceRequested = false;
    long upTo = writtenLsn;
    framesInFlight++;
    worker.<Void>executeBlocking(() -> {
      force();
      return null;
    }, true).onComplete(done -> {
      framesInFlight--;
      if (done.succeeded()) {
        durableLsn = Math.max(durableLsn, upTo);
      } else {
        fail(done.cause(), null, null);
      }
      cut();
    });
  }

  private void completeIdle() {
    if (!idleWaiters.isEmpty()) {
      List<Promise<Void>> waiters = new ArrayList<>(idleWaiters);
      idleWaiters.clear();
      waiters.forEach(Promise::tryComplete);
    }
  }

  /**
   * A write or fsync failed (a full or failing disk): what it held may not be on disk. The coalescer still holds it
   * in memory and writes it as before the journal; new accepted increments are refused until a restart (readiness
   * 503), so nothing more is answered on a promise the disk cannot keep.
   */
  private void fail(Throwable cause, Promise<Void> written, Promise<Void> forced) {
    if (!failed) {
      failed = true;
      LOG.atError().addKeyValue("event", "journal_failed").addKeyValue("dir", dir.toString())
        .log("the journal cannot be written ({}); accepted increments get 503 until the gateway restarts; what it "
          + "holds stays in memory and is written to the database as usual", cause.toString());
      setFull(true);
    }
    for (Promise<Void> waiting : java.util.Arrays.asList(written, forced, nextWritten, nextForced)) {
      if (waiting != null) {
        waiting.tryFail(cause);
      }
    }
    nextWritten = null;
    nextForced = null;
  }

  // ---- event loop: bounds, deletion, age ----

  private void startTimers() {
    checkpoints.addLast(new Checkpoint(0, System.currentTimeMillis()));
    releaseTimer = vertx.setPeriodic(RELEASE_INTERVAL_MS, id -> release());
    if (options.getFsync() == JournalOptions.Fsync.EVERY_MS) {
      fsyncTimer = vertx.setPeriodic(options.getFsyncIntervalMs(), id -> {
        if (durableLsn < appendedLsn) {
          forceRequested = true;
          kick();
        }
      });
    }
  }

  private long oldestStart() {
    Segment oldest = segments.peekFirst();
    return oldest == null ? cutLsn : oldest.startLsn;
  }

  /** Deletes the segments wholly below the lowest needed position; updates the byte and age gauges. */
  void release() {
    if (closed) {
      return;
    }
    long now = System.currentTimeMillis();
    if (checkpoints.isEmpty() || checkpoints.peekLast().lsn < appendedLsn) {
      checkpoints.addLast(new Checkpoint(appendedLsn, now));
    }
    long need = Math.min(needed.getAsLong(), appendedLsn);
    while (segments.size() > 1 && segments.peekFirst().endLsn <= need) {
      Path gone = segments.pollFirst().path;
      worker.executeBlocking(() -> Files.deleteIfExists(gone), true)
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

  static String fileName(int index, long segno) {
    return String.format("journal-%d-%010d.seg", index, segno);
  }

  // ---- the worker's ----

  private void writeFrame(Path newFile, byte[] payload, boolean force, Promise<Void> written) throws IOException {
    if (newFile != null) {
      if (channel != null) {
        channel.force(false); // an fsync of the next segment must not leave this one's tail unsynced
        channel.close();
      }
      channel = FileChannel.open(newFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      writeFully(fileHeader());
      syncDirectory();
    }
    CRC32C crc = new CRC32C();
    crc.update(payload);
    ByteBuffer header = ByteBuffer.allocate(JournalReader.FRAME_HEADER_BYTES).putInt(payload.length)
      .putInt((int) crc.getValue()).flip();
    writeFully(header, ByteBuffer.wrap(payload));
    if (force) {
      if (written != null) {
        // what waits only for the write (everyMs, off) is answered now, not after the fsync
        context.runOnContext(v -> written.tryComplete());
      }
      force();
    }
  }

  private void force() throws IOException {
    long started = System.nanoTime();
    channel.force(false);
    if (fsyncLatency != null) {
      fsyncLatency.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
    }
  }

  private void writeFully(ByteBuffer... buffers) throws IOException {
    long remaining = 0;
    for (ByteBuffer b : buffers) {
      remaining += b.remaining();
    }
    while (remaining > 0) {
      remaining -= channel.write(buffers);
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

  private void closeFiles(List<Path> delete) throws IOException {
    try {
      if (channel != null) {
        channel.force(false);
        channel.close();
      }
      for (Path file : delete) {
        Files.deleteIfExists(file);
      }
      if (!delete.isEmpty()) {
        syncDirectory();
      }
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
    Segment first = new Segment(dir.resolve(fileName(index, nextSegno++)), 0);
    writeFrame(first.path, payload, true, null);
    first.endLsn = payload.length;
    first.bytes = JournalReader.FILE_HEADER_BYTES + JournalReader.FRAME_HEADER_BYTES + payload.length;
    segments.add(first);
    appendedLsn = cutLsn = writtenLsn = durableLsn = payload.length;
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
