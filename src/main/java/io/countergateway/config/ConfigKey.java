package io.countergateway.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;

/**
 * One configuration key, declared once with {@link ConfigDef#define}: its dotted name, type, default, the values it
 * allows and a one-line doc. The reading code ({@link ConfigSection#get}), the docs' table and the check of the
 * shipped YAML files all take these from here, so a key's name and rule are never typed twice.
 *
 * <p>Names of per-entry keys carry a placeholder: {@code namespaces.<name>.slots}, {@code rollups[].table}.
 */
public final class ConfigKey<T> {
  /**
   * Who sets a key (Kafka's names): the docs list the keys by it, and the default file shows the high ones. {@link #HIGH}:
   * what a user of the gateway sets (where it listens, its database, its namespaces, its tokens, its journal's
   * directory); {@link #MEDIUM}: what a user sets to turn something on or to change a policy (TLS, a cluster, roll-ups,
   * a window's retention); {@link #LOW}: tuning, whose default nobody should need to change.
   */
  public enum Importance {
    HIGH, MEDIUM, LOW
  }

  /** What a key's default is; only {@link #VALUE} has one the definition can state as a value. */
  public enum DefaultKind {
    /** A fixed default. */
    VALUE,
    /** Follows other settings (e.g. {@code database.port} by kind); the reading code supplies it, the doc says how. */
    DERIVED,
    /** No default: the key must be set. */
    REQUIRED,
    /** Optional, and unset means "none" (e.g. a secret file). */
    NONE
  }

  private final ConfigDef section;
  private final String localName;
  private final Importance importance;
  private final Type<T> type;
  private final DefaultKind defaultKind;
  private final T defaultValue;
  private final String defaultText;
  private final Rule<? super T> rule;
  private final String doc;

  ConfigKey(ConfigDef section, String localName, Importance importance, Type<T> type, DefaultKind defaultKind,
            T defaultValue, String defaultText, Rule<? super T> rule, String doc) {
    if (doc == null || doc.isBlank() || doc.contains("\n")) {
      throw new IllegalArgumentException(localName + ": a key's doc is one line");
    }
    this.section = section;
    this.localName = localName;
    this.importance = importance;
    this.type = type;
    this.defaultKind = defaultKind;
    this.defaultValue = defaultValue;
    this.defaultText = defaultText;
    this.rule = rule;
    this.doc = doc;
  }

  /** The dotted name, with placeholders for per-entry keys, e.g. {@code namespaces.<name>.slots}. */
  public String name() {
    return section.pattern().isEmpty() ? localName : section.pattern() + "." + localName;
  }

  /** The name below its section, e.g. {@code slots} or {@code beacon.dropBots}. */
  public String localName() {
    return localName;
  }

  public ConfigDef section() {
    return section;
  }

  /** Who sets this key: a user of the gateway (high), one who turns something on (medium), or nobody (low). */
  public Importance importance() {
    return importance;
  }

  public Type<T> type() {
    return type;
  }

  public DefaultKind defaultKind() {
    return defaultKind;
  }

  /** The default of a {@link DefaultKind#VALUE} key; null for the others. */
  public T defaultValue() {
    return defaultValue;
  }

  /** The default as the docs and the default YAML file state it. */
  public String defaultText() {
    return switch (defaultKind) {
      case VALUE -> type.render(defaultValue);
      case DERIVED -> defaultText;
      case REQUIRED -> "required";
      case NONE -> "none";
    };
  }

  /** The allowed values, for the docs: the type's own (choices) and the rule's. */
  public String allowedText() {
    return List.of(type.allowed(), rule.describe()).stream().filter(text -> !text.isEmpty())
      .collect(Collectors.joining("; "));
  }

  public String doc() {
    return doc;
  }

  /** Whether this is a key of every entry of a list or a free-form mapping ({@code <name>}, {@code []}). */
  public boolean perEntry() {
    return name().contains("<name>") || name().contains("[]");
  }

  /** Whether {@code dottedKey} (e.g. {@code namespaces.likes.slots}, {@code rollups[0].table}) is this key. */
  public boolean matches(String dottedKey) {
    return ConfigDef.patternRegex(name()).matcher(dottedKey).matches();
  }

  /**
   * A raw value (from YAML, or an environment variable's text) as a checked value of this key.
   *
   * @param key the key as configured, for the message, e.g. {@code namespaces.likes.slots}
   * @throws ConfigException naming {@code key} when the value has the wrong form or breaks the rule
   */
  public T parse(String key, Object raw) {
    T value = type.parse(key, raw);
    rule.check(key, value);
    return value;
  }

  /**
   * Refuses this duration key's former name ({@code maxDelayMs}, a number of {@code unit}s) with one line that names
   * this key and the duration to write instead, rather than as an unknown key. Returns this key.
   */
  ConfigKey<T> formerly(String formerLocalName, ChronoUnit unit) {
    section.former(new ConfigDef.Former(formerLocalName, this, unit, null));
    return this;
  }

  @Override
  public String toString() {
    return name();
  }

  /**
   * How a raw value becomes a typed one ({@code parser} names the key in its failures), how a value is written in the
   * docs, and the values the type itself allows (for the docs; empty when any value of the type will do).
   */
  public record Type<T>(BiFunction<String, Object, T> parser, Function<T, String> renderer, String allowed) {
    public T parse(String key, Object raw) {
      return parser.apply(key, raw);
    }

    public String render(T value) {
      return renderer.apply(value);
    }
  }

  /** A check of a typed value, whose failure names the key, and what it allows, for the docs. */
  public record Rule<T>(String describe, BiConsumer<String, T> checker) {
    public void check(String key, T value) {
      checker.accept(key, value);
    }
  }

  public static final Type<Integer> INT = new Type<>((key, raw) -> {
    long value = wholeNumber(key, raw);
    if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
      throw new ConfigException(key, "must be between " + Integer.MIN_VALUE + " and " + Integer.MAX_VALUE + ", got " + value);
    }
    return (int) value;
  }, String::valueOf, "");

  public static final Type<Long> LONG = new Type<>(ConfigKey::wholeNumber, String::valueOf, "");

  public static final Type<Boolean> BOOLEAN = new Type<>((key, raw) -> {
    if (raw instanceof Boolean b) {
      return b;
    }
    String text = raw.toString().trim().toLowerCase(Locale.ROOT);
    if (text.equals("true") || text.equals("false")) {
      return Boolean.parseBoolean(text);
    }
    throw new ConfigException(key, "must be true or false, got '" + raw + "'");
  }, String::valueOf, "");

  public static final Type<String> STRING = new Type<>((key, raw) -> {
    if (raw instanceof JsonObject || raw instanceof JsonArray || raw instanceof Map || raw instanceof List) {
      throw new ConfigException(key, "must be a single value");
    }
    return raw.toString();
  }, value -> value.isEmpty() ? "\"\"" : value, "");

  /** A list, given either as a YAML sequence or as a comma-separated string (the form environment variables allow). */
  public static final Type<List<String>> LIST = new Type<>((key, raw) -> {
    List<String> result = new ArrayList<>();
    if (raw instanceof JsonArray || raw instanceof List) {
      (raw instanceof JsonArray array ? array.getList() : (List<?>) raw).forEach(item -> result.add(String.valueOf(item).trim()));
    } else if (raw instanceof JsonObject || raw instanceof Map) {
      throw new ConfigException(key, "must be a list");
    } else {
      for (String part : raw.toString().split(",")) {
        if (!part.isBlank()) {
          result.add(part.trim());
        }
      }
    }
    return List.copyOf(result);
  }, value -> value.stream().map(item -> "\"" + item + "\"").collect(Collectors.joining(", ", "[", "]")), "");

  /** A list of mappings ({@code rollups}); its items are read as sections, so only its form is checked here. */
  public static final Type<List<Object>> MAPPINGS = new Type<>((key, raw) -> {
    if (raw instanceof JsonArray || raw instanceof List) {
      return new ArrayList<>(raw instanceof JsonArray array ? array.getList() : (List<?>) raw);
    }
    throw new ConfigException(key, "must be a list of mappings");
  }, value -> value.isEmpty() ? "[]" : value.toString(), "list of mappings");

  private static final Pattern DURATION_TEXT = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");
  /** How a duration is written, for the messages of a wrong one. */
  static final String DURATION_FORM = "a whole number followed by ms, s, m, h or d";

  /**
   * Every span of time, one way: {@code 5ms}, {@code 90s}, {@code 5m}, {@code 24h}, {@code 30d} ({@code 0} alone is
   * zero); the key is named for what the span is ({@code batching.maxDelay}), never for its unit.
   */
  public static final Type<Duration> DURATION = new Type<>((key, raw) -> {
    String text = raw.toString().trim();
    if (text.equals("0")) {
      return Duration.ZERO;
    }
    Matcher matcher = DURATION_TEXT.matcher(text);
    if (!matcher.matches()) {
      throw new ConfigException(key, "must be a duration, " + DURATION_FORM + " (e.g. 30s), got '" + text + "'");
    }
    long amount = Long.parseLong(matcher.group(1));
    return switch (matcher.group(2)) {
      case "ms" -> Duration.ofMillis(amount);
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      case "h" -> Duration.ofHours(amount);
      default -> Duration.ofDays(amount);
    };
  }, ConfigKey::durationText, "duration (ms, s, m, h, d)");

  /**
   * One of a few words, case-insensitive; the value is the canonical (listed) spelling. {@code aliases} maps other
   * accepted spellings to a canonical one (e.g. {@code mariadb} to {@code mysql}).
   */
  public static Type<String> choice(List<String> values, Map<String, String> aliases) {
    Map<String, String> accepted = new LinkedHashMap<>();
    values.forEach(value -> accepted.put(value, value));
    accepted.putAll(aliases);
    String list = values.size() == 2 ? values.get(0) + " or " + values.get(1) : "one of " + String.join(", ", values);
    return new Type<>((key, raw) -> {
      String value = accepted.get(STRING.parse(key, raw).trim().toLowerCase(Locale.ROOT));
      if (value == null) {
        throw new ConfigException(key, "must be " + list + ", got '" + raw + "'");
      }
      return value;
    }, value -> value, String.join(", ", values));
  }

  public static Type<String> choice(String... values) {
    return choice(List.of(values), Map.of());
  }

  /** No rule beyond the type. */
  public static <T> Rule<T> any() {
    return new Rule<>("", (key, value) -> {
    });
  }

  /** Whole numbers from {@code min} to {@code max}, both included. */
  public static Rule<Number> between(long min, long max) {
    return new Rule<>(min + " – " + max, (key, value) -> {
      if (value.longValue() < min || value.longValue() > max) {
        throw new ConfigException(key, "must be between " + min + " and " + max + ", got " + value);
      }
    });
  }

  public static Rule<String> notBlank() {
    return new Rule<>("not empty", (key, value) -> {
      if (value.isBlank()) {
        throw new ConfigException(key, "must not be empty");
      }
    });
  }

  /** A table or column name, safe to put into SQL as it is. */
  public static Rule<String> identifier() {
    return new Rule<>("SQL identifier", (key, value) -> {
      if (!value.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
        throw new ConfigException(key, "must be a SQL identifier (letters, digits, underscore; at most 63), got '"
          + value + "'");
      }
    });
  }

  public static Rule<String> regex() {
    return new Rule<>("regular expression", (key, value) -> {
      notBlank().check(key, value);
      try {
        Pattern.compile(value);
      } catch (PatternSyntaxException e) {
        throw new ConfigException(key, "is not a valid regular expression: " + e.getDescription());
      }
    });
  }

  /** Every item a (case-insensitive) regular expression. */
  public static Rule<List<String>> regexes() {
    return new Rule<>("regular expressions", (key, value) -> {
      for (String item : value) {
        try {
          Pattern.compile(item, Pattern.CASE_INSENSITIVE);
        } catch (PatternSyntaxException e) {
          throw new ConfigException(key, "'" + item + "' is not a regular expression: " + e.getDescription());
        }
      }
    });
  }

  /** A list with at least one item; {@code hint} says what to write instead of nothing. */
  public static Rule<List<String>> nonEmpty(String hint) {
    return new Rule<>("at least one", (key, value) -> {
      if (value.isEmpty()) {
        throw new ConfigException(key, "must list at least one " + hint);
      }
    });
  }

  /** Every item matches {@code pattern}; {@code form} names the expected form in the message and the docs. */
  public static Rule<List<String>> items(String pattern, String form) {
    Pattern compiled = Pattern.compile(pattern);
    return new Rule<>(form, (key, value) -> {
      for (String item : value) {
        if (!compiled.matcher(item).matches()) {
          throw new ConfigException(key, "must be " + form + " entries, got '" + item + "'");
        }
      }
    });
  }

  /** Durations up to {@code max}. */
  public static Rule<Duration> atMost(Duration max) {
    return new Rule<>("at most " + durationText(max), (key, value) -> {
      if (value.compareTo(max) > 0) {
        throw new ConfigException(key, "must be at most " + durationText(max) + ", got " + durationText(value));
      }
    });
  }

  /** Durations from {@code min} to {@code max}, both included. */
  public static Rule<Duration> between(Duration min, Duration max) {
    return new Rule<>(durationText(min) + " – " + durationText(max), (key, value) -> {
      if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
        throw new ConfigException(key, "must be between " + durationText(min) + " and " + durationText(max) + ", got "
          + durationText(value));
      }
    });
  }

  /** A duration as the configuration writes it, in its largest whole unit: {@code 30d}, {@code 5m}, {@code 90s}, {@code 5ms}. */
  static String durationText(Duration value) {
    long millis = value.toMillis();
    if (millis == 0) {
      return "0s";
    }
    if (millis % 1000 != 0) {
      return millis + "ms";
    }
    long seconds = millis / 1000;
    if (seconds % 86_400 == 0) {
      return seconds / 86_400 + "d";
    }
    if (seconds % 3_600 == 0) {
      return seconds / 3_600 + "h";
    }
    return seconds % 60 == 0 ? seconds / 60 + "m" : seconds + "s";
  }

  private static long wholeNumber(String key, Object raw) {
    if (raw instanceof Number number) {
      if (number.doubleValue() != Math.rint(number.doubleValue())) {
        throw new ConfigException(key, "must be a whole number, got " + raw);
      }
      return number.longValue();
    }
    try {
      return Long.parseLong(raw.toString().trim());
    } catch (NumberFormatException e) {
      throw new ConfigException(key, "must be a whole number, got '" + raw + "'");
    }
  }
}
