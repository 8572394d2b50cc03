package io.countergateway.internal.write.journal;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The segment files of one journal (src/DESIGN.md §4 "Journal"): their names, the directory lock, making a segment
 * (zero-filled to its capacity, header written, forced, its name made durable), the snapshot segment that starts a
 * run (made under a temporary name and renamed once whole), deletion (followed by a directory sync, so a deleted
 * segment does not come back after a machine crash) and the cut at a clean close. Every method blocks: it runs on the
 * journal's file worker, or on the recovery before the journal exists.
 */
final class SegmentFiles {
  private static final Pattern NAME = Pattern.compile("journal-(\\d+)-(\\d+)\\.seg(\\.tmp)?");
  private static final int ZERO_CHUNK = 1 << 20;

  /** A segment file as named in the directory. */
  record Named(int stream, long segno, Path path, boolean temporary) {
  }

  final JournalFiles files;
  final Path dir;
  final int index;
  final String table;
  private long run;
  private Closeable lock;

  SegmentFiles(JournalFiles files, Path dir, int index, String table) {
    this.files = files;
    this.dir = dir;
    this.index = index;
    this.table = table;
  }

  static String fileName(int stream, long segno) {
    return String.format("journal-%d-%010d.seg", stream, segno);
  }

  Path path(long segno) {
    return dir.resolve(fileName(index, segno));
  }

  /** Takes this stream's lock in the directory: two gateways on one journal directory would replay each other's. */
  void lock() throws IOException {
    files.createDirectories(dir);
    Path file = dir.resolve(JournalInUse.lockName(index));
    lock = files.lock(file);
    if (lock == null) {
      throw new JournalInUse(dir, file);
    }
  }

  void unlock() throws IOException {
    if (lock != null) {
      Closeable held = lock;
      lock = null;
      held.close();
    }
  }

  /** The run the segments made from now on belong to: the segment number of its snapshot segment. */
  void startRun(long firstSegno) {
    run = firstSegno;
  }

  /** The segment files in the directory, of every stream, temporary ones included. */
  List<Named> listed() throws IOException {
    List<Named> found = new ArrayList<>();
    for (Path file : files.list(dir)) {
      Matcher name = NAME.matcher(file.getFileName().toString());
      if (name.matches()) {
        found.add(new Named(Integer.parseInt(name.group(1)), Long.parseLong(name.group(2)), file, name.group(3) != null));
      }
    }
    return found;
  }

  /** A new segment of this run, ready for frames. */
  Segment create(long segno, int capacity) throws IOException {
    return make(path(segno), segno, capacity, null);
  }

  /**
   * The first segment of a run, holding the replay's snapshot {@code frame}: made under a temporary name and renamed
   * once forced, so that a crash leaves either no snapshot segment or a whole one.
   */
  Segment createSnapshot(long segno, int capacity, byte[] frame) throws IOException {
    return make(dir.resolve(fileName(index, segno) + ".tmp"), segno, capacity, frame);
  }

  private Segment make(Path at, long segno, int capacity, byte[] frame) throws IOException {
    Path name = path(segno);
    JournalFiles.Channel channel = files.create(at);
    try {
      // the disk blocks are taken now: a full disk is met here, never half-way through a frame, and a later
      // fdatasync need not write the file's size
      ByteBuffer zeros = ByteBuffer.allocate(Math.min(ZERO_CHUNK, capacity));
      for (long written = 0; written < capacity; written += zeros.limit()) {
        zeros.clear().limit((int) Math.min(zeros.capacity(), capacity - written));
        channel.write(zeros, written);
      }
      channel.write(ByteBuffer.wrap(Frames.fileHeader(new Frames.FileHeader(index, segno, run, table))), 0);
      int position = Frames.FILE_HEADER_BYTES;
      if (frame != null) {
        channel.write(ByteBuffer.wrap(frame), position);
        position += frame.length;
      }
      channel.force(true);
      if (!at.equals(name)) {
        files.rename(at, name);
      }
      files.syncDirectory(dir);
      return new Segment(name, segno, channel, capacity, position, files.fileKey(name));
    } catch (IOException | RuntimeException e) {
      try {
        channel.close();
        files.delete(at);
      } catch (IOException | RuntimeException alsoFailed) {
        e.addSuppressed(alsoFailed);
      }
      throw e;
    }
  }

  /** Deletes the files, then syncs the directory once. */
  void delete(Collection<Path> gone) throws IOException {
    if (gone.isEmpty()) {
      return;
    }
    for (Path file : gone) {
      files.delete(file);
    }
    files.syncDirectory(dir);
  }

  /** Closes a segment that is not written any more and deletes it (no directory sync: see {@link #delete}). */
  void discard(Segment segment) throws IOException {
    segment.channel.close();
    files.delete(segment.path);
  }

  /**
   * At close, once the writer is done: cuts each segment to what it holds (or deletes them all when
   * {@code deleteAll}), deletes the unused ones, syncs the directory and releases the lock.
   */
  void close(List<Segment> live, List<Segment> unused, boolean deleteAll) throws IOException {
    close(live, unused, deleteAll, false);
  }

  /**
   * As {@link #close(List, List, boolean)}; with {@code directoryGone} (the directory no longer names these files)
   * the channels are only closed: no name of the directory is the journal's any more.
   */
  void close(List<Segment> live, List<Segment> unused, boolean deleteAll, boolean directoryGone) throws IOException {
    if (directoryGone) {
      try {
        for (List<Segment> segments : List.of(live, unused)) {
          for (Segment segment : segments) {
            closeChannel(segment);
          }
        }
      } finally {
        unlock();
      }
      return;
    }
    try {
      for (Segment segment : live) {
        if (deleteAll) {
          closeChannel(segment);
          files.delete(segment.path);
        } else {
          cut(segment);
        }
      }
      for (Segment segment : unused) {
        closeChannel(segment);
        files.delete(segment.path);
      }
      files.syncDirectory(dir);
    } finally {
      unlock();
    }
  }

  private void cut(Segment segment) throws IOException {
    if (segment.closed) {
      // rolled away from and closed by the writer after its last frame
      try (JournalFiles.Channel channel = files.open(segment.path)) {
        channel.truncate(segment.position);
        channel.force(true);
      }
    } else {
      segment.channel.truncate(segment.position);
      segment.channel.force(true);
      closeChannel(segment);
    }
  }

  private static void closeChannel(Segment segment) throws IOException {
    if (!segment.closed) {
      segment.closed = true;
      segment.channel.close();
    }
  }
}
