package io.countergateway.frontdoor;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The OpenAPI document as YAML and as OpenAPI, without a server: a flow mapping such as
 * {@code {description: a, b}} is valid YAML that quietly turns the text after a comma into a key, so the document must
 * hold no key a schema does not know, no duplicate key, no {@code $ref} to nothing and no operation without answers.
 */
class OpenApiLintTest {
  /** JSON Schema 2020-12 keywords OpenAPI 3.1 takes in a schema, and OpenAPI's own. */
  private static final Set<String> SCHEMA_KEYWORDS = Set.of(
    "$ref", "$id", "$schema", "$comment", "$defs", "$anchor", "type", "format", "title", "description", "default",
    "examples", "example", "enum", "const", "deprecated", "readOnly", "writeOnly", "properties", "required",
    "additionalProperties", "patternProperties", "propertyNames", "unevaluatedProperties", "minProperties",
    "maxProperties", "dependentRequired", "dependentSchemas", "items", "prefixItems", "contains", "minContains",
    "maxContains", "minItems", "maxItems", "uniqueItems", "unevaluatedItems", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "contentMediaType",
    "contentEncoding", "contentSchema", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "discriminator",
    "xml", "externalDocs");
  private static final Set<String> SUBSCHEMA_MAPS = Set.of("properties", "patternProperties", "$defs",
    "dependentSchemas");
  private static final Set<String> SUBSCHEMA_LISTS = Set.of("allOf", "anyOf", "oneOf", "prefixItems");
  private static final Set<String> SUBSCHEMAS = Set.of("items", "additionalProperties", "not", "if", "then", "else",
    "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "contentSchema");
  private static final Set<String> OPERATIONS = Set.of("get", "put", "post", "delete", "options", "head", "patch",
    "trace");
  private static final Set<String> OPERATION_FIELDS = Set.of("tags", "summary", "description", "externalDocs",
    "operationId", "parameters", "requestBody", "responses", "callbacks", "deprecated", "security", "servers");
  private static final Set<String> PATH_ITEM_FIELDS = Set.of("$ref", "summary", "description", "servers", "parameters");

  private static final ObjectMapper STRICT_YAML = new ObjectMapper(new YAMLFactory())
    .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  @Test
  @DisplayName("the document is YAML without a duplicate key")
  void noDuplicateKeys() {
    assertThat(document()).isNotNull();
  }

  @Test
  @DisplayName("the lint itself refuses a duplicate key and a description whose comma made a key")
  void lintCatchesWhatItLooksFor() throws IOException {
    assertThatThrownBy(() -> STRICT_YAML.readTree("a: {type: string}\na: {type: integer}\n"))
      .hasMessageContaining("Duplicate field 'a'");
    JsonNode bogus = STRICT_YAML.readTree("components:\n  schemas:\n    E:\n      properties:\n"
      + "        field: {type: string, description: the part at fault (a path parameter, a JSON field)}\n");
    assertThat(schemaProblems(bogus)).singleElement().asString().contains("a JSON field)");
  }

  @Test
  @DisplayName("every key of every schema is a JSON Schema or OpenAPI keyword")
  void schemasHoldOnlyKeywords() {
    assertThat(schemaProblems(document())).isEmpty();
  }

  @Test
  @DisplayName("every $ref points at something in the document")
  void everyReferenceResolves() {
    JsonNode document = document();
    List<String> refs = new ArrayList<>();
    collectRefs(document, refs);
    assertThat(refs).isNotEmpty().allSatisfy(ref -> {
      assertThat(ref).as("only local references").startsWith("#/");
      assertThat(document.at(JsonPointer.compile(ref.substring(1))).isMissingNode()).as(ref).isFalse();
    });
  }

  @Test
  @DisplayName("every path has operations, each with its known fields and at least one response")
  void everyOperationHasResponses() {
    JsonNode paths = document().path("paths");
    assertThat(paths.size()).isPositive();
    paths.fields().forEachRemaining(path -> {
      List<String> operations = new ArrayList<>();
      path.getValue().fields().forEachRemaining(entry -> {
        if (!OPERATIONS.contains(entry.getKey())) {
          assertThat(PATH_ITEM_FIELDS).as(path.getKey() + " has a key that is no field of a path").contains(entry.getKey());
          return;
        }
        operations.add(entry.getKey());
        String where = entry.getKey().toUpperCase() + " " + path.getKey();
        entry.getValue().fieldNames().forEachRemaining(field ->
          assertThat(field.startsWith("x-") || OPERATION_FIELDS.contains(field)).as(where + ": " + field).isTrue());
        assertThat(entry.getValue().path("responses").size()).as(where + " responses").isPositive();
      });
      assertThat(operations).as(path.getKey()).isNotEmpty();
    });
  }

  private static JsonNode document() {
    try (InputStream in = OpenApiLintTest.class.getResourceAsStream(DocumentedApi.RESOURCE)) {
      return STRICT_YAML.readTree(in);
    } catch (IOException e) {
      throw new AssertionError("openapi.yaml is not valid YAML (or holds a key twice): " + e.getMessage(), e);
    }
  }

  /** "where: key" for each key of a schema that is no keyword, wherever a schema stands in the document. */
  private static List<String> schemaProblems(JsonNode document) {
    List<String> problems = new ArrayList<>();
    document.path("components").path("schemas").fields()
      .forEachRemaining(schema -> checkSchema(schema.getValue(), "#/components/schemas/" + schema.getKey(), problems));
    findSchemas(document, "#", problems);
    return problems;
  }

  /** Every value under a {@code schema} key (parameters, headers, media types), anywhere outside components.schemas. */
  private static void findSchemas(JsonNode node, String where, List<String> problems) {
    if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        findSchemas(node.get(i), where + "/" + i, problems);
      }
      return;
    }
    Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      String path = where + "/" + field.getKey();
      if (path.equals("#/components/schemas")) {
        continue;
      }
      if (field.getKey().equals("schema")) {
        checkSchema(field.getValue(), path, problems);
      } else {
        findSchemas(field.getValue(), path, problems);
      }
    }
  }

  private static void checkSchema(JsonNode schema, String where, List<String> problems) {
    if (schema.isBoolean()) {
      return;
    }
    if (!schema.isObject()) {
      problems.add(where + " is not a schema");
      return;
    }
    schema.fields().forEachRemaining(field -> {
      String key = field.getKey();
      JsonNode value = field.getValue();
      String path = where + "/" + key;
      if (!key.startsWith("x-") && !SCHEMA_KEYWORDS.contains(key)) {
        problems.add(where + ": " + key);
      } else if (SUBSCHEMA_MAPS.contains(key)) {
        value.fields().forEachRemaining(sub -> checkSchema(sub.getValue(), path + "/" + sub.getKey(), problems));
      } else if (SUBSCHEMA_LISTS.contains(key)) {
        for (int i = 0; i < value.size(); i++) {
          checkSchema(value.get(i), path + "/" + i, problems);
        }
      } else if (SUBSCHEMAS.contains(key)) {
        checkSchema(value, path, problems);
      }
    });
  }

  private static void collectRefs(JsonNode node, List<String> refs) {
    if (node.isObject() && node.path("$ref").isTextual()) {
      refs.add(node.path("$ref").asText());
    }
    node.elements().forEachRemaining(child -> collectRefs(child, refs));
  }
}
