package io.countergateway.internal.store;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/databases.md "Removing the gateway's tables" against the schema steps: its statements for a dialect drop every
 * table and procedure the steps of that dialect create (and the schema-version table, which the gateway creates
 * itself), so that following them leaves nothing of the gateway's behind.
 */
@DisplayName("The removal statements of docs/databases.md against the schema")
class SchemaRemovalDocTest {
  private static final Path PAGE = Path.of("docs/databases.md");
  private static final String TABLE = "slotted_counters";
  private static final Pattern CREATED_TABLE = Pattern.compile("CREATE TABLE IF NOT EXISTS \\$\\{table}(\\w*)");
  private static final Pattern CREATED_PROCEDURE = Pattern.compile("CREATE PROCEDURE \\$\\{table}(\\w*)");
  /** Created by SchemaUpgrade, not by a step: the record of the steps applied. */
  private static final String SCHEMA_TABLE = TABLE + "_schema";

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres", "mysql"})
  @DisplayName("the page drops every table and procedure the dialect's schema steps create")
  void removalDropsWhatTheSchemaCreates(String dialect) throws IOException {
    Set<String> tables = new TreeSet<>(Set.of(SCHEMA_TABLE));
    Set<String> procedures = new TreeSet<>();
    try (Stream<Path> steps = Files.list(Path.of("src/main/resources/schema", dialect))) {
      for (Path step : steps.filter(file -> file.toString().endsWith(".sql")).toList()) {
        String sql = Files.readString(step);
        collect(CREATED_TABLE, sql, tables);
        collect(CREATED_PROCEDURE, sql, procedures);
      }
    }
    String block = removalBlock(dialect);
    assertThat(names("DROP TABLE IF EXISTS ([^;]+);", block)).as("tables the page drops on %s", dialect)
      .isEqualTo(tables);
    assertThat(names("DROP PROCEDURE IF EXISTS ([^;]+);", block)).as("procedures the page drops on %s", dialect)
      .isEqualTo(procedures);
  }

  /** The page's statements for {@code dialect}: from its comment line to the next comment line or the block's end. */
  private static String removalBlock(String dialect) throws IOException {
    String page = Files.readString(PAGE);
    Matcher block = Pattern.compile("## Removing the gateway's tables.*?```sql\n(.*?)```", Pattern.DOTALL).matcher(page);
    assertThat(block.find()).as("the removal section of " + PAGE).isTrue();
    String marker = dialect.equals("postgres") ? "-- PostgreSQL" : "-- MySQL / MariaDB";
    String statements = block.group(1);
    int from = statements.indexOf(marker);
    assertThat(from).as(marker).isNotNegative();
    int to = statements.indexOf("\n--", from + 1);
    return statements.substring(from, to < 0 ? statements.length() : to);
  }

  private static void collect(Pattern pattern, String sql, Set<String> into) {
    Matcher created = pattern.matcher(sql);
    while (created.find()) {
      into.add(TABLE + created.group(1));
    }
  }

  private static Set<String> names(String statement, String block) {
    Set<String> names = new TreeSet<>();
    Matcher drop = Pattern.compile(statement).matcher(block);
    while (drop.find()) {
      for (String name : drop.group(1).split(",")) {
        names.add(name.strip());
      }
    }
    return names;
  }
}
