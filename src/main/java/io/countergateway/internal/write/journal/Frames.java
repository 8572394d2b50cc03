package io.countergateway.internal.write.journal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * The journal's bytes on disk (src/DESIGN.md §4 "Journal"), written and read in this one place.
 *
 * <p><b>A segment file</b> starts with a {@value #FILE_HEADER_BYTES}-byte header: {@code CGJ2}, its length, the stream
 * (ingest verticle) it belongs to, its segment number, its run (the segment number of the snapshot segment the run
 * began with), the table the journal was written for, and a CRC32C of all that. Zeros follow up to the file's
 * capacity, and frames are written over them.
 *
 * <p><b>A frame</b> is one record: a {@value #FRAME_HEADER_BYTES}-byte header — a two-byte magic, the record's kind,
 * the length of the flush id that follows the header (FORMED and REPLACED frames carry it there, so a frame whose
 * payload is damaged still says which flush it held), the payload's length, the frame's sequence number in its run,
 * the number of flush frames (FORMED with an id, REPLACED) in the run up to and including this one, the payload's
 * CRC32C and the header's own CRC32C — then the id, then the payload. Sequence and flush count are 32-bit and compared
 * modulo 2^32. The magic and the header checksum let a reader find the next good frame after a damaged one; the two
 * counters tell it how many frames, and how many flush frames, a damaged region held.
 *
 * <p>Files of the first format ({@code CGJ1}: an 8-byte header, frames {@code [length][CRC32C][payload]}) are still
 * read: their first bad frame ends them.
 */
final class Frames {
  static final int FILE_HEADER_BYTES = 96;
  static final int FRAME_HEADER_BYTES = 24;
  static final int MAX_TABLE_BYTES = 63;
  static final int MAX_ID_BYTES = 255;
  /** The kind of a frame holding a FORMED record without an id: counters taken that summed to 0 (no flush). */
  static final byte TAKEN = 7;
  /**
   * The kind of a frame holding a copy of the FORMED or REPLACED record just before it: one damaged frame never hides a
   * flush record, so no replay has to guess whether the deltas pending before it were taken and committed. Not a flush
   * frame: the counters count the record once.
   */
  static final byte COPY = 8;
  static final byte MAGIC_0 = (byte) 0xA5;
  static final byte MAGIC_1 = (byte) 0x4A;
  static final byte[] FILE_MAGIC = {'C', 'G', 'J', '2'};
  static final byte[] V1_FILE_MAGIC = {'C', 'G', 'J', '1'};
  static final int V1_FILE_HEADER_BYTES = 8;
  static final int V1_FRAME_HEADER_BYTES = 8;
  private static final int TABLE_AT = 29;
  private static final int FILE_CRC_AT = FILE_HEADER_BYTES - 4;

  private Frames() {
  }

  /** What a segment file's header says. */
  record FileHeader(int stream, long segno, long run, String table) {
  }

  /** What a frame's header says; {@code id} is empty for frames without one. */
  record FrameHeader(byte kind, String id, int length, int seq, int flushes, int payloadCrc, int headerBytes) {
    /** FORMED (with an id) and REPLACED frames: the ones a run counts in every frame header. */
    boolean isFlush() {
      return Frames.isFlush(kind);
    }
  }

  static boolean isFlush(byte kind) {
    return kind == JournalRecords.FORMED || kind == JournalRecords.REPLACED;
  }

  /** Bytes a frame of {@code payloadBytes} with a flush id of {@code idBytes} takes in a segment. */
  static long frameBytes(int idBytes, long payloadBytes) {
    return FRAME_HEADER_BYTES + idBytes + payloadBytes;
  }

  static byte[] fileHeader(FileHeader header) {
    byte[] table = header.table().getBytes(StandardCharsets.UTF_8);
    if (table.length > MAX_TABLE_BYTES) {
      throw new IllegalArgumentException("table name longer than " + MAX_TABLE_BYTES + " bytes: " + header.table());
    }
    ByteBuffer bytes = ByteBuffer.allocate(FILE_HEADER_BYTES).put(FILE_MAGIC).putInt(FILE_HEADER_BYTES)
      .putInt(header.stream()).putLong(header.segno()).putLong(header.run()).put((byte) table.length).put(table);
    CRC32C crc = new CRC32C();
    crc.update(bytes.array(), 0, FILE_CRC_AT);
    return bytes.putInt(FILE_CRC_AT, (int) crc.getValue()).array();
  }

  /** The header of a {@code CGJ2} file, or null when the file does not start with a good one. */
  static FileHeader readFileHeader(ByteBuffer all) {
    if (all.limit() < FILE_HEADER_BYTES || !startsWith(all, FILE_MAGIC) || all.getInt(4) != FILE_HEADER_BYTES) {
      return null;
    }
    CRC32C crc = new CRC32C();
    crc.update(all.slice(0, FILE_CRC_AT));
    int tableLength = all.get(TABLE_AT - 1) & 0xFF;
    if ((int) crc.getValue() != all.getInt(FILE_CRC_AT) || tableLength > MAX_TABLE_BYTES) {
      return null;
    }
    byte[] table = new byte[tableLength];
    all.get(TABLE_AT, table);
    return new FileHeader(all.getInt(8), all.getLong(12), all.getLong(20), new String(table, StandardCharsets.UTF_8));
  }

  static boolean startsWith(ByteBuffer all, byte[] magic) {
    if (all.limit() < magic.length) {
      return false;
    }
    for (int i = 0; i < magic.length; i++) {
      if (all.get(i) != magic[i]) {
        return false;
      }
    }
    return true;
  }

  /**
   * Writes a frame header for a payload of {@code length} bytes (checksum {@code payloadCrc}) and the flush id into
   * {@code into} from 0; returns the bytes written. {@code crc} is the caller's, reused.
   */
  static int frameHeader(byte[] into, byte kind, byte[] id, int length, int seq, int flushes, int payloadCrc,
                         CRC32C crc) {
    into[0] = MAGIC_0;
    into[1] = MAGIC_1;
    into[2] = kind;
    into[3] = (byte) id.length;
    putInt(into, 4, length);
    putInt(into, 8, seq);
    putInt(into, 12, flushes);
    putInt(into, 16, payloadCrc);
    System.arraycopy(id, 0, into, FRAME_HEADER_BYTES, id.length);
    crc.reset();
    crc.update(into, 0, 20);
    crc.update(into, FRAME_HEADER_BYTES, id.length);
    putInt(into, 20, (int) crc.getValue());
    return FRAME_HEADER_BYTES + id.length;
  }

  /**
   * The frame header at {@code at}, or null when there is none: no magic, a checksum that fails, or a header that
   * runs past the end of the file. The payload is not checked here.
   */
  static FrameHeader readFrameHeader(ByteBuffer all, int at, CRC32C crc) {
    if (at + FRAME_HEADER_BYTES > all.limit() || all.get(at) != MAGIC_0 || all.get(at + 1) != MAGIC_1) {
      return null;
    }
    int idLength = all.get(at + 3) & 0xFF;
    if (at + FRAME_HEADER_BYTES + idLength > all.limit()) {
      return null;
    }
    crc.reset();
    crc.update(all.slice(at, 20));
    crc.update(all.slice(at + FRAME_HEADER_BYTES, idLength));
    if ((int) crc.getValue() != all.getInt(at + 20)) {
      return null;
    }
    int length = all.getInt(at + 4);
    if (length < 0) {
      return null;
    }
    byte[] id = new byte[idLength];
    all.get(at + FRAME_HEADER_BYTES, id);
    return new FrameHeader(all.get(at + 2), new String(id, StandardCharsets.UTF_8), length, all.getInt(at + 8),
      all.getInt(at + 12), all.getInt(at + 16), FRAME_HEADER_BYTES + idLength);
  }

  private static void putInt(byte[] into, int at, int value) {
    into[at] = (byte) (value >>> 24);
    into[at + 1] = (byte) (value >>> 16);
    into[at + 2] = (byte) (value >>> 8);
    into[at + 3] = (byte) value;
  }
}
