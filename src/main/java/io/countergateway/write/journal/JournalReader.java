package io.countergateway.write.journal;

import io.countergateway.model.CounterKey;
import io.countergateway.store.Flush;
import io.countergateway.store.FlushRow;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * Reads the segment files of one journal stream (one ingest verticle's) and reduces them to what is still held: the
 * accepted deltas in no flush, and the flushes formed but not settled. Never throws on what it reads: a frame that is
 * cut short (torn: the process or the machine died while writing it) or fails its checksum ends the file there, and
 * what was lost is counted for the log (src/DESIGN.md §4 "Journal").
 */
final class JournalReader {
  static final byte[] MAGIC = {'C', 'G', 'J', '1'};
  static final int FILE_HEADER_BYTES = 8;
  static final int FRAME_HEADER_BYTES = 8;

  /** What one stream still holds, and what reading it found. */
  static final class Reduction implements JournalRecords.Visitor {
    final LinkedHashMap<CounterKey, Long> pending = new LinkedHashMap<>();
    /** Formed or replacing flushes not settled, in journal order; parents replaced by children are removed. */
    final LinkedHashMap<String, Flush> unsettled = new LinkedHashMap<>();
    final Map<String, List<String>> children = new LinkedHashMap<>();
    final Set<String> superseded = new HashSet<>();
    private Reduction stash;
    long records;
    long lostBytes;
    long lostIncrements;
    int lostFrames;

    @Override
    public void increment(CounterKey key, long delta) {
      records++;
      pending.merge(key, delta, (a, b) -> a + b == 0 ? null : a + b);
    }

    @Override
    public void formed(String id, List<FlushRow> rows, List<CounterKey> zeroKeys) {
      records++;
      for (FlushRow row : rows) {
        pending.remove(new CounterKey(row.type(), row.id(), row.bucket()));
      }
      zeroKeys.forEach(pending::remove);
      if (!id.isEmpty()) {
        unsettled.put(id, new Flush(id, rows));
      }
    }

    @Override
    public void replaced(String parent, List<Flush> replacing) {
      records++;
      if (unsettled.remove(parent) == null && !children.containsKey(parent)) {
        return; // a flush this stream never journaled (commit-only): nothing of it to resolve
      }
      List<String> ids = new ArrayList<>();
      for (Flush child : replacing) {
        unsettled.put(child.id(), child);
        ids.add(child.id());
      }
      children.computeIfAbsent(parent, p -> new ArrayList<>()).addAll(ids);
    }

    @Override
    public void settled(String id) {
      records++;
      unsettled.remove(id);
      List<String> replacing = children.remove(id);
      if (replacing != null) {
        replacing.forEach(this::settled);
      }
    }

    @Override
    public void snapshotBegin() {
      stash = copy();
      pending.clear();
      unsettled.clear();
      children.clear();
    }

    @Override
    public void snapshotEnd(List<String> files) {
      stash = null;
      superseded.addAll(files);
    }

    /** End of the stream: a snapshot begun but not ended never happened (its replay had not finished). */
    void finish() {
      if (stash != null) {
        pending.clear();
        pending.putAll(stash.pending);
        unsettled.clear();
        unsettled.putAll(stash.unsettled);
        children.clear();
        children.putAll(stash.children);
        stash = null;
      }
    }

    private Reduction copy() {
      Reduction copy = new Reduction();
      copy.pending.putAll(pending);
      copy.unsettled.putAll(unsettled);
      copy.children.putAll(children);
      return copy;
    }
  }

  private JournalReader() {
  }

  /** Reads {@code files} (one stream, oldest first) into {@code into}. */
  static void read(List<Path> files, Reduction into) throws IOException {
    for (Path file : files) {
      readFile(file, into);
    }
    into.finish();
  }

  /** Reads one segment file, frame by frame, up to its end or its first bad frame. */
  static void readFile(Path file, Reduction into) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      if (size == 0) {
        return;
      }
      if (size > Integer.MAX_VALUE) {
        throw new IOException(file + " is larger than 2 GiB");
      }
      ByteBuffer all = channel.map(FileChannel.MapMode.READ_ONLY, 0, size).order(ByteOrder.BIG_ENDIAN);
      if (size < FILE_HEADER_BYTES || !hasMagic(all)) {
        lose(into, size, 1, null);
        return;
      }
      int position = FILE_HEADER_BYTES;
      CRC32C crc = new CRC32C();
      while (position + FRAME_HEADER_BYTES <= size) {
        int length = all.getInt(position);
        int checksum = all.getInt(position + 4);
        if (length == 0 && checksum == 0) {
          // never written; bytes after it are a frame cut short (its header is written last) or, after a machine
          // crash, pages that reached the disk while an earlier one did not
          long written = writtenEnd(all, position);
          if (written > position) {
            lose(into, written - position, 1, null);
          }
          return;
        }
        int start = position + FRAME_HEADER_BYTES;
        // what is lost runs to the last byte ever written: a segment is made of zeros up to its capacity
        long written = writtenEnd(all, position);
        if (length < 0 || (long) start + length > size) {
          lose(into, written - position, 1, all.slice(start, (int) size - start));
          return;
        }
        crc.reset();
        crc.update(all.slice(start, length));
        if ((int) crc.getValue() != checksum) {
          lose(into, written - position, 1, all.slice(start, length));
          return;
        }
        try {
          // the checksum held, so a record that does not parse is a bug or a newer format: the rest is not read
          JournalRecords.read(all.slice(start, length), into);
        } catch (RuntimeException malformed) {
          lose(into, written - position, 1, null);
          return;
        }
        position = start + length;
      }
      long written = writtenEnd(all, position);
      if (position < written) {
        lose(into, written - position, 1, null);
      }
    }
  }

  /** The end of the last non-zero byte at or after {@code from}; {@code from} when there is none. */
  private static long writtenEnd(ByteBuffer all, int from) {
    int end = all.limit();
    while (end > from && all.get(end - 1) == 0) {
      end--;
    }
    return end;
  }

  private static boolean hasMagic(ByteBuffer all) {
    for (int i = 0; i < MAGIC.length; i++) {
      if (all.get(i) != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  /** Counts what is lost; the increments a torn frame still shows are counted as far as they can be read. */
  private static void lose(Reduction into, long bytes, int frames, ByteBuffer partial) {
    into.lostBytes += bytes;
    into.lostFrames += frames;
    if (partial == null) {
      return;
    }
    long[] seen = {0};
    try {
      JournalRecords.read(partial, new JournalRecords.Visitor() {
        @Override
        public void increment(CounterKey key, long delta) {
          seen[0]++;
        }

        @Override
        public void formed(String id, List<FlushRow> rows, List<CounterKey> zeroKeys) {
        }

        @Override
        public void replaced(String parent, List<Flush> children) {
        }

        @Override
        public void settled(String id) {
        }

        @Override
        public void snapshotBegin() {
        }

        @Override
        public void snapshotEnd(List<String> files) {
        }
      });
    } catch (RuntimeException cutShort) {
      // as far as it goes
    }
    into.lostIncrements += seen[0];
  }
}
