package io.countergateway.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * Typed, key-naming access to one section of the configuration tree, so every rejected value
 * reports its full dotted key (e.g. {@code batching.maxDelayMs}).
 *
 * <p>Every key asked for is recorded in the tree's {@link ConfigKeys}: read options only through this class and
 * a key the file holds but no option reads stops start-up as unknown.
 */
public final class ConfigSection {
  private final JsonObject json;
  private final String prefix;
  private final ConfigKeys keys;

  public ConfigSection(JsonObject json, String prefix) {
    this(json, prefix, new ConfigKeys());
  }

  private ConfigSection(JsonObject json, String prefix, ConfigKeys keys) {
    this.json = json == null ? new JsonObject() : json;
    this.prefix = prefix;
    this.keys = keys;
  }

  /** The keys asked for so far in this tree. */
  public ConfigKeys keys() {
    return keys;
  }

  /** Throws for the first key under this section that no option asked for. */
  public void rejectUnknownKeys() {
    keys.rejectUnknown(json, prefix);
  }

  public String key(String name) {
    return prefix.isEmpty() ? name : prefix + "." + name;
  }

  public ConfigSection section(String name) {
    keys.askedForSection(key(name));
    Object value = json.getValue(name);
    if (value != null && !(value instanceof JsonObject)) {
      throw new ConfigException(key(name), "must be a mapping");
    }
    return new ConfigSection((JsonObject) value, key(name), keys);
  }

  /** The raw section, to list names (namespaces); a value read from it directly is not recorded as known. */
  public JsonObject json() {
    return json;
  }

  public boolean has(String name) {
    return value(name) != null;
  }

  public int intValue(String name, int defaultValue) {
    return intValue(name, defaultValue, Integer.MIN_VALUE, Integer.MAX_VALUE);
  }

  public long longValue(String name, long defaultValue) {
    return longValue(name, defaultValue, Long.MIN_VALUE, Long.MAX_VALUE);
  }

  public int intValue(String name, int defaultValue, int min, int max) {
    Object value = value(name);
    if (value == null) {
      return defaultValue;
    }
    long parsed = parseLong(name, value);
    if (parsed < min || parsed > max) {
      throw new ConfigException(key(name), "must be between " + min + " and " + max + ", got " + parsed);
    }
    return (int) parsed;
  }

  public long longValue(String name, long defaultValue, long min, long max) {
    Object value = value(name);
    if (value == null) {
      return defaultValue;
    }
    long parsed = parseLong(name, value);
    if (parsed < min || parsed > max) {
      throw new ConfigException(key(name), "must be between " + min + " and " + max + ", got " + parsed);
    }
    return parsed;
  }

  public boolean boolValue(String name, boolean defaultValue) {
    Object value = value(name);
    if (value == null) {
      return defaultValue;
    }
    if (value instanceof Boolean b) {
      return b;
    }
    String text = value.toString().trim().toLowerCase();
    if (text.equals("true") || text.equals("false")) {
      return Boolean.parseBoolean(text);
    }
    throw new ConfigException(key(name), "must be true or false, got '" + value + "'");
  }

  public String stringValue(String name, String defaultValue) {
    Object value = value(name);
    if (value == null) {
      return defaultValue;
    }
    if (value instanceof JsonObject || value instanceof JsonArray) {
      throw new ConfigException(key(name), "must be a single value");
    }
    return value.toString();
  }

  /** A list, given either as a YAML sequence or as a comma-separated string (the form environment variables allow). */
  public List<String> stringList(String name) {
    Object value = value(name);
    List<String> result = new ArrayList<>();
    if (value == null) {
      return result;
    }
    if (value instanceof JsonArray array) {
      array.forEach(item -> result.add(String.valueOf(item).trim()));
    } else if (value instanceof JsonObject) {
      throw new ConfigException(key(name), "must be a list");
    } else {
      for (String part : value.toString().split(",")) {
        if (!part.isBlank()) {
          result.add(part.trim());
        }
      }
    }
    return result;
  }

  private Object value(String name) {
    keys.askedForValue(key(name));
    return json.getValue(name);
  }

  private long parseLong(String name, Object value) {
    if (value instanceof Number number) {
      if (number.doubleValue() != Math.rint(number.doubleValue())) {
        throw new ConfigException(key(name), "must be a whole number, got " + value);
      }
      return number.longValue();
    }
    try {
      return Long.parseLong(value.toString().trim());
    } catch (NumberFormatException e) {
      throw new ConfigException(key(name), "must be a whole number, got '" + value + "'");
    }
  }
}
