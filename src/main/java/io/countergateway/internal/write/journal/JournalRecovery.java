package io.countergateway.internal.write.journal;

import io.countergateway.config.ConfigException;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.config.JournalOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * The replay at start (src/DESIGN.md §4 "Replay"), on the journal's file worker before the journal takes anything: takes
 * the stream's lock, reads the streams this ingest verticle inherits (its own, and those of verticles a previous run had
 * and this one has not) in one pass per segment, reduces them to what they still hold, writes that as the snapshot at
 * the head of a new run's first segment, deletes what it read, and makes the reserve segment.
 */
final class JournalRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(JournalRecovery.class);
  private static final int SNAPSHOT_BATCH = 1_000;
  static final int FIRST_SEGMENT_BYTES = 256 << 10;
  /** The most the restart room takes, whatever {@code journal.segmentBytes}. */
  static final long MAX_RESTART_ROOM_BYTES = 16L << 20;

  /** What the journal starts from. {@code reserve} and {@code restartRoom} are null when there was no room for them. */
  record Result(Journal.Recovered recovered, Segment current, Segment reserve, Segment restartRoom, long nextSegno,
                long snapshotBytes, JournalTarget writtenFor) {
  }

  /** One stream read: what it holds, the tables its files were written for, the files that held no frame. */
  private record StreamRead(Reduction reduction, Set<String> tables, List<Path> empty, int files, long examined) {
  }

  private JournalRecovery() {
  }

  /**
   * The reserve: four segments' worth. Draining the oldest segment on a full disk records a flush for each counter it
   * holds, once while the reserve is in use (no copy): about a segment, plus the flush that reaches past it and the
   * increments that waited for room; what is left is at least the segment the drain then frees, so a next segment can
   * always be made (see {@link Segments}).
   */
  static int reserveBytes(JournalOptions options) {
    return (int) (4 * options.getSegmentBytes());
  }

  /** The restart room: the room the next start's snapshot has on a full disk. */
  static int restartRoomBytes(JournalOptions options) {
    return (int) Math.min(options.getSegmentBytes(), MAX_RESTART_ROOM_BYTES);
  }

  /**
   * The most one flush record takes (its copy as much again): a quarter segment, so the record and its copy fit one
   * segment, and what the reserve must hold stays bounded (see {@link #reserveBytes}).
   */
  static int flushRecordBytes(JournalOptions options) {
    return (int) (options.getSegmentBytes() / 4);
  }

  static Result recover(SegmentFiles segments, JournalOptions options, JournalTarget target, int instances)
    throws IOException {
    long started = System.nanoTime();
    segments.lock();
    try {
      return recoverLocked(segments, options, target, instances, started);
    } catch (IOException | RuntimeException e) {
      segments.unlock();
      throw e;
    }
  }

  private static Result recoverLocked(SegmentFiles segments, JournalOptions options, JournalTarget target, int instances,
                                     long started) throws IOException {
    boolean always = options.getFsync() == JournalOptions.Fsync.ALWAYS;
    Map<Integer, TreeMap<Long, Path>> streams = new TreeMap<>();
    List<Path> temporary = new ArrayList<>();
    long highest = 0;
    for (SegmentFiles.Named file : segments.listed()) {
      highest = Math.max(highest, file.segno());
      if (file.stream() % instances != segments.index) {
        continue;
      }
      if (file.temporary()) {
        temporary.add(file.path()); // a snapshot a crash cut before its rename: the files it was made from are here
      } else {
        streams.computeIfAbsent(file.stream(), s -> new TreeMap<>()).put(file.segno(), file.path());
      }
    }
    Map<Integer, StreamRead> reads = new TreeMap<>();
    Set<String> superseded = new HashSet<>();
    for (Map.Entry<Integer, TreeMap<Long, Path>> stream : streams.entrySet()) {
      StreamRead read = read(segments.files, stream.getValue(), always);
      reads.put(stream.getKey(), read);
      superseded.addAll(read.reduction().superseded);
    }
    // a snapshot of another stream (an earlier run had other verticles) names files it carried over: read without them
    for (Map.Entry<Integer, TreeMap<Long, Path>> stream : streams.entrySet()) {
      TreeMap<Long, Path> kept = new TreeMap<>(stream.getValue());
      kept.values().removeIf(file -> superseded.contains(file.getFileName().toString()));
      if (kept.size() < stream.getValue().size()) {
        reads.put(stream.getKey(), read(segments.files, kept, always));
      }
    }

    Map<CounterKey, Long> pending = new LinkedHashMap<>();
    List<Flush> unsettled = new ArrayList<>();
    Set<FlushId> neverSent = new HashSet<>();
    Set<String> tables = new HashSet<>();
    List<Path> empty = new ArrayList<>(temporary);
    ReplayReport report = ReplayReport.NOTHING;
    JournalTarget heldFor = null;
    for (StreamRead read : reads.values()) {
      Reduction reduction = read.reduction();
      if (reduction.writtenFor != null && (!reduction.pending.isEmpty() || !reduction.unsettled.isEmpty())) {
        heldFor = reduction.writtenFor; // the streams of one directory were written by one gateway's runs
      }
      reduction.pending.forEach((key, delta) -> pending.merge(key, delta, (a, b) -> a + b == 0 ? null : a + b));
      unsettled.addAll(reduction.unsettled.values());
      reduction.neverSent.forEach(id -> neverSent.add(FlushId.parse(id)));
      tables.addAll(read.tables());
      empty.addAll(read.empty());
      report = report.plus(new ReplayReport(read.files(), reduction.frames, read.examined(), reduction.damaged,
        reduction.tail, reduction.reconstructed, reduction.dropped));
    }
    checkTable(segments, tables, pending.size(), unsettled.size());
    JournalTarget.Held held = JournalTarget.Held.of(pending.keySet(), unsettled);
    ConfigException refused = target.refusal(heldFor, held, segments.dir);
    if (refused != null) {
      throw refused;
    }
    JournalTarget recorded = target.recorded(heldFor, held);
    List<Path> read = streams.values().stream().flatMap(files -> files.values().stream())
      .filter(file -> !empty.contains(file)).toList();

    byte[] frame = snapshotFrame(pending, unsettled, neverSent, read, recorded);
    // what holds nothing goes first: on a full disk, the last run's spare and reserve make the room for the snapshot
    segments.delete(empty);
    long segno = highest + 1;
    segments.startRun(segno);
    int capacity = (int) Math.max(Math.min(options.getSegmentBytes(), FIRST_SEGMENT_BYTES),
      Frames.FILE_HEADER_BYTES + (long) frame.length);
    Segment current;
    try {
      current = segments.createSnapshot(segno, capacity, frame);
    } catch (IOException e) {
      throw new IOException(JournalOptions.DIR.name() + " (" + segments.dir + "): cannot write the replay's snapshot ("
        + capacity + " bytes; " + pending.size() + " counters and " + unsettled.size() + " flushes carried over): " + e
        + "; free that much room on its disk, the journal's files are kept as they are", e);
    }
    segments.delete(read);
    Segment reserve = unusedSegment(segments, segno + 1, reserveBytes(options));
    Segment restartRoom = reserve == null ? null : unusedSegment(segments, segno + 2, restartRoomBytes(options));
    log(segments, report, read.size() + empty.size(), pending.size(), unsettled.size(), started);
    return new Result(new Journal.Recovered(pending, unsettled, neverSent, report), current, reserve, restartRoom, segno + 3,
      frame.length - Frames.FRAME_HEADER_BYTES, recorded);
  }

  /** The reserve or the restart room (see {@link Segments}); null when there is no room for it. */
  private static Segment unusedSegment(SegmentFiles segments, long segno, int capacity) {
    try {
      return segments.create(segno, capacity);
    } catch (IOException noRoom) {
      LOG.atError().addKeyValue("event", "journal_no_room").addKeyValue("dir", segments.dir.toString())
        .log("cannot make the journal's reserve segments ({}); accepted increments are refused until they can be made",
          noRoom.toString());
      return null;
    }
  }

  /** A segment file of a stream, read, and where it goes in the stream's order. */
  private record Read(long segno, Path path, ByteBuffer all, Frames.FileHeader header, long firstSequence) {
    boolean v1() {
      return header == null && Frames.startsWith(all, Frames.V1_FILE_MAGIC);
    }
  }

  /**
   * Reads one stream's files in the order their frames were written: runs in the order they began, and within a run
   * by the sequence number of each file's first good frame — a reserve segment is made before the spares written
   * ahead of it, so segment numbers alone do not give that order. A file whose header is damaged belongs to the
   * latest run begun at or before its segment number; one with no good frame goes where the next file that has one
   * goes.
   */
  private static StreamRead read(JournalFiles files, TreeMap<Long, Path> paths, boolean always) throws IOException {
    Reduction reduction = new Reduction(!always);
    FrameScanner scanner = new FrameScanner();
    List<Read> reads = new ArrayList<>();
    TreeSet<Long> runs = new TreeSet<>();
    for (Map.Entry<Long, Path> file : paths.entrySet()) {
      ByteBuffer all = files.read(file.getValue());
      Frames.FileHeader header = Frames.readFileHeader(all);
      if (header != null) {
        runs.add(header.run());
      }
      long first = header == null && Frames.startsWith(all, Frames.V1_FILE_MAGIC)
        || all.limit() <= Frames.FILE_HEADER_BYTES ? -1 : scanner.firstSequence(all, Frames.FILE_HEADER_BYTES);
      reads.add(new Read(file.getKey(), file.getValue(), all, header, first));
    }
    Map<Read, long[]> order = new java.util.IdentityHashMap<>();
    long following = Long.MAX_VALUE;
    for (int i = reads.size() - 1; i >= 0; i--) {
      Read read = reads.get(i);
      Long floor = runs.floor(read.segno());
      long run = read.v1() ? Long.MIN_VALUE : read.header() != null ? read.header().run()
        : floor == null ? Long.MIN_VALUE + 1 : floor;
      if (i < reads.size() - 1 && order.get(reads.get(i + 1))[0] != run) {
        following = Long.MAX_VALUE;
      }
      following = read.firstSequence() >= 0 ? read.firstSequence() : following;
      order.put(read, new long[] {run, following});
    }
    reads.sort(java.util.Comparator.<Read>comparingLong(read -> order.get(read)[0])
      .thenComparingLong(read -> order.get(read)[1]).thenComparingLong(Read::segno));

    Set<String> tables = new HashSet<>();
    List<Path> empty = new ArrayList<>();
    Long run = null;
    for (Read read : reads) {
      long framesBefore = reduction.frames;
      long damageBefore = reduction.damageReported;
      long readRun = order.get(read)[0];
      if (run == null || run != readRun) {
        reduction.runStart(read.segno() == readRun);
        run = readRun;
      }
      if (read.v1()) {
        scanner.scanV1(read.all(), reduction);
      } else if (read.all().limit() > Frames.FILE_HEADER_BYTES) {
        // a damaged file header: its frames are still found by their own headers
        scanner.scan(read.all(), Frames.FILE_HEADER_BYTES, reduction);
      } else if (read.all().limit() > 0 && read.header() == null) {
        reduction.damaged(read.all().limit(), List.of(), false);
      }
      if (reduction.frames == framesBefore && reduction.damageReported == damageBefore) {
        empty.add(read.path());
      } else if (read.header() != null) {
        tables.add(read.header().table());
      }
    }
    reduction.finish();
    return new StreamRead(reduction, tables, empty, paths.size(), scanner.examined);
  }

  /**
   * Unsettled work goes to the table it was journaled for: under another {@code database.table} it would be written
   * into a table it was never meant for, and its flush ids looked for where they are not.
   */
  private static void checkTable(SegmentFiles segments, Set<String> tables, int counters, int flushes) {
    Set<String> others = new HashSet<>(tables);
    others.remove(segments.table);
    if (others.isEmpty() || counters == 0 && flushes == 0) {
      return;
    }
    String written = String.join("', '", others);
    throw new ConfigException(DatabaseOptions.TABLE.name(), "is '" + segments.table + "', but the journal in "
      + JournalOptions.DIR.name() + " (" + segments.dir + ") holds " + counters + " counters and " + flushes
      + " flushes not yet written to table '" + written + "': set " + DatabaseOptions.TABLE.name() + " back to '"
      + written + "' until a clean stop has written them, or move the journal-*.seg files out of "
      + JournalOptions.DIR.name() + " to give them up");
  }

  /**
   * The snapshot frame: what the streams still hold, the files it was made from (which it supersedes), and what the
   * run's work is for.
   */
  private static byte[] snapshotFrame(Map<CounterKey, Long> pending, List<Flush> unsettled, Set<FlushId> neverSent,
                                      List<Path> read, JournalTarget target) {
    JournalRecords.Out payload = new JournalRecords.Out(1024);
    JournalRecords.snapshotBegin(payload);
    for (Flush flush : unsettled) {
      JournalRecords.formed(payload, flush.id().toString(), flush.rows(), List.of());
      if (neverSent.contains(flush.id())) {
        JournalRecords.attempts(payload, flush.id().toString(), false);
      }
    }
    List<Increment> batch = new ArrayList<>(SNAPSHOT_BATCH);
    for (Map.Entry<CounterKey, Long> held : pending.entrySet()) {
      batch.add(new Increment(held.getKey(), held.getValue()));
      if (batch.size() == SNAPSHOT_BATCH) {
        JournalRecords.increments(payload, batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      JournalRecords.increments(payload, batch);
    }
    JournalRecords.snapshotEnd(payload, read.stream().map(file -> file.getFileName().toString()).toList());
    JournalRecords.writtenFor(payload, target);
    CRC32C crc = new CRC32C();
    crc.update(payload.array(), 0, payload.length());
    byte[] header = new byte[Frames.FRAME_HEADER_BYTES];
    Frames.frameHeader(header, JournalRecords.SNAPSHOT_BEGIN, new byte[0], payload.length(), 0, 0,
      (int) crc.getValue(), crc);
    byte[] frame = new byte[Frames.FRAME_HEADER_BYTES + payload.length()];
    System.arraycopy(header, 0, frame, 0, header.length);
    System.arraycopy(payload.array(), 0, frame, header.length, payload.length());
    return frame;
  }

  private static void log(SegmentFiles segments, ReplayReport report, int files, int counters, int flushes,
                          long started) {
    if (files == 0) {
      return;
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    (report.mayHaveLost() ? LOG.atWarn() : LOG.atInfo()).addKeyValue("event", "journal_replay")
      .addKeyValue("verticle", segments.index).addKeyValue("files", files).addKeyValue("frames", report.frames())
      .addKeyValue("counters_held", counters).addKeyValue("flushes_to_resolve", flushes)
      .addKeyValue("damaged_bytes", report.damaged().bytes()).addKeyValue("damaged_frames", report.damaged().frames())
      .addKeyValue("damaged_increments", report.damaged().increments())
      .addKeyValue("tail_bytes", report.tail().bytes()).addKeyValue("tail_increments", report.tail().increments())
      .addKeyValue("reconstructed_flushes", report.reconstructed().size())
      .addKeyValue("dropped_counters", report.dropped().counters())
      .addKeyValue("bytes_examined", report.bytesExamined()).addKeyValue("duration_ms", tookMs)
      .log(report.describe());
  }
}
