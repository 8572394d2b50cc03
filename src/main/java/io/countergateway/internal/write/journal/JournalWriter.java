package io.countergateway.internal.write.journal;

import io.micrometer.core.instrument.Timer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The journal's writer thread: group commit without the event loop on the way (src/DESIGN.md §4 "Journal"). The event
 * loop queues frames (no system call); the writer takes everything queued, writes it, forces it when asked
 * ({@code fsync: always}: every time), tells the event loop how far the journal is written and forced, and goes
 * straight on while more was queued meanwhile — so one fsync covers every frame queued during the previous one, and
 * the next write never waits for the event loop to hear of the last. An idle writer is started by the first frame
 * queued, at once: its fsync then overlaps the event loop's reading of the requests after it.
 *
 * <p>Every pass that forces (and one the event loop asks for, about once a second) also asks the directory whether it still names the segment last written by that file
 * ({@link JournalFiles#fileKey}): a {@code journal.dir} removed or replaced under a running gateway leaves its frames
 * in files no restart will find, and the event loop hears of it before it hears of that pass's progress.
 *
 * <p>A segment rolled away from is forced and closed once its last frames are written, before any frame of a later
 * segment is written: a replay never finds a forced frame whose predecessors did not reach the disk, and never a later
 * segment's frames after a segment end the crash tore (written in one pass and forced one after the other, the page
 * cache could keep the later segment's pages and lose the earlier one's last, and the replay would read a damaged
 * region that may have hidden a forced flush where nothing was ever forced). A failed write or force stops the writer
 * for good; the event loop hears of it once.
 *
 * <p>The queue is shared with the event loop under one lock; the rest is the writer thread's.
 */
final class JournalWriter {
  private static final int SPARE_CHUNKS = 4;
  private static final int SPARE_CHUNK_BYTES = 64 << 10;

  /** What the event loop hears, on its context. */
  interface Listener {
    /** Everything below {@code written} is written, below {@code forced} forced ({@code -1}: nothing new forced). */
    void progress(long written, long forced);

    void failed(Throwable cause);

    /** {@code file} is not what the directory names any more (removed, or replaced); told once, before progress. */
    void unreachable(java.nio.file.Path file);
  }

  /**
   * Frames queued for the writer: contiguous bytes of one segment from {@code offset}. Written chunks go back to the
   * event loop for the next group (up to {@link #SPARE_CHUNKS} of at most {@link #SPARE_CHUNK_BYTES}): a new 4 KiB
   * buffer per group was 2.6 % of the event loops' allocated bytes in a profile under load.
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

  private final WorkerExecutor executor;
  private final JournalFiles files;
  private final Context context;
  private final boolean always;
  private final Listener listener;
  private volatile Timer fsyncLatency;

  // between the event loop and the writer, under lock
  private final Object lock = new Object();
  private ArrayDeque<Chunk> queue = new ArrayDeque<>();
  private final ArrayDeque<Chunk> spareChunks = new ArrayDeque<>();
  private long queueEndLsn;
  private boolean forceAsked;
  private boolean checkAsked;
  private Segment checkSegment;
  private List<Segment> toClose = new ArrayList<>();
  private boolean writing;
  private boolean stopped;

  // the writer's
  private Segment lastWritten;
  private boolean unreachableTold;

  JournalWriter(WorkerExecutor executor, JournalFiles files, Context context, boolean always, Listener listener) {
    this.executor = executor;
    this.files = files;
    this.context = context;
    this.always = always;
    this.listener = listener;
  }

  void fsyncLatency(Timer timer) {
    fsyncLatency = timer;
  }

  // ---- the event loop's ----

  /**
   * Queues one frame (its header, then its payload) at {@code offset} in {@code segment}; everything below
   * {@code endLsn} is then queued. Starts the writer if it is idle.
   */
  void queue(Segment segment, int offset, byte[] header, int headerLength, byte[] payload, int length, long endLsn) {
    boolean start;
    synchronized (lock) {
      Chunk last = queue.peekLast();
      if (last == null || last.segment != segment || last.offset + last.bytes.length() != offset) {
        Chunk spare = spareChunks.pollFirst();
        last = (spare != null ? spare : new Chunk()).of(segment, offset);
        queue.addLast(last);
      }
      last.bytes.put(header, 0, headerLength);
      last.bytes.put(payload, 0, length);
      queueEndLsn = endLsn;
      start = startIfIdle();
    }
    if (start) {
      // at once, not after this event-loop turn: the fsync of the first frames then overlaps the reading of the
      // rest. Deferred to the turn's end, groups grew (up to 1.85 x) but accepted increments/s fell to about half
      // (the disk waited for the loop, and the loop for the disk)
      start();
    }
  }

  /** {@code segment} is rolled away from: forced and closed after its last frames are written. */
  void close(Segment segment) {
    synchronized (lock) {
      toClose.add(segment);
    }
  }

  /** The next write is forced (under always every write is); starts the writer if it is idle. */
  void askForce() {
    boolean start;
    synchronized (lock) {
      if (always && writing) {
        return;
      }
      forceAsked = true;
      start = startIfIdle();
    }
    if (start) {
      start();
    }
  }

  /** The next pass checks the directory still names {@code current}, without forcing anything. */
  void askCheck(Segment current) {
    boolean start;
    synchronized (lock) {
      checkAsked = true;
      checkSegment = current;
      start = startIfIdle();
    }
    if (start) {
      start();
    }
  }

  /** Under lock: whether the caller must start the writer. */
  private boolean startIfIdle() {
    if (writing || stopped) {
      return false;
    }
    writing = true;
    return true;
  }

  /** Completes once the writer has written everything queued so far (or stopped). */
  Future<Void> idle() {
    return executor.executeBlocking(() -> null, false);
  }

  private void start() {
    executor.executeBlocking(() -> {
      writeLoop();
      return null;
    }, false);
  }

  // ---- the writer's ----

  private void writeLoop() {
    ArrayDeque<Chunk> written = null;
    while (true) {
      ArrayDeque<Chunk> chunks;
      List<Segment> closing;
      boolean force;
      boolean check;
      Segment asked;
      long upTo;
      synchronized (lock) {
        recycle(written);
        if (queue.isEmpty() && !forceAsked && !checkAsked && toClose.isEmpty() || stopped) {
          writing = false;
          return;
        }
        chunks = queue;
        closing = toClose;
        force = always || forceAsked;
        check = force || checkAsked;
        asked = checkSegment;
        checkSegment = null;
        upTo = queueEndLsn;
        queue = new ArrayDeque<>();
        toClose = new ArrayList<>();
        forceAsked = false;
        checkAsked = false;
      }
      try {
        for (Chunk chunk : chunks) {
          // the segments rolled away from before this one are on disk before any of its frames is written
          int rolledBefore = closing.indexOf(chunk.segment);
          closeRolled(closing, rolledBefore < 0 ? closing.size() : rolledBefore);
          chunk.segment.channel.write(ByteBuffer.wrap(chunk.bytes.array(), 0, chunk.bytes.length()), chunk.offset);
          chunk.segment.dirty = true;
          lastWritten = chunk.segment;
        }
        closeRolled(closing, closing.size());
        if (force && lastWritten != null && lastWritten.dirty) {
          force(lastWritten);
        }
        Segment checked = asked != null ? asked : lastWritten;
        if (check && checked != null && !unreachableTold
          && !java.util.Objects.equals(checked.fileKey, files.fileKey(checked.path))) {
          unreachableTold = true;
          java.nio.file.Path file = checked.path;
          context.runOnContext(v -> listener.unreachable(file));
        }
        long forced = force ? upTo : -1;
        context.runOnContext(v -> listener.progress(upTo, forced));
        written = chunks;
      } catch (IOException | RuntimeException ioFailure) {
        synchronized (lock) {
          writing = false;
          stopped = true;
        }
        context.runOnContext(v -> listener.failed(ioFailure));
        return;
      }
    }
  }

  /** Forces and closes the first {@code count} segments rolled away from (in the order they were), and forgets them. */
  private void closeRolled(List<Segment> closing, int count) throws IOException {
    for (int i = 0; i < count; i++) {
      Segment segment = closing.get(i);
      if (segment.dirty) {
        force(segment);
      }
      segment.closed = true;
      segment.channel.close();
    }
    closing.subList(0, count).clear();
  }

  /** Under lock: chunks the writer is done with, kept for the event loop's next groups. */
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
    Timer timer = fsyncLatency;
    if (timer != null) {
      timer.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
    }
  }
}
