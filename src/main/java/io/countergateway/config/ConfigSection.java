package io.countergateway.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Typed, key-naming access to one section of the configuration tree, so every rejected value
 * reports its full dotted key (e.g. {@code batching.maxDelay}).
 *
 * <p>Values are read only by their definition ({@link ConfigKey}): name, default and rule come from there. Every key
 * asked for is recorded in the tree's {@link ConfigKeys}, so a key the file holds but no option reads stops start-up
 * as unknown.
 */
final class ConfigSection {
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

  /**
   * Options read by {@code reader} from {@code json} as the section at {@code path} (e.g. {@code database}) would
   * hold them, unknown keys refused: how tests and tools build options without a whole configuration.
   */
  static <T> T read(JsonObject json, String path, Function<ConfigSection, T> reader) {
    ConfigSection section = new ConfigSection(json, path);
    T options = reader.apply(section);
    section.rejectUnknownKeys();
    return options;
  }

  /** The keys asked for so far in this tree. */
  public ConfigKeys keys() {
    return keys;
  }

  /** Throws for the first key under this section that no option asked for. */
  public void rejectUnknownKeys() {
    keys.rejectUnknown(json, prefix);
  }

  /** This section's own dotted key, e.g. {@code rollups[0]}. */
  public String path() {
    return prefix;
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

  /**
   * A list of mappings, each reported as {@code name[i]} (e.g. {@code rollups[0].table}); absent means empty. Each
   * item records its keys apart (call {@link #rejectUnknownKeys()} on it once read): a list cannot come from the
   * environment, so its items' keys are no variables.
   */
  public List<ConfigSection> sections(ConfigKey<List<Object>> listKey) {
    String name = listKey.localName();
    Object value = raw(listKey);
    List<ConfigSection> result = new ArrayList<>();
    if (value == null) {
      return result;
    }
    if (!(value instanceof JsonArray array)) {
      throw new ConfigException(key(name), "must be a list of mappings");
    }
    for (int i = 0; i < array.size(); i++) {
      if (!(array.getValue(i) instanceof JsonObject item)) {
        throw new ConfigException(key(name) + "[" + i + "]", "must be a mapping");
      }
      result.add(new ConfigSection(item, key(name) + "[" + i + "]"));
    }
    return result;
  }

  /** The raw section, to list names (namespaces); a value read from it directly is not recorded as known. */
  public JsonObject json() {
    return json;
  }

  /** Whether {@code key} is set in this section. */
  public boolean has(ConfigKey<?> key) {
    return raw(key) != null;
  }

  /**
   * The value of {@code key} in this section, its default when unset.
   *
   * @throws ConfigException naming the key when the value is malformed or breaks the key's rule, or a required key
   *                         is unset
   */
  public <T> T get(ConfigKey<T> key) {
    if (key.defaultKind() == ConfigKey.DefaultKind.DERIVED) {
      throw new IllegalStateException(key + ": its default is derived; read it with get(key, default)");
    }
    return read(key, key.defaultValue());
  }

  /** The value of a key whose default follows other settings: {@code derivedDefault} when unset. */
  public <T> T get(ConfigKey<T> key, T derivedDefault) {
    if (key.defaultKind() != ConfigKey.DefaultKind.DERIVED) {
      throw new IllegalStateException(key + ": its default is in its definition");
    }
    return read(key, derivedDefault);
  }

  /** The dotted key {@code key} has in this section, e.g. {@code namespaces.likes.slots}. */
  public String key(ConfigKey<?> key) {
    return key(key.localName());
  }

  private <T> T read(ConfigKey<T> key, T defaultValue) {
    Object value = raw(key);
    if (value == null) {
      if (key.defaultKind() == ConfigKey.DefaultKind.REQUIRED) {
        String allowed = key.allowedText();
        throw new ConfigException(key(key), "is required" + (allowed.isEmpty() ? "" : ": " + allowed));
      }
      return defaultValue;
    }
    return key.parse(key(key), value);
  }

  /** The raw value of {@code key}, recorded as asked for; a dotted local name descends into its sub-sections. */
  private Object raw(ConfigKey<?> key) {
    if (!key.section().matches(prefix)) {
      throw new IllegalStateException(key + " is not a key of " + (prefix.isEmpty() ? "the top level" : prefix));
    }
    String name = key.localName();
    int dot = name.lastIndexOf('.');
    ConfigSection owner = this;
    if (dot > 0) {
      for (String part : name.substring(0, dot).split("\\.")) {
        owner = owner.section(part);
      }
      name = name.substring(dot + 1);
    }
    return owner.value(name);
  }

  private Object value(String name) {
    keys.askedForValue(key(name));
    return json.getValue(name);
  }
}
