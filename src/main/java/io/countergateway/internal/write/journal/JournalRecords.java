package io.countergateway.internal.write.journal;

import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The journal's records, written into a frame's payload and read back (src/DESIGN.md §4 "Journal"); a frame holds one
 * record, but for the snapshot at the head of a run, which holds a run's worth between its begin and end. A record is a
 * type byte and its fields; numbers are variable-length (zig-zag for signed ones), strings a length and UTF-8 bytes,
 * a counter key its namespace, id and bucket (0 for a plain counter, else the zig-zagged bucket + 1).
 *
 * <ul>
 *   <li>{@code INCREMENTS}: accepted increments, as taken by the coalescer (one record per request);</li>
 *   <li>{@code FORMED}: a flush as formed — its id, its rows, and the journaled counters it took whose deltas summed to
 *   0 (no row); an empty id says "taken, nothing to write";</li>
 *   <li>{@code REPLACED}: a flush proven uncommitted was replaced by others (a split): the parent id and each child's
 *   id and rows;</li>
 *   <li>{@code SETTLED}: the flush formed under this id (and every flush that replaced it) is answered for good;</li>
 *   <li>{@code ATTEMPTS}: whether an attempt of the flush under this id may have left the process. A flush without
 *   such a record may have (the conservative reading, and what a flush formed and attempted at once is); {@code
 *   false} says that none of its attempts left the process so far, and is followed by {@code true}, forced, before
 *   the next statement of it is sent. The last one read is what a replay knows.</li>
 *   <li>{@code SNAPSHOT_BEGIN} … {@code SNAPSHOT_END}: what a replay carried over; a complete snapshot supersedes
 *   everything before it in its stream and the files it names.</li>
 *   <li>{@code WRITTEN_FOR}: what the run's work is for ({@link JournalTarget}: the database's kind, host, port, name
 *   and id, the table, each namespace's window); in the snapshot's frame, after {@code SNAPSHOT_END}, so a release
 *   that does not know it still reads the whole snapshot before it stops at this record.</li>
 * </ul>
 */
public final class JournalRecords {
  static final byte INCREMENTS = 1;
  static final byte FORMED = 2;
  static final byte REPLACED = 3;
  static final byte SETTLED = 4;
  static final byte SNAPSHOT_BEGIN = 5;
  static final byte SNAPSHOT_END = 6;
  /** Not 7 or 8: those are frame kinds of their own ({@link Frames#TAKEN}, {@link Frames#COPY}). */
  static final byte ATTEMPTS = 9;
  static final byte WRITTEN_FOR = 10;

  private JournalRecords() {
  }

  /** What reading a payload calls, record by record. */
  interface Visitor {
    void increment(CounterKey key, long delta);

    void formed(String id, List<FlushRow> rows, List<CounterKey> zeroKeys);

    void replaced(String parent, List<Flush> children);

    void settled(String id);

    /** {@code mayHaveBeenSent}: whether an attempt of flush {@code id} may have left the process. */
    void attempts(String id, boolean mayHaveBeenSent);

    void snapshotBegin();

    void snapshotEnd(List<String> files);

    /** What the run's work is for; journals of releases before it have none. */
    default void writtenFor(JournalTarget target) {
    }
  }

  /** A generous upper bound of an increment's bytes in a record, for the journal's byte bound before it is taken. */
  public static int estimate(Increment increment) {
    return 24 + 3 * (increment.key().type().length() + increment.key().id().length());
  }

  /** An upper bound of one counter's bytes in a flush record (a row, or a key taken with it). */
  public static int rowBytesAtMost(CounterKey key) {
    // two length varints, the bucket, the slot and the delta at their longest
    return utf8Length(key.type()) + utf8Length(key.id()) + 5 + 5 + 10 + 3 + 10;
  }

  private static int utf8Length(String text) {
    int bytes = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      bytes += c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3;
    }
    return bytes;
  }

  /** A growable byte array, written on one thread. */
  static final class Out {
    private byte[] bytes;
    private int length;

    Out(int capacity) {
      bytes = new byte[capacity];
    }

    int length() {
      return length;
    }

    byte[] copy() {
      return Arrays.copyOf(bytes, length);
    }

    /** The backing array: its first {@link #length()} bytes are the records. */
    byte[] array() {
      return bytes;
    }

    void reset() {
      length = 0;
    }

    private void ensure(int more) {
      if (length + more > bytes.length) {
        bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + more));
      }
    }

    void put(byte[] from, int offset, int count) {
      ensure(count);
      System.arraycopy(from, offset, bytes, length, count);
      length += count;
    }

    void put(byte b) {
      ensure(1);
      bytes[length++] = b;
    }

    void varint(long value) {
      ensure(10);
      while ((value & ~0x7FL) != 0) {
        bytes[length++] = (byte) ((value & 0x7F) | 0x80);
        value >>>= 7;
      }
      bytes[length++] = (byte) value;
    }

    void signed(long value) {
      varint((value << 1) ^ (value >> 63));
    }

    void string(String text) {
      byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
      varint(utf8.length);
      ensure(utf8.length);
      System.arraycopy(utf8, 0, bytes, length, utf8.length);
      length += utf8.length;
    }

    void key(String type, String id, long bucket) {
      string(type);
      string(id);
      varint(bucket == CounterKey.PLAIN ? 0 : ((bucket << 1) ^ (bucket >> 63)) + 1);
    }
  }

  static void increments(Out out, List<Increment> increments) {
    out.put(INCREMENTS);
    out.varint(increments.size());
    for (Increment increment : increments) {
      CounterKey key = increment.key();
      out.key(key.type(), key.id(), key.bucket());
      out.signed(increment.delta());
    }
  }

  static void increment(Out out, Increment increment) {
    out.put(INCREMENTS);
    out.varint(1);
    CounterKey key = increment.key();
    out.key(key.type(), key.id(), key.bucket());
    out.signed(increment.delta());
  }

  static void formed(Out out, String id, List<FlushRow> rows, List<CounterKey> zeroKeys) {
    out.put(FORMED);
    out.string(id);
    rows(out, rows);
    out.varint(zeroKeys.size());
    for (CounterKey key : zeroKeys) {
      out.key(key.type(), key.id(), key.bucket());
    }
  }

  static void replaced(Out out, String parent, List<Flush> children) {
    out.put(REPLACED);
    out.string(parent);
    out.varint(children.size());
    for (Flush child : children) {
      out.string(child.id().toString());
      rows(out, child.rows());
    }
  }

  static void settled(Out out, String id) {
    out.put(SETTLED);
    out.string(id);
  }

  static void attempts(Out out, String id, boolean mayHaveBeenSent) {
    out.put(ATTEMPTS);
    out.string(id);
    out.put((byte) (mayHaveBeenSent ? 1 : 0));
  }

  static void snapshotBegin(Out out) {
    out.put(SNAPSHOT_BEGIN);
  }

  static void snapshotEnd(Out out, List<String> files) {
    out.put(SNAPSHOT_END);
    out.varint(files.size());
    files.forEach(out::string);
  }

  static void writtenFor(Out out, JournalTarget target) {
    out.put(WRITTEN_FOR);
    out.string(target.kind());
    out.string(target.host());
    out.varint(target.port());
    out.string(target.name());
    out.string(target.table());
    out.string(target.databaseId() == null ? "" : target.databaseId());
    out.varint(target.windows().size());
    new java.util.TreeMap<>(target.windows()).forEach((namespace, window) -> {
      out.string(namespace);
      out.string(window);
    });
  }

  private static void rows(Out out, List<FlushRow> rows) {
    out.varint(rows.size());
    for (FlushRow row : rows) {
      out.key(row.type(), row.id(), row.bucket());
      out.varint(row.slot() & 0xFFFF);
      out.signed(row.delta());
    }
  }

  /**
   * Reads every record of one frame's payload. Throws on a malformed record ({@link java.nio.BufferUnderflowException},
   * {@link IllegalArgumentException}): the caller treats the frame as corrupt.
   */
  static void read(ByteBuffer payload, Visitor visitor) {
    while (payload.hasRemaining()) {
      byte type = payload.get();
      switch (type) {
        case INCREMENTS -> {
          int n = count(payload);
          for (int i = 0; i < n; i++) {
            CounterKey key = key(payload);
            visitor.increment(key, signed(payload));
          }
        }
        case FORMED -> {
          String id = string(payload);
          List<FlushRow> rows = rows(payload);
          int zero = count(payload);
          List<CounterKey> zeroKeys = new ArrayList<>(zero);
          for (int i = 0; i < zero; i++) {
            zeroKeys.add(key(payload));
          }
          visitor.formed(id, rows, zeroKeys);
        }
        case REPLACED -> {
          String parent = string(payload);
          int n = count(payload);
          List<Flush> children = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            String id = string(payload);
            children.add(new Flush(FlushId.parse(id), rows(payload)));
          }
          visitor.replaced(parent, children);
        }
        case SETTLED -> visitor.settled(string(payload));
        case ATTEMPTS -> {
          String id = string(payload);
          byte sent = payload.get();
          if (sent != 0 && sent != 1) {
            throw new IllegalArgumentException("attempts of " + id + ": " + sent);
          }
          visitor.attempts(id, sent == 1);
        }
        case SNAPSHOT_BEGIN -> visitor.snapshotBegin();
        case SNAPSHOT_END -> {
          int n = count(payload);
          List<String> files = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            files.add(string(payload));
          }
          visitor.snapshotEnd(files);
        }
        case WRITTEN_FOR -> {
          String kind = string(payload);
          String host = string(payload);
          long port = varint(payload);
          String name = string(payload);
          String table = string(payload);
          String databaseId = string(payload);
          int n = count(payload);
          java.util.Map<String, String> windows = new java.util.TreeMap<>();
          for (int i = 0; i < n; i++) {
            windows.put(string(payload), string(payload));
          }
          if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port " + port);
          }
          visitor.writtenFor(new JournalTarget(kind, host, (int) port, name, table,
            databaseId.isEmpty() ? null : databaseId, windows));
        }
        default -> throw new IllegalArgumentException("unknown record type " + type);
      }
    }
  }

  /** The increments readable in a damaged payload, as far as its records parse (best effort, never throws). */
  static long countIncrements(ByteBuffer payload) {
    long[] seen = {0};
    try {
      read(payload, new Visitor() {
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
        public void attempts(String id, boolean mayHaveBeenSent) {
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
    return seen[0];
  }

  private static List<FlushRow> rows(ByteBuffer in) {
    int n = count(in);
    List<FlushRow> rows = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      CounterKey key = key(in);
      long slot = varint(in);
      if (slot > Short.MAX_VALUE) {
        throw new IllegalArgumentException("slot " + slot);
      }
      rows.add(new FlushRow(key.type(), key.id(), (short) slot, signed(in), key.bucket()));
    }
    return rows;
  }

  private static CounterKey key(ByteBuffer in) {
    String type = string(in);
    String id = string(in);
    long bucket = varint(in);
    if (bucket == 0) {
      return new CounterKey(type, id);
    }
    long zigzag = bucket - 1;
    return new CounterKey(type, id, (zigzag >>> 1) ^ -(zigzag & 1));
  }

  private static int count(ByteBuffer in) {
    long n = varint(in);
    if (n < 0 || n > in.remaining()) {
      throw new IllegalArgumentException("count " + n + " beyond the record");
    }
    return (int) n;
  }

  private static String string(ByteBuffer in) {
    int length = count(in);
    byte[] utf8 = new byte[length];
    in.get(utf8);
    return new String(utf8, StandardCharsets.UTF_8);
  }

  private static long signed(ByteBuffer in) {
    long zigzag = varint(in);
    return (zigzag >>> 1) ^ -(zigzag & 1);
  }

  private static long varint(ByteBuffer in) {
    long value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      byte b = in.get();
      value |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return value;
      }
    }
    throw new IllegalArgumentException("varint longer than 10 bytes");
  }
}
