package io.countergateway.internal.write.journal;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * One pass over the bytes of one segment file (src/DESIGN.md §4 "Journal"): hands every good frame to a sink, in
 * order, and every region between good frames that holds none. Linear in the file's size: the zero-filled tail is
 * found once, by one scan from the end; a frame whose header is intact but whose payload is damaged is stepped over
 * by its length; bytes where no header is are stepped over one at a time to the next frame magic. Each byte is looked
 * at a bounded number of times, which {@link #examined} counts.
 */
final class FrameScanner {
  /** Where the frames go. */
  interface Sink {
    /** A good frame: its header and payload checksums hold. {@code header} is null for a {@code CGJ1} frame. */
    void frame(Frames.FrameHeader header, ByteBuffer payload);

    /**
     * {@code bytes} written bytes held no good frame; {@code frames}: the frames among them whose header was intact;
     * {@code neverForced}: the region shows the pages of a write the crash kept from the disk ({@link #lostWrite}), so
     * no force ever covered it or anything written after it.
     */
    void damaged(long bytes, List<Damaged> frames, boolean neverForced);
  }

  /**
   * A frame whose header held and whose payload did not; {@code readable}: the increments its payload still shows;
   * {@code complete}: its payload lies wholly within what was written (damaged, not cut short).
   */
  record Damaged(Frames.FrameHeader header, long readable, boolean complete) {
  }

  private static final int NONE = -1;
  /** What a disk writes back at once, and what a crash may leave out: a page. */
  private static final long PAGE_BYTES = 4096;
  private final CRC32C crc = new CRC32C();
  private final Map<ByteBuffer, Integer> writtenEnds = new IdentityHashMap<>();
  /** Bytes looked at so far (the file headers aside): what proves the pass linear. */
  long examined;

  /** Scans a {@code CGJ2} file from {@code from} (after its header). */
  void scan(ByteBuffer all, int from, Sink sink) {
    scan(all, from, sink, false);
  }

  /**
   * The sequence number of the first good frame of a {@code CGJ2} file (unsigned), or -1 when it holds none: where
   * the file goes among its run's segments.
   */
  long firstSequence(ByteBuffer all, int from) {
    long[] first = {-1};
    scan(all, from, new Sink() {
      @Override
      public void frame(Frames.FrameHeader header, ByteBuffer payload) {
        first[0] = Integer.toUnsignedLong(header.seq());
      }

      @Override
      public void damaged(long bytes, List<Damaged> frames, boolean neverForced) {
      }
    }, true);
    return first[0];
  }

  private void scan(ByteBuffer all, int from, Sink sink, boolean firstOnly) {
    int size = all.limit();
    int end = writtenEnd(all, from);
    int position = from;
    int damageFrom = NONE;
    /** Where the damaged frame that starts the region ends, when one with an intact header does. */
    long firstFrameEnd = NONE;
    List<Damaged> damaged = new ArrayList<>();
    while (position < end) {
      Frames.FrameHeader header = Frames.readFrameHeader(all, position, crc);
      if (header == null) {
        if (damageFrom == NONE) {
          damageFrom = position;
          firstFrameEnd = NONE;
        }
        examined += all.get(position) == Frames.MAGIC_0 ? Frames.FRAME_HEADER_BYTES : 0; // a header checked and refused
        position = nextMagic(all, position + 1, end);
        continue;
      }
      int payloadAt = position + header.headerBytes();
      long payloadEnd = (long) payloadAt + header.length();
      examined += header.headerBytes();
      if (payloadEnd <= size) {
        ByteBuffer payload = all.slice(payloadAt, header.length());
        crc.reset();
        crc.update(payload.duplicate());
        examined += header.length();
        if ((int) crc.getValue() == header.payloadCrc()) {
          if (damageFrom != NONE) {
            sink.damaged(position - damageFrom, damaged, lostWrite(all, damageFrom, position, firstFrameEnd));
            damageFrom = NONE;
            damaged = new ArrayList<>();
          }
          sink.frame(header, payload);
          if (firstOnly) {
            return;
          }
          position = (int) payloadEnd;
          continue;
        }
      }
      // the header held: the frame is lost, and the next one starts where its length says
      if (damageFrom == NONE) {
        damageFrom = position;
        firstFrameEnd = Math.min(payloadEnd, size);
      }
      int available = (int) Math.min(payloadEnd, size) - payloadAt;
      examined += available;
      damaged.add(new Damaged(header, JournalRecords.countIncrements(all.slice(payloadAt, available)),
        wholeOnDisk(payloadEnd, end, size)));
      position = (int) Math.min(payloadEnd, size);
    }
    if (damageFrom != NONE) {
      int regionEnd = Math.max(position, end);
      sink.damaged(regionEnd - damageFrom, damaged, lostWrite(all, damageFrom, regionEnd, firstFrameEnd));
    }
  }

  /**
   * Whether the damaged region {@code [from, to)} shows a write the crash kept from the disk in part: the kernel
   * writes a file's dirty pages back in any order, so a machine gone before the force leaves some pages of the last
   * writes and not others, and a page that did not reach the disk reads as zeros (segments are made zero-filled and
   * each byte is written once). It does if zeros fill it where a frame must start ({@code from}, where the last good
   * frame ended) up to the next page boundary or to its end, or fill a whole page inside the frame that starts it (that
   * frame's head reached the disk, the page after did not). A flipped or garbled byte leaves neither: a frame starts
   * with its magic, and no record holds a page of zeros. {@code firstFrameEnd}: where the frame that starts the region
   * ends, when its header is intact, else {@link #NONE}.
   */
  private boolean lostWrite(ByteBuffer all, int from, int to, long firstFrameEnd) {
    long nextPage = (from / PAGE_BYTES + 1) * PAGE_BYTES;
    if (zeros(all, from, (int) Math.min(nextPage, to))) {
      return true;
    }
    for (long page = nextPage; page < firstFrameEnd && page + PAGE_BYTES <= to; page += PAGE_BYTES) {
      if (zeros(all, (int) page, (int) (page + PAGE_BYTES))) {
        return true;
      }
    }
    return false;
  }

  private boolean zeros(ByteBuffer all, int from, int to) {
    for (int at = from; at < to; at++) {
      if (all.get(at) != 0) {
        examined += at - from + 1;
        return false;
      }
    }
    examined += to - from;
    return to > from;
  }

  /**
   * Whether a frame ending at {@code frameEnd} reached the disk whole, the last byte written being at {@code end}: a
   * write the machine's crash cut short loses whole pages, so a frame that ends in the page of the last byte written
   * (its own last bytes may well be zeros) is whole, one that runs into a page with nothing written, or past the end
   * of the file, was cut short.
   */
  static boolean wholeOnDisk(long frameEnd, long end, long size) {
    return frameEnd <= size && (frameEnd <= end || end > 0 && (frameEnd - 1) / PAGE_BYTES == (end - 1) / PAGE_BYTES);
  }

  /**
   * Scans a {@code CGJ1} file: frames {@code [length][CRC32C][payload]} after an 8-byte header, up to the first that
   * is cut short or fails its checksum; what was written after it is reported as damaged.
   */
  void scanV1(ByteBuffer all, Sink sink) {
    int size = all.limit();
    int end = writtenEnd(all, Frames.V1_FILE_HEADER_BYTES);
    int position = Frames.V1_FILE_HEADER_BYTES;
    while (position + Frames.V1_FRAME_HEADER_BYTES <= end) {
      int length = all.getInt(position);
      int start = position + Frames.V1_FRAME_HEADER_BYTES;
      examined += Frames.V1_FRAME_HEADER_BYTES;
      if (length <= 0 || (long) start + length > size) {
        break;
      }
      ByteBuffer payload = all.slice(start, length);
      crc.reset();
      crc.update(payload.duplicate());
      examined += length;
      if ((int) crc.getValue() != all.getInt(position + 4)) {
        break;
      }
      sink.frame(null, payload);
      position = start + length;
    }
    if (position < end) {
      long readable = position + Frames.V1_FRAME_HEADER_BYTES < end
        ? JournalRecords.countIncrements(all.slice(position + Frames.V1_FRAME_HEADER_BYTES,
        end - position - Frames.V1_FRAME_HEADER_BYTES)) : 0;
      sink.damaged(end - position, readable == 0 ? List.of() : List.of(new Damaged(null, readable, false)), false);
    }
  }

  /**
   * The end of the last byte at or after {@code from} that is not zero; {@code from} when there is none. Found once
   * per file: its first frame is looked for before the file is read.
   */
  private int writtenEnd(ByteBuffer all, int from) {
    Integer known = writtenEnds.get(all);
    if (known != null) {
      return known;
    }
    int end = all.limit();
    while (end - 8 >= from && all.getLong(end - 8) == 0) {
      end -= 8;
    }
    while (end > from && all.get(end - 1) == 0) {
      end--;
    }
    examined += all.limit() - end;
    writtenEnds.put(all, end);
    return end;
  }

  private int nextMagic(ByteBuffer all, int from, int end) {
    int next = from;
    while (next < end && all.get(next) != Frames.MAGIC_0) {
      next++;
    }
    examined += next - from + 1;
    return next;
  }
}
