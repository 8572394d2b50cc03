package io.countergateway.bench;

import com.sun.nio.file.ExtendedOpenOption;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code java -jar target/counter-gateway-bench.jar durable-write}: what one durable append costs this machine, the
 * journal's unit of group commit (src/DESIGN.md §4). Appends {@code --bytes} at a time to a file made and forced
 * beforehand (as the journal's segments are), each made durable by {@code fdatasync} after a {@code write} (the
 * journal's way), by an {@code O_DSYNC} write, or by an {@code O_DIRECT | O_DSYNC} write of the 4 KiB blocks it
 * touches; prints the time per append and the machine's busy CPU per append (every core, from /proc/stat).
 */
@Command(name = "durable-write", mixinStandardHelpOptions = true,
  description = "Times durable appends (write + fdatasync, O_DSYNC, O_DIRECT) and the machine CPU each costs.")
public final class DurableWriteCommand implements Callable<Integer> {
  private static final int FILE_BYTES = 16 << 20;
  private static final int BLOCK = 4096;

  @Option(names = "--dir", defaultValue = ".", description = "where the file is made (default: ${DEFAULT-VALUE})")
  private Path dir;

  @Option(names = "--bytes", defaultValue = "540", description = "bytes per append (default: ${DEFAULT-VALUE}, "
    + "about nine beacons' frames)")
  private int bytes;

  @Option(names = "--seconds", defaultValue = "4", description = "per way (default: ${DEFAULT-VALUE})")
  private int seconds;

  @Option(names = "--rounds", defaultValue = "2", description = "rounds over every way (default: ${DEFAULT-VALUE})")
  private int rounds;

  @Override
  public Integer call() throws IOException {
    System.out.println("| way | appends | µs per append | machine CPU µs per append | machine busy |");
    System.out.println("|---|---:|---:|---:|---:|");
    for (int round = 0; round < rounds; round++) {
      for (String way : List.of("fdatasync", "dsync", "direct")) {
        measure(way);
      }
    }
    return 0;
  }

  private void measure(String way) throws IOException {
    Path file = Files.createTempFile(dir, "durable-write", ".seg");
    try {
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
        ByteBuffer zeros = ByteBuffer.allocate(1 << 20);
        for (long at = 0; at < FILE_BYTES; at += zeros.capacity()) {
          zeros.clear();
          channel.write(zeros, at);
        }
        channel.force(true);
      }
      Set<OpenOption> options = new HashSet<>(List.of(StandardOpenOption.WRITE));
      if (!way.equals("fdatasync")) {
        options.add(StandardOpenOption.DSYNC);
      }
      if (way.equals("direct")) {
        options.add(ExtendedOpenOption.DIRECT);
      }
      byte[] payload = new byte[bytes];
      ThreadLocalRandom.current().nextBytes(payload);
      ByteBuffer blocks = ByteBuffer.allocateDirect(bytes + 3 * BLOCK).alignedSlice(BLOCK);
      try (FileChannel channel = FileChannel.open(file, options)) {
        long appends = 0;
        long position = 0;
        long[] before = busyAndTotal();
        long started = System.nanoTime();
        long end = started + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
          if (position + bytes + 2 * BLOCK > FILE_BYTES) {
            position = 0;
          }
          if (way.equals("direct")) {
            appendDirect(channel, blocks, payload, position);
          } else {
            channel.write(ByteBuffer.wrap(payload), position);
            if (way.equals("fdatasync")) {
              channel.force(false);
            }
          }
          position += bytes;
          appends++;
        }
        long elapsed = System.nanoTime() - started;
        long[] after = busyAndTotal();
        double busyTicks = after[0] - before[0];
        double cpuMicros = busyTicks / 100.0 * 1e6; // USER_HZ
        System.out.printf("| %s | %d | %.1f | %.1f | %.0f %% |%n", way, appends, elapsed / 1e3 / appends,
          cpuMicros / appends, 100 * busyTicks / (after[1] - before[1]));
      }
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /**
   * An O_DIRECT write is whole blocks: the block holding the append's start is written again with what it held
   * before (as a database's log does), so the buffer keeps the tail block between appends.
   */
  private static void appendDirect(FileChannel channel, ByteBuffer blocks, byte[] payload, long position)
    throws IOException {
    long firstBlock = position & -BLOCK;
    int inBlock = (int) (position - firstBlock);
    blocks.clear().position(inBlock);
    blocks.put(payload);
    int length = (inBlock + payload.length + BLOCK - 1) & -BLOCK;
    blocks.position(0).limit(length);
    channel.write(blocks, firstBlock);
    int tail = (int) (((position + payload.length) & -BLOCK) - firstBlock);
    if (tail > 0) {
      ByteBuffer next = blocks.duplicate().clear().position(tail).limit(tail + BLOCK);
      blocks.clear();
      blocks.put(next);
    }
  }

  /** Busy and total ticks of every core since boot (/proc/stat's first line; idle and iowait are not busy). */
  private static long[] busyAndTotal() throws IOException {
    String[] fields = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
    long total = 0;
    for (int i = 1; i < fields.length; i++) {
      total += Long.parseLong(fields[i]);
    }
    long idle = Long.parseLong(fields[4]) + Long.parseLong(fields[5]);
    return new long[] {total - idle, total};
  }
}
