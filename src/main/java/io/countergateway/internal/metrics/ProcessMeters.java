package io.countergateway.internal.metrics;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.UnixOperatingSystemMXBean;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The process's own meters under the names Prometheus's client libraries give them, so the usual dashboards and alerts
 * apply: {@code process_cpu_seconds_total}, {@code process_resident_memory_bytes}, {@code process_virtual_memory_bytes},
 * {@code process_open_fds}, {@code process_max_fds} ({@code process_start_time_seconds} and
 * {@code process_uptime_seconds} come with Vert.x's JVM meters).
 */
final class ProcessMeters {
  /**
   * Linux: the process's memory in kB. Read on the scrape's event loop: the kernel writes it out of memory, no disk
   * behind it, in microseconds.
   */
  private static final Path STATUS = Path.of("/proc/self/status");

  private ProcessMeters() {
  }

  static void register(MeterRegistry registry) {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
      FunctionCounter.builder("process.cpu", os, bean -> bean.getProcessCpuTime() / 1e9).baseUnit("seconds")
        .description("CPU time used by the gateway's process").register(registry);
      Gauge.builder("process.virtual.memory", os, OperatingSystemMXBean::getCommittedVirtualMemorySize)
        .baseUnit("bytes").description("virtual memory of the gateway's process").register(registry);
    }
    if (ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean unix) {
      Gauge.builder("process.open.fds", unix, UnixOperatingSystemMXBean::getOpenFileDescriptorCount)
        .description("open file descriptors: sockets, journal segments, jars").register(registry);
      Gauge.builder("process.max.fds", unix, UnixOperatingSystemMXBean::getMaxFileDescriptorCount)
        .description("the process's limit of open file descriptors").register(registry);
    }
    if (Files.isReadable(STATUS)) {
      Gauge.builder("process.resident.memory", STATUS, ProcessMeters::residentBytes).baseUnit("bytes")
        .description("resident set of the gateway's process (VmRSS): heap, direct buffers, mapped journal segments")
        .register(registry);
    }
  }

  private static double residentBytes(Path status) {
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024.0;
        }
      }
    } catch (IOException | NumberFormatException unreadable) {
      return Double.NaN;
    }
    return Double.NaN;
  }
}
