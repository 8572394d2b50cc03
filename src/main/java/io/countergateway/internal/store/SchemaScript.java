package io.countergateway.internal.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The numbered schema steps of one dialect: {@code src/main/resources/schema/<dialect>/001.sql}, {@code 002.sql}, …
 * Adding a step is adding the next file (one per dialect); the steps are found by probing the numbers in order, so
 * no list has to be kept in step with the files. The first comment line of a file is its description.
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
    String withoutComments = text.lines().filter(line -> !line.trim().startsWith("--"))
      .reduce("", (a, b) -> a + b + "\n");
    List<String> statements = new ArrayList<>();
    for (String chunk : withoutComments.split(";")) {
      String sql = chunk.trim();
      if (!sql.isEmpty()) {
        statements.add(sql);
      }
    }
    return new Step(version, description.length() > 255 ? description.substring(0, 255) : description, statements);
  }

  private static String read(String resource) {
    try (InputStream in = SchemaScript.class.getResourceAsStream(resource)) {
      return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
