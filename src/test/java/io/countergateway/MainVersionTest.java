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

  @Test
  @DisplayName("a Java older than 17.0.9 is refused in one line naming both versions and the JDK; 17.0.9 and later run")
  void refusesAJavaTooOld() {
    assertThat(Main.javaTooOld(Runtime.Version.parse("17.0.8+7"), "/usr/lib/jvm/java-17-old"))
      .isEqualTo("Java 17.0.9 or later is needed; this is Java 17.0.8+7 (/usr/lib/jvm/java-17-old): run the gateway "
        + "with a newer JDK");
    assertThat(Main.javaTooOld(Runtime.Version.parse("17"), "/jdk")).startsWith("Java 17.0.9 or later is needed");
    assertThat(Main.javaTooOld(Runtime.Version.parse("17.0.9"), "/jdk")).isNull();
    assertThat(Main.javaTooOld(Runtime.Version.parse("17.0.15+6-Debian-1deb12u1"), "/jdk")).isNull();
    assertThat(Main.javaTooOld(Runtime.Version.parse("21.0.2"), "/jdk")).isNull();
    assertThat(Main.javaTooOld(Runtime.version(), "/jdk")).as("the JDK of this build").isNull();
  }
}
