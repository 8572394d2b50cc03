package io.countergateway.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CPU a measured window used: this process's (the load driver and the in-process gateway together) and the whole
 * machine's, in cores busy on average, so a row says whether the machine or the gateway was the limit. The machine's
 * share comes from {@code /proc/stat}; where that file does not exist it is reported as unknown (negative).
 */
final class CpuUse {
  private final long wallNanos;
  private final long processNanos;
  private final long[] machineTicks;

  private CpuUse(long wallNanos, long processNanos, long[] machineTicks) {
    this.wallNanos = wallNanos;
    this.processNanos = processNanos;
    this.machineTicks = machineTicks;
  }

  /** Cores busy on average: this process, and the machine (negative when unknown). */
  record Share(double processCores, double machineCores) {
    @Override
    public String toString() {
      return String.format("CPU: this process %.2f cores", processCores)
        + (machineCores < 0 ? "" : String.format(", machine %.2f of %d", machineCores,
          Runtime.getRuntime().availableProcessors()));
    }
  }

  static CpuUse now() {
    return new CpuUse(System.nanoTime(), processCpuNanos(), machineTicks());
  }

  Share since() {
    CpuUse end = now();
    double wall = Math.max(1, end.wallNanos - wallNanos);
    double process = processNanos < 0 || end.processNanos < 0 ? -1 : (end.processNanos - processNanos) / wall;
    double machine = -1;
    if (machineTicks != null && end.machineTicks != null) {
      long busy = end.machineTicks[0] - machineTicks[0];
      long total = end.machineTicks[1] - machineTicks[1];
      machine = total <= 0 ? -1 : (double) busy / total * Runtime.getRuntime().availableProcessors();
    }
    return new Share(process, machine);
  }

  private static long processCpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return -1;
  }

  /** {busy, total} ticks of all CPUs since boot; busy excludes idle and iowait. */
  private static long[] machineTicks() {
    try {
      String[] fields = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long total = 0;
      long idle = 0;
      for (int i = 1; i < fields.length && i <= 8; i++) {
        long ticks = Long.parseLong(fields[i]);
        total += ticks;
        if (i == 4 || i == 5) {
          idle += ticks;
        }
      }
      return new long[] {total - idle, total};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
