package io.countergateway;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.TestDatabases;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class CleanStartIT {
  @Test
  @DisplayName("a clean start and a graceful stop of Main log no warning and no error")
  void cleanStartLogsNoWarning() {
    try (GatewayProcess gateway = GatewayProcess.start("clean-start",
      GatewayFixture.baseConfig(TestDatabases.postgres(), "clean_start"))) {
      gateway.awaitListening(Duration.ofSeconds(90));
      assertThat(gateway.stopGracefully(Duration.ofSeconds(60))).isZero();
      List<String> lines = gateway.logLines();
      assertThat(lines).anyMatch(line -> line.contains("counter-gateway listening on"));
      assertThat(lines).as(String.join("\n", lines))
        .noneMatch(line -> line.contains(" WARN ") || line.contains(" ERROR ") || line.startsWith("WARNING"));
    }
  }
}
