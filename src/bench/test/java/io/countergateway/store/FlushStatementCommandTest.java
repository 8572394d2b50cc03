package io.countergateway.store;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FlushStatementCommandTest {
  @Test
  @DisplayName("pgbench gets the gateway's own flush statement on one line, every parameter a named variable")
  void gatewayStatementWithVariables() {
    String script = FlushStatementCommand.forPgbench("bench_t");
    String gateway = new PostgresSql("bench_t", true).upsertFlush;

    assertThat(script).doesNotContain("$", "\n").endsWith(";");
    for (String variable : FlushStatementCommand.VARIABLES) {
      assertThat(script).contains(":" + variable);
    }
    // nothing but the parameters and the white space differs
    String back = script;
    for (int i = FlushStatementCommand.VARIABLES.length; i >= 1; i--) {
      back = back.replace(":" + FlushStatementCommand.VARIABLES[i - 1], "$" + i);
    }
    assertThat(back).isEqualTo(gateway.replaceAll("\\s+", " ").strip() + ";");
  }
}
