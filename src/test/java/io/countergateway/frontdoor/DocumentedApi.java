package io.countergateway.frontdoor;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.openapi.contract.MediaType;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.validation.ResponseValidator;
import io.vertx.openapi.validation.ValidatableResponse;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import static io.countergateway.testing.GatewayFixture.await;

/**
 * The gateway's OpenAPI document ({@code src/main/resources/openapi.yaml}), loaded by vertx-openapi to check real
 * answers against it. vertx-openapi 5.0 validates JSON and text bodies only and refuses a contract that names
 * other media types (image/gif, text/javascript, application/yaml, application/x-ndjson): the copy it gets has
 * those taken out, and for them this class checks, from the document as written, that the answer's media type
 * is the one documented. It also matches header names case-insensitively, as HTTP does (vertx-openapi looks them
 * up as written in the document, but lower-cases the answer's).
 */
final class DocumentedApi {
  static final String RESOURCE = "/openapi.yaml";

  final JsonObject raw;
  final OpenAPIContract contract;
  private final ResponseValidator validator;

  private DocumentedApi(JsonObject raw, OpenAPIContract contract, ResponseValidator validator) {
    this.raw = raw;
    this.contract = contract;
    this.validator = validator;
  }

  static DocumentedApi load(Vertx vertx) {
    JsonObject raw = rawDocument();
    OpenAPIContract contract = await(OpenAPIContract.from(vertx, forValidator(raw.copy())));
    return new DocumentedApi(raw, contract, ResponseValidator.create(vertx, contract));
  }

  static JsonObject rawDocument() {
    try (InputStream in = DocumentedApi.class.getResourceAsStream(RESOURCE)) {
      return parse(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonObject parse(String yaml) {
    Map<String, Object> tree = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
    // the round trip through JSON text makes every nested map a JsonObject and every list a JsonArray
    return new JsonObject(io.vertx.core.json.Json.encode(tree));
  }

  /** The operation that documents this request, or null when the document has none. */
  Operation operation(HttpMethod method, String path) {
    return contract.findOperation(path.contains("?") ? path.substring(0, path.indexOf('?')) : path, method);
  }

  /** Fails (with the validator's reason) unless the answer is one the document describes for this operation. */
  void check(Operation operation, HttpResponse<Buffer> response) {
    String contentType = mediaType(response.getHeader("Content-Type"));
    JsonObject documented = documentedResponse(operation, response.statusCode());
    if (documented == null) {
      throw new AssertionError(operation.getOperationId() + " does not document status " + response.statusCode());
    }
    JsonObject content = documented.getJsonObject("content", new JsonObject());
    boolean hasBody = response.body() != null && response.body().length() > 0;
    if (hasBody && !content.containsKey(contentType)) {
      throw new AssertionError(operation.getOperationId() + " " + response.statusCode() + " answered " + contentType
        + ", the document says " + content.fieldNames());
    }
    Map<String, String> headers = new HashMap<>();
    response.headers().names().forEach(name -> headers.put(name, response.getHeader(name)));
    boolean validatorReadsBody = hasBody && MediaType.isMediaTypeSupported(contentType);
    await(validator.validate(validatorReadsBody
      ? ValidatableResponse.create(response.statusCode(), headers, response.body(), contentType)
      : ValidatableResponse.create(response.statusCode(), headers), operation.getOperationId())
      .recover(e -> Future.failedFuture(new AssertionError(operation.getOperationId() + " "
        + response.statusCode() + ": " + e.getMessage() + " in " + response.bodyAsString(), e))));
  }

  private JsonObject documentedResponse(Operation operation, int status) {
    JsonObject responses = raw.getJsonObject("paths").getJsonObject(operation.getOpenAPIPath())
      .getJsonObject(operation.getHttpMethod().name().toLowerCase(Locale.ROOT)).getJsonObject("responses");
    JsonObject response = responses.getJsonObject(String.valueOf(status));
    if (response != null && response.containsKey("$ref")) {
      String name = response.getString("$ref").substring("#/components/responses/".length());
      response = raw.getJsonObject("components").getJsonObject("responses").getJsonObject(name);
    }
    return response;
  }

  private static String mediaType(String contentType) {
    return contentType == null ? null : contentType.split(";")[0].strip().toLowerCase(Locale.ROOT);
  }

  /** The copy vertx-openapi can load: only the media types it validates, header names in lower case. */
  private static JsonObject forValidator(JsonObject document) {
    JsonObject components = document.getJsonObject("components");
    components.getJsonObject("responses").forEach(entry -> adaptResponse((JsonObject) entry.getValue()));
    for (JsonObject path : values(document.getJsonObject("paths"))) {
      for (String method : path.fieldNames()) {
        if (!(path.getValue(method) instanceof JsonObject operation) || method.equals("parameters")) {
          continue;
        }
        JsonObject body = operation.getJsonObject("requestBody");
        if (body != null) {
          body.getJsonObject("content").fieldNames().removeIf(type -> !MediaType.isMediaTypeSupported(type));
          if (body.getJsonObject("content").isEmpty()) {
            operation.remove("requestBody");
          }
        }
        values(operation.getJsonObject("responses")).forEach(DocumentedApi::adaptResponse);
      }
    }
    return document;
  }

  private static void adaptResponse(JsonObject response) {
    JsonObject content = response.getJsonObject("content");
    if (content != null) {
      content.fieldNames().removeIf(type -> !MediaType.isMediaTypeSupported(type));
      if (content.isEmpty()) {
        response.remove("content");
      }
    }
    JsonObject headers = response.getJsonObject("headers");
    if (headers != null) {
      JsonObject lower = new JsonObject();
      headers.forEach(entry -> lower.put(entry.getKey().toLowerCase(Locale.ROOT), entry.getValue()));
      response.put("headers", lower);
    }
  }

  private static Iterable<JsonObject> values(JsonObject object) {
    return object.stream().map(Map.Entry::getValue).filter(JsonObject.class::isInstance).map(JsonObject.class::cast)
      .toList();
  }
}
