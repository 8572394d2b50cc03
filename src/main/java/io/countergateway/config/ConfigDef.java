package io.countergateway.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The definition table of one configuration section, e.g. {@code batching} or the per-entry {@code namespaces.<name>}:
 * each options class declares its keys once, in one static block, with {@link #define} (modelled on Kafka's
 * {@code ConfigDef}). {@link #all()} lists every section in the order the README documents them.
 *
 * <p>Adding a key: one {@code define} in its options class, read there with {@link ConfigSection#get}; then the
 * README table ({@link #markdownTable()}) and {@code conf/gateway.yaml}, which {@code ConfigDocsTest} holds to the
 * definitions.
 */
public final class ConfigDef {
  private static final Map<String, Pattern> PATTERNS = new ConcurrentHashMap<>();

  private final String pattern;
  private final List<ConfigKey<?>> keys = new ArrayList<>();

  private ConfigDef(String pattern) {
    this.pattern = pattern;
  }

  /** A section's definitions; {@code pattern} is its dotted path ({@code ""} for the top level). */
  static ConfigDef section(String pattern) {
    return new ConfigDef(pattern);
  }

  /**
   * Every section, in the README's order. Listed here rather than in a static field: the options classes create
   * their sections while they initialise, and a static list here would read them half-built.
   */
  public static List<ConfigDef> all() {
    return Sections.ALL;
  }

  /** Every key of every section, in the README's order. */
  public static List<ConfigKey<?>> allKeys() {
    return all().stream().flatMap(section -> section.keys().stream()).toList();
  }

  /** The definition {@code dottedKey} (e.g. {@code namespaces.likes.slots}) is a key of, or null. */
  public static ConfigKey<?> find(String dottedKey) {
    return allKeys().stream().filter(key -> key.matches(dottedKey)).findFirst().orElse(null);
  }

  /** The README's configuration table, one row per key. */
  public static String markdownTable() {
    StringBuilder table = new StringBuilder("| key | default | allowed | meaning |\n|---|---|---|---|\n");
    for (ConfigKey<?> key : allKeys()) {
      table.append("| `").append(key.name()).append("` | ").append(code(key))
        .append(" | ").append(cell(key.allowedText())).append(" | ").append(cell(key.doc())).append(" |\n");
    }
    return table.toString();
  }

  private static String code(ConfigKey<?> key) {
    return key.defaultKind() == ConfigKey.DefaultKind.VALUE ? "`" + cell(key.defaultText()) + "`" : cell(key.defaultText());
  }

  private static String cell(String text) {
    return text.replace("|", "\\|");
  }

  public String pattern() {
    return pattern;
  }

  public List<ConfigKey<?>> keys() {
    return Collections.unmodifiableList(keys);
  }

  /** Whether {@code path} (e.g. {@code namespaces.likes}, {@code rollups[2]}) is an instance of this section. */
  boolean matches(String path) {
    return patternRegex(pattern).matcher(path).matches();
  }

  /** A key with a fixed default. */
  <T> ConfigKey<T> define(String name, ConfigKey.Type<T> type, T defaultValue, ConfigKey.Rule<? super T> rule, String doc) {
    if (defaultValue == null) {
      throw new IllegalArgumentException(name + ": use defineRequired, defineOptional or defineDerived");
    }
    rule.check(name, defaultValue);
    return add(new ConfigKey<>(this, name, type, ConfigKey.DefaultKind.VALUE, defaultValue, null, rule, doc));
  }

  /** A key whose default follows other settings; {@code defaultText} says how, and the reader passes it. */
  <T> ConfigKey<T> defineDerived(String name, ConfigKey.Type<T> type, String defaultText, ConfigKey.Rule<? super T> rule,
                                 String doc) {
    return add(new ConfigKey<>(this, name, type, ConfigKey.DefaultKind.DERIVED, null, defaultText, rule, doc));
  }

  /** A key that must be set. */
  <T> ConfigKey<T> defineRequired(String name, ConfigKey.Type<T> type, ConfigKey.Rule<? super T> rule, String doc) {
    return add(new ConfigKey<>(this, name, type, ConfigKey.DefaultKind.REQUIRED, null, null, rule, doc));
  }

  /** A key whose absence means "none" (it reads as null). */
  <T> ConfigKey<T> defineOptional(String name, ConfigKey.Type<T> type, ConfigKey.Rule<? super T> rule, String doc) {
    return add(new ConfigKey<>(this, name, type, ConfigKey.DefaultKind.NONE, null, null, rule, doc));
  }

  private <T> ConfigKey<T> add(ConfigKey<T> key) {
    if (keys.stream().anyMatch(other -> other.localName().equals(key.localName()))) {
      throw new IllegalArgumentException(key.name() + " is defined twice");
    }
    keys.add(key);
    return key;
  }

  /** {@code namespaces.<name>.slots} as a regular expression matching {@code namespaces.likes.slots}. */
  static Pattern patternRegex(String pattern) {
    return PATTERNS.computeIfAbsent(pattern, p -> Pattern.compile(
      Pattern.quote(p).replace("<name>", "\\E[^.\\[\\]]+\\Q").replace("[]", "\\E\\[\\d+\\]\\Q")));
  }

  @Override
  public String toString() {
    return pattern.isEmpty() ? "(top level)" : pattern;
  }

  private static final class Sections {
    static final List<ConfigDef> ALL = List.of(
      HttpOptions.KEYS, BeaconOptions.KEYS, DatabaseOptions.KEYS, BatchingOptions.KEYS, JournalOptions.KEYS, LimitsOptions.KEYS,
      ReadOptions.KEYS, AuthOptions.KEYS, GatewayConfig.SHUTDOWN_KEYS, GatewayConfig.KEYS, RollupOptions.KEYS,
      CompactionOptions.KEYS, IdempotencyOptions.KEYS, LoggingOptions.KEYS, NamespaceOptions.KEYS, WindowOptions.KEYS,
      UniquesOptions.KEYS, ClusterOptions.KEYS, LaneOptions.KEYS);

    static {
      List<String> patterns = ALL.stream().map(ConfigDef::pattern).collect(Collectors.toList());
      if (patterns.size() != Set.copyOf(patterns).size()) {
        throw new IllegalStateException("a section is listed twice: " + patterns);
      }
    }
  }
}
