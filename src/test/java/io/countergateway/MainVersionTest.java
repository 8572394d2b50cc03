package io.countergateway;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

class MainVersionTest {
  @Test
  @DisplayName("--version prints the version the build wrote, and exits 0 without starting anything")
  void printsTheVersion() {
    StringWriter out = new StringWriter();
    int exitCode = new CommandLine(new Main()).setOut(new PrintWriter(out)).execute("--version");
    assertThat(exitCode).isZero();
    assertThat(out.toString().strip()).matches("counter-gateway \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
  }
}
