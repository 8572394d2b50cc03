package io.countergateway.internal.store;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FlushStatementCommandTest {
  @Test
  @DisplayName("pgbench gets the gateway's own flush statement on one line, every parameter a named variable")
  void gatewayStatementWithVariables() {
    String script = FlushStatementCommand.forPgbench("bench_t");
    String gateway = new PostgresSql("bench_t").upsertFlush;

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

  @Test
  @DisplayName("the mysql client gets the MySQL store's flush: one call of the flush procedure, its rows as JSON")
  void mySqlFlushAsTheStoreSendsIt() {
    String call = FlushStatementCommand.mySqlTransaction("bench_t", "alone-1", 7, "alone", 2, 3);

    assertThat(call).doesNotContain("?", "\n").isEqualTo("CALL bench_t_write_flush('alone-1:7', 'alone-1', 7, "
      + "'[[\"alone\",\"c-0000000\",3,1],[\"alone\",\"c-0000001\",3,1]]', '[]');");
  }
}
