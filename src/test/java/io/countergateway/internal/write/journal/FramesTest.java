package io.countergateway.internal.write.journal;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The file and frame headers: what is written reads back, and any damage to them reads as no header at all. */
@DisplayName("The journal's headers")
class FramesTest {
  private static final String LONGEST_TABLE = "t".repeat(Frames.MAX_TABLE_BYTES);

  @Test
  @DisplayName("a file header reads back whole, the longest table name included, and a damaged one reads as none")
  void fileHeader() {
    Frames.FileHeader header = new Frames.FileHeader(3, 17, 12, LONGEST_TABLE);
    byte[] bytes = Frames.fileHeader(header);
    assertThat(bytes).hasSize(Frames.FILE_HEADER_BYTES);
    assertThat(Frames.readFileHeader(ByteBuffer.wrap(bytes))).isEqualTo(header);
    for (int at = 0; at < Frames.FILE_HEADER_BYTES; at++) {
      byte[] damaged = bytes.clone();
      damaged[at] ^= 0x10;
      assertThat(Frames.readFileHeader(ByteBuffer.wrap(damaged))).as("byte %d flipped", at).isNull();
    }
    assertThat(Frames.readFileHeader(ByteBuffer.wrap(bytes, 0, Frames.FILE_HEADER_BYTES - 1).slice())).isNull();
    assertThatThrownBy(() -> Frames.fileHeader(new Frames.FileHeader(0, 1, 1, LONGEST_TABLE + "x")))
      .hasMessageContaining("longer than 63 bytes");
  }

  @Test
  @DisplayName("a file header whose checksum holds but whose table length is out of range reads as none")
  void tableLengthOutOfRange() {
    ByteBuffer bytes = ByteBuffer.wrap(Frames.fileHeader(new Frames.FileHeader(0, 1, 1, "a")));
    bytes.put(28, (byte) (Frames.MAX_TABLE_BYTES + 1));
    CRC32C crc = new CRC32C();
    crc.update(bytes.array(), 0, Frames.FILE_HEADER_BYTES - 4);
    bytes.putInt(Frames.FILE_HEADER_BYTES - 4, (int) crc.getValue());
    assertThat(Frames.readFileHeader(bytes)).isNull();
  }

  @Test
  @DisplayName("a frame header reads back at the very end of a buffer, with its flush id; any damage reads as none")
  void frameHeader() {
    byte[] id = "src:7.01".getBytes(StandardCharsets.UTF_8);
    byte[] into = new byte[Frames.FRAME_HEADER_BYTES + id.length];
    CRC32C crc = new CRC32C();
    int length = Frames.frameHeader(into, JournalRecords.FORMED, id, 1234, -5, 9, 0xCAFE, crc);
    assertThat(length).isEqualTo(into.length);
    Frames.FrameHeader header = Frames.readFrameHeader(ByteBuffer.wrap(into), 0, crc);
    assertThat(header).isEqualTo(new Frames.FrameHeader(JournalRecords.FORMED, "src:7.01", 1234, -5, 9, 0xCAFE,
      into.length));
    assertThat(header.isFlush()).isTrue();
    for (int at = 0; at < into.length; at++) {
      byte[] damaged = into.clone();
      damaged[at] ^= 0x01;
      assertThat(Frames.readFrameHeader(ByteBuffer.wrap(damaged), 0, crc)).as("byte %d flipped", at).isNull();
    }
    assertThat(Frames.readFrameHeader(ByteBuffer.wrap(into, 0, into.length - 1).slice(), 0, crc)).as("id cut")
      .isNull();
    assertThat(Frames.readFrameHeader(ByteBuffer.wrap(into, 0, Frames.FRAME_HEADER_BYTES - 1).slice(), 0, crc))
      .as("header cut").isNull();
  }

  @Test
  @DisplayName("a frame header with a negative length reads as none, even with a good checksum; kinds tell flush frames")
  void negativeLength() {
    byte[] into = new byte[Frames.FRAME_HEADER_BYTES];
    CRC32C crc = new CRC32C();
    Frames.frameHeader(into, JournalRecords.INCREMENTS, new byte[0], -1, 0, 0, 0, crc);
    assertThat(Frames.readFrameHeader(ByteBuffer.wrap(into), 0, crc)).isNull();
    Frames.frameHeader(into, JournalRecords.INCREMENTS, new byte[0], 0, 0, 0, 0, crc);
    assertThat(Frames.readFrameHeader(ByteBuffer.wrap(into), 0, crc).isFlush()).isFalse();
    assertThat(Frames.isFlush(JournalRecords.REPLACED)).isTrue();
    assertThat(Frames.isFlush(Frames.TAKEN)).isFalse();
    assertThat(Frames.isFlush(JournalRecords.SETTLED)).isFalse();
  }

  @Test
  @DisplayName("a file starts with a magic only if all of it is there")
  void magic() {
    assertThat(Frames.startsWith(ByteBuffer.wrap(new byte[] {'C', 'G', 'J', '1'}), Frames.V1_FILE_MAGIC)).isTrue();
    assertThat(Frames.startsWith(ByteBuffer.wrap(new byte[] {'C', 'G', 'J'}), Frames.V1_FILE_MAGIC)).isFalse();
    assertThat(Frames.startsWith(ByteBuffer.wrap(new byte[] {'C', 'G', 'J', '2'}), Frames.V1_FILE_MAGIC)).isFalse();
    assertThat(Frames.startsWith(ByteBuffer.wrap(new byte[] {'X', 'G', 'J', '1'}), Frames.V1_FILE_MAGIC)).isFalse();
  }
}
