package io.countergateway.internal.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;

/**
 * Decodes request bodies for the input rules. Unlike Vert.x's codec, which turns a number with a fraction or an
 * exponent into a double (so {@code 1.0000000000000001} arrives as a whole {@code 1.0} and passes the whole-number
 * rule), numbers keep their exact value: integers as Integer, Long or BigInteger, the others as BigDecimal. Comments
 * stay allowed, as they were with Vert.x's codec. A field name given twice is an error: with last-wins,
 * {@code {"delta":0,"delta":5}} would count 5 although the client also sent a refused 0.
 */
final class JsonBodies {
  private static final JsonFactory FACTORY = JsonFactory.builder().enable(JsonReadFeature.ALLOW_JAVA_COMMENTS)
    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  private JsonBodies() {
  }

  /**
   * The body as a JSON object; a {@link DecodeException} if it is not one. Read from the bytes, so Jackson detects the
   * encoding (UTF-8, -16 or -32).
   */
  static JsonObject object(Buffer body) {
    try (JsonParser parser = FACTORY.createParser(body.getBytes())) {
      return cast(read(parser), JsonObject.class);
    } catch (IOException | RuntimeException e) {
      throw decodeException(e);
    }
  }

  static JsonObject object(String text) {
    try (JsonParser parser = FACTORY.createParser(text)) {
      return cast(read(parser), JsonObject.class);
    } catch (IOException | RuntimeException e) {
      throw decodeException(e);
    }
  }

  static JsonArray array(String text) {
    try (JsonParser parser = FACTORY.createParser(text)) {
      return cast(read(parser), JsonArray.class);
    } catch (IOException | RuntimeException e) {
      throw decodeException(e);
    }
  }

  private static <T> T cast(Object value, Class<T> type) {
    if (!type.isInstance(value)) {
      throw new DecodeException("expected a JSON " + (type == JsonObject.class ? "object" : "array"));
    }
    return type.cast(value);
  }

  /** One JSON value and nothing after it. */
  private static Object read(JsonParser parser) throws IOException {
    JsonToken first = parser.nextToken();
    if (first == null) {
      throw new DecodeException("no JSON value");
    }
    Object value = value(parser, first);
    if (parser.nextToken() != null) {
      throw new DecodeException("unexpected content after the JSON value");
    }
    return value;
  }

  private static Object value(JsonParser parser, JsonToken token) throws IOException {
    switch (token) {
      case START_OBJECT: {
        JsonObject object = new JsonObject();
        for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
          object.put(name, value(parser, next(parser)));
        }
        return object;
      }
      case START_ARRAY: {
        JsonArray array = new JsonArray();
        for (JsonToken item = next(parser); item != JsonToken.END_ARRAY; item = next(parser)) {
          array.add(value(parser, item));
        }
        return array;
      }
      case VALUE_STRING:
        return parser.getText();
      case VALUE_NUMBER_INT:
        return parser.getNumberValue();
      case VALUE_NUMBER_FLOAT:
        return parser.getDecimalValue();
      case VALUE_TRUE:
        return Boolean.TRUE;
      case VALUE_FALSE:
        return Boolean.FALSE;
      case VALUE_NULL:
        return null;
      default:
        throw new DecodeException("unexpected " + token);
    }
  }

  private static JsonToken next(JsonParser parser) throws IOException {
    JsonToken token = parser.nextToken();
    if (token == null) {
      throw new DecodeException("the JSON ends too early");
    }
    return token;
  }

  private static DecodeException decodeException(Exception e) {
    return e instanceof DecodeException decode ? decode : new DecodeException("invalid JSON: " + e.getMessage());
  }
}
