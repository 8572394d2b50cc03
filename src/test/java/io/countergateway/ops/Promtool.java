package io.countergateway.ops;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Prometheus's own checker (Debian package {@code prometheus}); tests that need it skip where it is missing. */
final class Promtool {
  record Result(int exitCode, String output) {
  }

  private Promtool() {
  }

  static void assumeInstalled() {
    Assumptions.assumeTrue(find() != null, "promtool is not installed (apt-get install prometheus)");
  }

  /** Runs promtool with {@code args}, feeding {@code stdin} when not null. */
  static Result run(String stdin, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(find());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (stdin != null) {
      process.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    process.getOutputStream().close();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException("promtool did not finish: " + command);
    }
    return new Result(process.exitValue(), output);
  }

  private static String find() {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
      Path candidate = Path.of(dir, "promtool");
      if (Files.isExecutable(candidate)) {
        return candidate.toString();
      }
    }
    return null;
  }
}
