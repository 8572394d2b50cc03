package io.countergateway.internal.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The numbered schema steps of one dialect: {@code src/main/resources/schema/<dialect>/001.sql}, {@code 002.sql}, …
 * Adding a step is adding the next file (one per dialect); the steps are found by probing the numbers in order, so
 * no list has to be kept in step with the files. The first comment line of a file is its description. Statements
 * end at {@code ;}, or at what a {@code DELIMITER} line names (the mysql client's directive, for a procedure's body).
 */
public final class SchemaScript {
  private SchemaScript() {
  }

  /** One numbered step: its statements, with {@code ${table}} replaced. */
  public record Step(int version, String description, List<String> statements) {
  }

  public static List<Step> steps(String dialect, String table) {
    List<Step> steps = new ArrayList<>();
    for (int version = 1; ; version++) {
      String text = read(resource(dialect, version));
      if (text == null) {
        return steps;
      }
      steps.add(parse(version, text.replace("${table}", table)));
    }
  }

  /** Where step {@code version} of {@code dialect} lives on the class path (and in the source tree). */
  public static String resource(String dialect, int version) {
    return "/schema/%s/%03d.sql".formatted(dialect, version);
  }

  private static Step parse(int version, String text) {
    String description = text.lines().filter(line -> line.trim().startsWith("--")).findFirst()
      .map(line -> line.trim().substring(2).trim()).orElse("step " + version);
    List<String> statements = new ArrayList<>();
    String delimiter = ";";
    StringBuilder statement = new StringBuilder();
    for (String line : text.lines().toList()) {
      String trimmed = line.trim();
      if (trimmed.startsWith("--")) {
        continue;
      }
      // the mysql client's directive, so a file with a stored procedure reads the same there and here
      if (trimmed.toUpperCase(Locale.ROOT).startsWith("DELIMITER ")) {
        delimiter = trimmed.substring("DELIMITER ".length()).trim();
        continue;
      }
      statement.append(line).append('\n');
      int end;
      while ((end = statement.indexOf(delimiter)) >= 0) {
        add(statements, statement.substring(0, end));
        statement.delete(0, end + delimiter.length());
      }
    }
    add(statements, statement.toString());
    return new Step(version, description.length() > 255 ? description.substring(0, 255) : description, statements);
  }

  private static void add(List<String> statements, String chunk) {
    String sql = chunk.trim();
    if (!sql.isEmpty()) {
      statements.add(sql);
    }
  }

  private static String read(String resource) {
    try (InputStream in = SchemaScript.class.getResourceAsStream(resource)) {
      return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
