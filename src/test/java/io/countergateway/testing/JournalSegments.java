package io.countergateway.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A journal directory read from outside, as an operator would with a hex editor: its segment files
 * ({@code journal-<verticle>-<segment>.seg}), each a 96-byte header and frames up to the first header without the
 * frame magic: a 24-byte header (magic {@code A5 4A}, kind, flush-id length, payload length, …), the flush id, the
 * payload (src/DESIGN.md §4 "Journal", write/journal/Frames). For tests that size a replay or damage one frame.
 */
public final class JournalSegments {
  private static final int FILE_HEADER = 96;
  private static final int FRAME_HEADER = 24;

  /** One frame: where its payload starts in the file, its flush id's length, and the payload. */
  public record Frame(Path file, long payloadOffset, int idBytes, byte[] payload) {
    /** The payload as ISO-8859-1 text, to look for the ids it names. */
    public String text() {
      return new String(payload, StandardCharsets.ISO_8859_1);
    }
  }

  private JournalSegments() {
  }

  /** The segment files of {@code dir}, by name (so by verticle, then segment number). */
  public static List<Path> files(String dir) {
    try (Stream<Path> files = Files.list(Path.of(dir))) {
      return files.filter(f -> f.getFileName().toString().endsWith(".seg")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every frame of {@code file} up to its first zero or impossible header. */
  public static List<Frame> frames(Path file) {
    List<Frame> frames = new ArrayList<>();
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      ByteBuffer header = ByteBuffer.allocate(FRAME_HEADER);
      long position = FILE_HEADER;
      while (position + FRAME_HEADER <= size) {
        header.clear();
        channel.read(header, position);
        if (header.get(0) != (byte) 0xA5 || header.get(1) != (byte) 0x4A) {
          break;
        }
        int idBytes = header.get(3) & 0xFF;
        int length = header.getInt(4);
        long payloadAt = position + FRAME_HEADER + idBytes;
        if (length <= 0 || payloadAt + length > size) {
          break;
        }
        ByteBuffer payload = ByteBuffer.allocate(length);
        channel.read(payload, payloadAt);
        frames.add(new Frame(file, payloadAt, idBytes, payload.array()));
        position = payloadAt + length;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return frames;
  }

  /** Bytes written in {@code dir}'s segments: headers and frames, without the zeros a segment is made of. */
  public static long writtenBytes(String dir) {
    long bytes = 0;
    for (Path file : files(dir)) {
      bytes += FILE_HEADER;
      for (Frame frame : frames(file)) {
        bytes += FRAME_HEADER + frame.idBytes() + frame.payload().length;
      }
    }
    return bytes;
  }

  /** Bytes the segment files take, zeros included. */
  public static long fileBytes(String dir) {
    return files(dir).stream().mapToLong(f -> {
      try {
        return Files.size(f);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }).sum();
  }

  /** Inverts every bit of the byte {@code at} bytes into {@code frame}'s payload: its checksum no longer holds. */
  public static void flipByte(Frame frame, int at) {
    try (FileChannel channel = FileChannel.open(frame.file(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      channel.read(one, frame.payloadOffset() + at);
      one.put(0, (byte) ~one.get(0)).rewind();
      channel.write(one, frame.payloadOffset() + at);
      channel.force(false);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
