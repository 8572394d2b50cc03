package io.countergateway.frontdoor;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The error codes of the OpenAPI document against the table of docs/api.md "Errors": the same codes in both, each under
 * the statuses the document answers it with. A client written from either page meets no code the other leaves out.
 */
@DisplayName("The error codes of openapi.yaml against docs/api.md")
class ErrorCodesDocTest {
  private static final Path PAGE = Path.of("docs/api.md");
  /** A row of the errors table: "| 413 / 414 / 431 | `body_too_large`, … | when |". */
  private static final Pattern ROW = Pattern.compile("^\\| (\\d{3}(?: / \\d{3})*) \\| ([^|]*) \\|", Pattern.MULTILINE);
  private static final Pattern CODE = Pattern.compile("`([a-z_]+)`");
  private static final String RESPONSE_REF = "#/components/responses/";

  @Test
  @DisplayName("every error code of the OpenAPI document is in docs/api.md's errors table, and every code there in the "
    + "document")
  void sameCodes() throws IOException {
    assertThat(tableCodes().keySet()).as("codes of docs/api.md's errors table")
      .containsExactlyInAnyOrderElementsOf(documentedCodes().keySet());
  }

  @Test
  @DisplayName("each code's statuses in the OpenAPI document are among those of its row in docs/api.md")
  void sameStatuses() throws IOException {
    Map<String, Set<Integer>> table = tableCodes();
    documentedCodes().forEach((code, statuses) -> assertThat(table.getOrDefault(code, Set.of()))
      .as("the statuses of %s in docs/api.md", code).containsAll(statuses));
  }

  /** Code → the statuses of its rows in docs/api.md's errors table. */
  private static Map<String, Set<Integer>> tableCodes() throws IOException {
    Map<String, Set<Integer>> codes = new TreeMap<>();
    Matcher row = ROW.matcher(Files.readString(PAGE));
    while (row.find()) {
      Set<Integer> statuses = new TreeSet<>();
      for (String status : row.group(1).split(" / ")) {
        statuses.add(Integer.valueOf(status));
      }
      Matcher code = CODE.matcher(row.group(2));
      while (code.find()) {
        codes.computeIfAbsent(code.group(1), c -> new TreeSet<>()).addAll(statuses);
      }
    }
    assertThat(codes).as("the errors table of " + PAGE).hasSizeGreaterThan(20);
    return codes;
  }

  /**
   * Code → the statuses the document answers it with: each operation's responses that refer to a response of
   * components whose schema names the code in its {@code error} enum.
   */
  private static Map<String, Set<Integer>> documentedCodes() {
    JsonObject document = DocumentedApi.rawDocument();
    JsonObject responses = document.getJsonObject("components").getJsonObject("responses");
    Map<String, Set<Integer>> codes = new TreeMap<>();
    for (String path : document.getJsonObject("paths").fieldNames()) {
      JsonObject item = document.getJsonObject("paths").getJsonObject(path);
      for (String method : item.fieldNames()) {
        JsonObject answers = item.getValue(method) instanceof JsonObject operation
          ? operation.getJsonObject("responses") : null;
        if (answers == null) {
          continue;
        }
        for (String status : answers.fieldNames()) {
          String ref = answers.getJsonObject(status).getString("$ref", "");
          if (ref.startsWith(RESPONSE_REF)) {
            Set<String> named = new TreeSet<>();
            collectErrorEnums(responses.getJsonObject(ref.substring(RESPONSE_REF.length())), named);
            named.forEach(code -> codes.computeIfAbsent(code, c -> new TreeSet<>()).add(Integer.valueOf(status)));
          }
        }
      }
    }
    // a response of components no operation refers to still documents its codes
    for (String name : responses.fieldNames()) {
      Set<String> named = new TreeSet<>();
      collectErrorEnums(responses.getJsonObject(name), named);
      named.forEach(code -> codes.computeIfAbsent(code, c -> new TreeSet<>()));
    }
    assertThat(codes).as("error codes of the OpenAPI document").hasSizeGreaterThan(20);
    return codes;
  }

  /** The values of every {@code error: {enum: […]}} (or {@code const}) under {@code node}. */
  private static void collectErrorEnums(Object node, Set<String> codes) {
    if (node instanceof JsonObject object) {
      object.forEach(entry -> {
        if (entry.getKey().equals("error") && entry.getValue() instanceof JsonObject error) {
          if (error.getValue("enum") instanceof JsonArray values) {
            values.forEach(value -> codes.add(String.valueOf(value)));
          }
          if (error.getValue("const") != null) {
            codes.add(String.valueOf(error.getValue("const")));
          }
        }
        collectErrorEnums(entry.getValue(), codes);
      });
    } else if (node instanceof JsonArray array) {
      array.forEach(item -> collectErrorEnums(item, codes));
    }
  }
}
