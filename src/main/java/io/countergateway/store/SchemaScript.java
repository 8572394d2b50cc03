package io.countergateway.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** The per-dialect schema file under {@code src/main/resources/schema}, split into statements. */
final class SchemaScript {
  private SchemaScript() {
  }

  static List<String> statements(String dialect, String table) {
    String resource = "/schema/" + dialect + ".sql";
    try (InputStream in = SchemaScript.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + resource);
      }
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${table}", table);
      String withoutComments = text.lines().filter(line -> !line.trim().startsWith("--"))
        .reduce("", (a, b) -> a + b + "\n");
      List<String> statements = new ArrayList<>();
      for (String chunk : withoutComments.split(";")) {
        String sql = chunk.trim();
        if (!sql.isEmpty()) {
          statements.add(sql);
        }
      }
      return statements;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
