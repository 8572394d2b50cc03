package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import java.util.List;
import java.util.Map;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.Importance.HIGH;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.LONG;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.choice;
import static io.countergateway.config.ConfigKey.notBlank;

/**
 * The write-ahead journal of accepted increments (src/DESIGN.md §4 "Journal"): where its segment files live, when an
 * answer waits for {@code fsync}, and how much it may hold.
 */
public final class JournalOptions {
  /** When a 202/204 is answered: after the fsync that covers it, after the write (fsync every interval), or after the write only. */
  public enum Fsync { ALWAYS, EVERY_MS, OFF }

  static final ConfigDef KEYS = ConfigDef.section("journal");
  public static final ConfigKey<Boolean> ENABLED = KEYS.define("enabled", MEDIUM, BOOLEAN, true, any(),
    "every increment answered 202/204 is first appended to a local write-ahead journal, replayed at start");
  public static final ConfigKey<String> DIR = KEYS.define("dir", HIGH, STRING, "./journal", notBlank(),
    "the journal's directory (one per gateway; segment files per ingest verticle)");
  public static final ConfigKey<String> FSYNC = KEYS.define("fsync", MEDIUM,
    // unquoted, YAML reads off as false: that is off as written
    choice(List.of("always", "everyMs", "off"), Map.of("everyms", "everyMs", "everysec", "everyMs", "false", "off")),
    "always", any(),
    "always: answer after the group-committed fsync, the one mode whose answers survive a machine crash (the default: "
      + "measured, everyMs gains a beacon 0-40 % in 5 rounds of 6 and loses what a crash takes; docs/benchmarks.md); "
      + "everyMs: answer after the write (in the page cache, it outlives the process), fsync every `fsyncInterval`; "
      + "off: the same, fsync only before flushes");
  public static final ConfigKey<Duration> FSYNC_INTERVAL = KEYS.define("fsyncInterval", LOW, DURATION, Duration.ofMillis(100),
    between(Duration.ofMillis(1), Duration.ofMinutes(1)), "with fsync everyMs: how often the journal is synced (an OS "
      + "crash loses at most this window)")
    .formerly("fsyncIntervalMs", ChronoUnit.MILLIS);
  public static final ConfigKey<Long> SEGMENT_BYTES = KEYS.define("segmentBytes", LOW, LONG, 4L * 1024 * 1024,
    between(64 * 1024, 256L * 1024 * 1024), "the largest a journal segment grows to (the first is 256 KiB, each next "
      + "twice the last); a segment is zero-filled when made, so this is also what a new segment takes on disk at once. "
      + "Each ingest verticle also keeps 4 x this unused as the reserve a full disk drains through, and 1 x (at most "
      + "16 MiB) as the room of the next start; a flush record takes at most a quarter of it");
  public static final ConfigKey<Long> MAX_BYTES = KEYS.define("maxBytes", MEDIUM, LONG, 1024L * 1024 * 1024,
    between(128 * 1024, 1L << 40), "journal bytes per ingest verticle before accepted increments get 503; "
      + "at least 2 x `segmentBytes`");

  private final boolean enabled;
  private final String dir;
  private final Fsync fsync;
  private final int fsyncIntervalMs;
  private final long segmentBytes;
  private final long maxBytes;

  private JournalOptions(ConfigSection section) {
    enabled = section.get(ENABLED);
    dir = section.get(DIR);
    fsync = switch (section.get(FSYNC)) {
      case "everyMs" -> Fsync.EVERY_MS;
      case "off" -> Fsync.OFF;
      default -> Fsync.ALWAYS;
    };
    fsyncIntervalMs = (int) section.get(FSYNC_INTERVAL).toMillis();
    segmentBytes = section.get(SEGMENT_BYTES);
    maxBytes = section.get(MAX_BYTES);
  }

  static JournalOptions from(ConfigSection section) {
    JournalOptions options = new JournalOptions(section);
    if (options.maxBytes < 2 * options.segmentBytes) {
      throw new ConfigException(section.key(MAX_BYTES), "must be at least 2 x " + section.key(SEGMENT_BYTES)
        + " (" + 2 * options.segmentBytes + "), got " + options.maxBytes);
    }
    return options;
  }

  /** For tests: the journal in {@code dir} with the given policy, other settings at their defaults. */
  public static JournalOptions of(String dir, Fsync fsync, long segmentBytes, long maxBytes) {
    return new JournalOptions(true, dir, fsync, (int) FSYNC_INTERVAL.defaultValue().toMillis(), segmentBytes, maxBytes);
  }

  private JournalOptions(boolean enabled, String dir, Fsync fsync, int fsyncIntervalMs, long segmentBytes, long maxBytes) {
    this.enabled = enabled;
    this.dir = dir;
    this.fsync = fsync;
    this.fsyncIntervalMs = fsyncIntervalMs;
    this.segmentBytes = segmentBytes;
    this.maxBytes = maxBytes;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public String getDir() {
    return dir;
  }

  public Fsync getFsync() {
    return fsync;
  }

  public int getFsyncIntervalMs() {
    return fsyncIntervalMs;
  }

  public long getSegmentBytes() {
    return segmentBytes;
  }

  public long getMaxBytes() {
    return maxBytes;
  }
}
