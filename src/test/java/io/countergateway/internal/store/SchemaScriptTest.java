package io.countergateway.internal.store;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("The numbered schema steps as files")
class SchemaScriptTest {
  @Test
  @DisplayName("a stored procedure's body stays one statement: statements end where the DELIMITER line says")
  void procedureBodyIsOneStatement() {
    SchemaScript.Step step = SchemaScript.steps("mysql", "t").get(8);

    assertThat(step.version()).isEqualTo(9);
    assertThat(step.statements()).hasSize(2);
    assertThat(step.statements().get(0)).isEqualTo("DROP PROCEDURE IF EXISTS t_write_flush");
    assertThat(step.statements().get(1)).startsWith("CREATE PROCEDURE t_write_flush(").endsWith("COMMIT;\nEND")
      .contains("START TRANSACTION;", "INSERT INTO t_flushes (flush_id) VALUES (the_id);")
      .as("the closed fence it refuses is the store's").contains("the_fence = " + FlushSourceRow.CLOSED + " THEN");
  }

  @Test
  @DisplayName("both dialects have the same steps, and no statement carries a directive or a comment")
  void dialectsAlike() {
    List<SchemaScript.Step> postgres = SchemaScript.steps("postgres", "t");
    List<SchemaScript.Step> mysql = SchemaScript.steps("mysql", "t");

    assertThat(postgres).hasSameSizeAs(mysql);
    for (SchemaScript.Step step : mysql) {
      assertThat(step.statements()).allSatisfy(sql -> assertThat(sql).doesNotContain("DELIMITER", "--").isNotBlank());
    }
  }
}
