package io.countergateway.config;

import io.countergateway.config.ConfigKey.Importance;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The definition table of one configuration section, e.g. {@code batching} or the per-entry {@code namespaces.<name>}:
 * each options class declares its keys once, in one static block, with {@link #define} (modelled on Kafka's
 * {@code ConfigDef}). {@link #all()} lists every section in the order the docs document them.
 *
 * <p>Adding a key: one {@code define} in its options class, with its importance (who sets it), read there with
 * {@link ConfigSection#get}; then the configuration tables of docs/configuration.md ({@link #markdownTable()}) and, for
 * a key of high importance, {@code conf/gateway.yaml}, which {@code ConfigDocsTest} holds to the definitions. A key
 * renamed or removed stays refused by its old name ({@link ConfigKey#formerly}, {@link #retired}).
 */
public final class ConfigDef {
  private static final Map<String, Pattern> PATTERNS = new ConcurrentHashMap<>();
  /** The headings and lead lines of the configuration tables, one per importance. */
  private static final Map<Importance, String> TIER_TITLES = Map.of(Importance.HIGH, "What you set",
    Importance.MEDIUM, "What you turn on or change", Importance.LOW, "Tuning");
  private static final Map<Importance, String> TIER_INTROS = Map.of(
    Importance.HIGH, "Where the gateway listens, its database, its namespaces, its tokens, its journal: what "
      + "`conf/gateway.yaml` shows.",
    Importance.MEDIUM, "Features and policies: TLS, the management port, a cluster, roll-ups, windows and unique "
      + "visitors, what clients may send.",
    Importance.LOW, "Defaults nobody should need to change: timeouts, intervals, retries, per-client budgets.");

  private final String pattern;
  private final List<ConfigKey<?>> keys = new ArrayList<>();
  private final List<Former> formers = new ArrayList<>();

  private ConfigDef(String pattern) {
    this.pattern = pattern;
  }

  /** A section's definitions; {@code pattern} is its dotted path ({@code ""} for the top level). */
  static ConfigDef section(String pattern) {
    return new ConfigDef(pattern);
  }

  /**
   * Every section, in the docs' order. Listed here rather than in a static field: the options classes create
   * their sections while they initialise, and a static list here would read them half-built.
   */
  public static List<ConfigDef> all() {
    return Sections.ALL;
  }

  /** Every key of every section, in the docs' order. */
  public static List<ConfigKey<?>> allKeys() {
    return all().stream().flatMap(section -> section.keys().stream()).toList();
  }

  /** The definition {@code dottedKey} (e.g. {@code namespaces.likes.slots}) is a key of, or null. */
  public static ConfigKey<?> find(String dottedKey) {
    return allKeys().stream().filter(key -> key.matches(dottedKey)).findFirst().orElse(null);
  }

  /**
   * What the key {@code dottedKey} (e.g. {@code batching.maxDelayMs}, {@code lanes.enabled}) was before it was renamed
   * or retired, or null when it never was a key.
   */
  public static Former former(String dottedKey) {
    for (ConfigDef section : all()) {
      for (Former former : section.formers) {
        if (patternRegex(section.name(former.localName())).matcher(dottedKey).matches()) {
          return former;
        }
      }
    }
    return null;
  }

  /**
   * The former keys beside {@code knownKeys} (dotted keys as configured, e.g. {@code namespaces.likes.slots}): for
   * every instance of a section a known key lies in, the dotted names its former keys had there.
   */
  static Set<String> formerKeys(Collection<String> knownKeys) {
    Set<String> result = new TreeSet<>();
    for (String known : knownKeys) {
      ConfigKey<?> key = find(known);
      if (key == null) {
        continue;
      }
      String sectionPath = known.substring(0, known.length() - key.localName().length());
      key.section().formers.forEach(former -> result.add(sectionPath + former.localName()));
    }
    return result;
  }

  /** A key name of this section, e.g. {@code batching.maxDelayMs}. */
  private String name(String localName) {
    return pattern.isEmpty() ? localName : pattern + "." + localName;
  }

  /**
   * The configuration tables of docs/configuration.md, one per importance, the high keys first, each with one row per
   * key in the sections' order.
   */
  public static String markdownTable() {
    StringBuilder tables = new StringBuilder();
    for (Importance importance : Importance.values()) {
      tables.append(tables.isEmpty() ? "" : "\n").append("### ").append(TIER_TITLES.get(importance)).append("\n\n")
        .append(TIER_INTROS.get(importance)).append("\n\n")
        .append("| key | default | allowed | meaning |\n|---|---|---|---|\n");
      for (ConfigKey<?> key : allKeys()) {
        if (key.importance() == importance) {
          tables.append("| `").append(key.name()).append("` | ").append(code(key))
            .append(" | ").append(cell(key.allowedText())).append(" | ").append(cell(key.doc())).append(" |\n");
        }
      }
    }
    return tables.toString();
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
  <T> ConfigKey<T> define(String name, Importance importance, ConfigKey.Type<T> type, T defaultValue,
                          ConfigKey.Rule<? super T> rule, String doc) {
    if (defaultValue == null) {
      throw new IllegalArgumentException(name + ": use defineRequired, defineOptional or defineDerived");
    }
    rule.check(name, defaultValue);
    return add(new ConfigKey<>(this, name, importance, type, ConfigKey.DefaultKind.VALUE, defaultValue, null, rule, doc));
  }

  /** A key whose default follows other settings; {@code defaultText} says how, and the reader passes it. */
  <T> ConfigKey<T> defineDerived(String name, Importance importance, ConfigKey.Type<T> type, String defaultText,
                                 ConfigKey.Rule<? super T> rule, String doc) {
    return add(new ConfigKey<>(this, name, importance, type, ConfigKey.DefaultKind.DERIVED, null, defaultText, rule, doc));
  }

  /** A key that must be set. */
  <T> ConfigKey<T> defineRequired(String name, Importance importance, ConfigKey.Type<T> type,
                                  ConfigKey.Rule<? super T> rule, String doc) {
    return add(new ConfigKey<>(this, name, importance, type, ConfigKey.DefaultKind.REQUIRED, null, null, rule, doc));
  }

  /** A key whose absence means "none" (it reads as null). */
  <T> ConfigKey<T> defineOptional(String name, Importance importance, ConfigKey.Type<T> type,
                                  ConfigKey.Rule<? super T> rule, String doc) {
    return add(new ConfigKey<>(this, name, importance, type, ConfigKey.DefaultKind.NONE, null, null, rule, doc));
  }

  /**
   * A key of this section that is no more and has no successor; a file or variable that sets it is refused with
   * {@code why} (what took its place), e.g. {@code "derived from the heap"}.
   */
  void retired(String localName, String why) {
    former(new Former(localName, null, null, why));
  }

  void former(Former former) {
    if (formers.stream().anyMatch(other -> other.localName().equals(former.localName()))
      || keys.stream().anyMatch(key -> key.localName().equals(former.localName()))) {
      throw new IllegalArgumentException(name(former.localName()) + " is defined twice");
    }
    formers.add(former);
  }

  /**
   * A key that was renamed (to {@code current}, a duration where it was a number of {@code unit}s) or retired
   * ({@code why}); either way it is refused with one line that says what to write instead.
   */
  public record Former(String localName, ConfigKey<?> current, ChronoUnit unit, String why) {
    /** The reason {@code key} (as configured, e.g. {@code batching.maxDelayMs}) set to {@code value} is refused. */
    public String refusal(String key, Object value) {
      if (current == null) {
        return "is no longer a key: " + why;
      }
      return "is now " + currentKey(key) + ", a duration such as " + example(value);
    }

    /** The same for the environment variable of {@code key}, e.g. {@code CG_BATCHING_MAX_DELAY_MS}. */
    public String variableRefusal(String key, Object value) {
      if (current == null) {
        return "is no longer a variable (" + key + "): " + why;
      }
      return "is now " + ConfigLoader.envName(currentKey(key)) + " (" + currentKey(key) + "), a duration such as "
        + example(value);
    }

    /** The current key where {@code key} was, e.g. {@code batching.maxDelay} for {@code batching.maxDelayMs}. */
    String currentKey(String key) {
      return key.substring(0, key.length() - localName.length()) + current.localName();
    }

    /** The value given, in the duration form when it is a whole number of the former unit; else the default. */
    private String example(Object value) {
      if (value != null) {
        try {
          long amount = Long.parseLong(value.toString().trim());
          if (amount >= 0) {
            return ConfigKey.durationText(Duration.of(amount, unit));
          }
        } catch (NumberFormatException notANumber) {
          // the default shows the form instead
        }
      }
      return current.defaultText();
    }
  }

  private <T> ConfigKey<T> add(ConfigKey<T> key) {
    if (keys.stream().anyMatch(other -> other.localName().equals(key.localName()))
      || formers.stream().anyMatch(former -> former.localName().equals(key.localName()))) {
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
      HttpOptions.KEYS, ManagementOptions.KEYS, BeaconOptions.KEYS, DatabaseOptions.KEYS, BatchingOptions.KEYS, JournalOptions.KEYS, LimitsOptions.KEYS,
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
