package io.countergateway.internal.write.journal;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;

import static io.countergateway.internal.write.journal.JournalLoop.like;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * One pass per segment: the bytes the scanner looks at stay within a small multiple of the segment's size whatever
 * it holds (nothing is timed: a pass that went back over the zero tail per frame looked at frames × tail bytes).
 */
@DisplayName("Reading a segment")
class FrameScannerTest {
  private static final int SEGMENT = 16 << 20;

  /** A segment image and the frames written into it. */
  private record Image(ByteBuffer all, int frames) {
  }

  /** File header, then frames of one increment each from sequence 0: {@code frames} of them, or as many as fit. */
  private static Image segment(int capacity, int frames) {
    ByteBuffer all = ByteBuffer.allocate(capacity);
    all.put(Frames.fileHeader(new Frames.FileHeader(0, 1, 1, "slotted_counters")));
    CRC32C crc = new CRC32C();
    byte[] header = new byte[Frames.FRAME_HEADER_BYTES];
    int seq = 0;
    while (seq < frames) {
      JournalRecords.Out payload = new JournalRecords.Out(64);
      JournalRecords.increment(payload, like("/articles/" + seq, 1));
      crc.reset();
      crc.update(payload.array(), 0, payload.length());
      int headerLength = Frames.frameHeader(header, JournalRecords.INCREMENTS, new byte[0], payload.length(), seq,
        0, (int) crc.getValue(), crc);
      if (all.position() + headerLength + payload.length() > capacity) {
        break;
      }
      all.put(header, 0, headerLength).put(payload.array(), 0, payload.length());
      seq++;
    }
    return new Image(all.clear(), seq);
  }

  /** A file of the first format: an 8-byte header, then frames [length][CRC32C][payload] of one increment each. */
  private static ByteBuffer v1(int frames, int zeros) {
    ByteBuffer all = ByteBuffer.allocate(8 + frames * 64 + zeros);
    all.put(Frames.V1_FILE_MAGIC).putInt(1);
    CRC32C crc = new CRC32C();
    for (int i = 0; i < frames; i++) {
      JournalRecords.Out payload = new JournalRecords.Out(64);
      JournalRecords.increment(payload, like(String.format("v%02d", i), 1)); // frames of 22 bytes
      crc.reset();
      crc.update(payload.array(), 0, payload.length());
      all.putInt(payload.length()).putInt((int) crc.getValue()).put(payload.array(), 0, payload.length());
    }
    return all.limit(all.position() + zeros).position(0);
  }

  @Test
  @DisplayName("a file of the first format is read up to its end or its first bad frame, the rest reported with the increments it shows")
  void firstFormat() {
    ByteBuffer exact = v1(20, 0).slice();
    FrameScanner scanner = new FrameScanner();
    Counted whole = new Counted();
    scanner.scanV1(exact, whole);
    assertThat(whole.frames).as("frames up to the file's last byte").isEqualTo(20);
    assertThat(whole.damagedBytes).isZero();
    assertThat(scanner.examined).isEqualTo(exact.limit() - 8);

    ByteBuffer damaged = v1(20, 100).slice();
    int tenth = 8 + 9 * 22 + 4; // the checksum of the tenth frame
    damaged.put(tenth, (byte) (damaged.get(tenth) ^ 0x40));
    Counted cut = new Counted();
    new FrameScanner().scanV1(damaged, cut);
    assertThat(cut.frames).isEqualTo(9);
    int writtenEnd = damaged.limit() - 100;
    assertThat(cut.damagedBytes).isEqualTo(writtenEnd - (8 + 9 * 22));
    assertThat(cut.readable).as("increments readable in the bad frame").isEqualTo(1);

    ByteBuffer torn = v1(3, 0).slice();
    torn.putInt(8 + 2 * 22, 500); // the last frame's length runs past the file
    Counted tornCounted = new Counted();
    new FrameScanner().scanV1(torn, tornCounted);
    assertThat(tornCounted.frames).isEqualTo(2);
    assertThat(tornCounted.damagedBytes).isEqualTo(22);
  }

  private static final class Counted implements FrameScanner.Sink {
    final List<Integer> sequences = new ArrayList<>();
    long damagedBytes;
    int damagedFrames;

    int frames;
    long readable;

    @Override
    public void frame(Frames.FrameHeader header, ByteBuffer payload) {
      frames++;
      if (header != null) {
        sequences.add(header.seq());
      }
    }

    @Override
    public void damaged(long bytes, List<FrameScanner.Damaged> frames, boolean neverForced) {
      damagedBytes += bytes;
      damagedFrames += frames.size();
      readable += frames.stream().mapToLong(FrameScanner.Damaged::readable).sum();
    }
  }

  private static Counted scan(ByteBuffer all, FrameScanner scanner) {
    Counted counted = new Counted();
    scanner.scan(all, Frames.FILE_HEADER_BYTES, counted);
    return counted;
  }

  @Test
  @DisplayName("a full 16 MiB segment is read in one pass: every frame, each byte looked at about once")
  void fullSegment() {
    Image image = segment(SEGMENT, Integer.MAX_VALUE);
    FrameScanner scanner = new FrameScanner();
    Counted counted = scan(image.all(), scanner);
    assertThat(image.frames()).as("frames written").isGreaterThan(300_000);
    assertThat(counted.sequences).as("frames read").hasSize(image.frames());
    assertThat(counted.damagedBytes).isZero();
    assertThat(scanner.examined).as("bytes looked at: each once").isEqualTo(SEGMENT - Frames.FILE_HEADER_BYTES);
  }

  @Test
  @DisplayName("7,435 frames before a 16.6 MB zero tail (a kill -9 after load) are read in one pass, the tail looked at once")
  void framesBeforeAZeroTail() {
    Image image = segment(SEGMENT, 7_435);
    FrameScanner scanner = new FrameScanner();
    Counted counted = scan(image.all(), scanner);
    assertThat(counted.sequences).as("frames").hasSize(7_435);
    assertThat(counted.damagedBytes).isZero();
    assertThat(scanner.examined).as("bytes looked at: each once").isEqualTo(SEGMENT - Frames.FILE_HEADER_BYTES);
  }

  @Test
  @DisplayName("a segment of damage everywhere is still one pass: each bad header stepped over, each good frame found again")
  void damagedEverywhere() {
    ByteBuffer all = segment(SEGMENT, Integer.MAX_VALUE).all();
    Random random = new Random(7);
    for (int i = 0; i < 20_000; i++) {
      int at = Frames.FILE_HEADER_BYTES + random.nextInt(SEGMENT - Frames.FILE_HEADER_BYTES);
      all.put(at, (byte) (all.get(at) ^ (1 + random.nextInt(255))));
    }
    FrameScanner scanner = new FrameScanner();
    Counted counted = scan(all, scanner);
    assertThat(counted.sequences).as("good frames").hasSizeGreaterThan(250_000);
    assertThat(counted.sequences).as("in order").isSorted();
    assertThat(counted.damagedBytes).isPositive();
    assertThat(scanner.examined).as("bytes looked at").isBetween((long) SEGMENT - Frames.FILE_HEADER_BYTES, 2L * SEGMENT);
  }

  @Test
  @DisplayName("a hole of zeros in the middle (pages lost in a machine crash) is a damaged region; the frames after it are read")
  void holeInTheMiddle() {
    ByteBuffer all = segment(1 << 20, Integer.MAX_VALUE).all();
    for (int at = 300_000; at < 304_096; at++) {
      all.put(at, (byte) 0);
    }
    FrameScanner scanner = new FrameScanner();
    Counted counted = scan(all, scanner);
    assertThat(counted.damagedBytes).isBetween(4_096L, 4_096L + 2 * 49);
    assertThat(counted.damagedFrames).as("frames whose header held").isLessThanOrEqualTo(2);
    assertThat(scanner.examined).as("bytes looked at: each once, the frames the hole cut twice")
      .isBetween((1L << 20) - Frames.FILE_HEADER_BYTES, (1L << 20) - Frames.FILE_HEADER_BYTES + 2 * 49 + 24);
    List<Integer> sequences = counted.sequences;
    assertThat(sequences.get(sequences.size() - 1)).as("the last frame").isGreaterThan(20_000);
    int missing = sequences.get(sequences.size() - 1) + 1 - sequences.size();
    assertThat(missing).as("frames lost in the hole (about 4 KiB of frames of about 49 bytes)").isBetween(83, 86);
  }
}
