package io.countergateway.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A failing disk under a {@link GatewayProcess}'s journal: {@code src/test/native/journal_faults.c}, compiled here with
 * the machine's {@code gcc} into {@code target/journal-faults/} and loaded with {@code LD_PRELOAD} (pass
 * {@link #launcher()} to {@link GatewayProcess#start(String, io.vertx.core.json.JsonObject, String, List)}). It makes
 * the writes or syncs of journal segment files fail with EIO or ENOSPC, or block, from the moment {@link #set} names
 * the mode, as the C file describes. A test using it is skipped where there is no {@code gcc} or no Linux.
 */
public final class JournalFaultShim {
  public static final String WRITE_EIO = "write-eio";
  public static final String WRITE_ENOSPC = "write-enospc";
  public static final String SYNC_EIO = "sync-eio";
  public static final String WRITE_STALL = "write-stall";

  private static final Path SOURCE = Paths.get("src", "test", "native", "journal_faults.c").toAbsolutePath();
  private static final Path DIR = Paths.get("target", "journal-faults").toAbsolutePath();
  private static final Path LIBRARY = DIR.resolve("libjournalfaults.so");
  private static Boolean built;

  private final Path control;

  private JournalFaultShim(Path control) {
    this.control = control;
  }

  /** A shim with a control file of its own, no fault set; skips the calling test where it cannot be built. */
  public static JournalFaultShim create() {
    assumeTrue(buildOnce(), "needs Linux and gcc to build " + SOURCE);
    try {
      Path control = DIR.resolve("ctl-" + UUID.randomUUID().toString().substring(0, 8));
      Files.writeString(control, "");
      return new JournalFaultShim(control);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static synchronized boolean buildOnce() {
    if (built == null) {
      built = build();
    }
    return built;
  }

  private static boolean build() {
    if (!System.getProperty("os.name").toLowerCase().contains("linux") || !Files.exists(SOURCE)) {
      return false;
    }
    try {
      Files.createDirectories(DIR);
      Process gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", "-O2", "-Wall", "-o", LIBRARY.toString(),
        SOURCE.toString(), "-ldl").redirectErrorStream(true).start();
      String output = new String(gcc.getInputStream().readAllBytes());
      if (!gcc.waitFor(60, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
        System.err.println("gcc could not build " + SOURCE + ":\n" + output);
        return false;
      }
      return true;
    } catch (IOException noCompiler) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The launcher that starts a gateway's JVM with the shim loaded ({@code env} execs the java command in place). */
  public List<String> launcher() {
    return List.of("env", "LD_PRELOAD=" + LIBRARY, "JOURNAL_FAULTS_CTL=" + control);
  }

  /** From now on the journal's disk fails (or blocks) as {@code mode} says; {@code ""} ends the fault. */
  public void set(String mode) {
    try {
      Files.writeString(control, mode);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public void clear() {
    set("");
  }

  /** {@link System#nanoTime()} (the same clock, CLOCK_MONOTONIC) when the first fault was injected; empty if none yet. */
  public OptionalLong firstFaultNanos() {
    Path first = Path.of(control + ".first");
    try {
      String text = Files.exists(first) ? Files.readString(first).trim() : "";
      return text.isEmpty() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(text));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
