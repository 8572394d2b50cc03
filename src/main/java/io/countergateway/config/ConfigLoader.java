package io.countergateway.config;

import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.apache.commons.text.similarity.LevenshteinDistance;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Reads a YAML file with vertx-config and lays environment overrides over it; the one place that reads
 * environment variables.
 *
 * <p>Every key can be overridden by an environment variable named {@code CG_} + its dotted path in upper snake
 * case: {@code batching.maxDelay} is {@code CG_BATCHING_MAX_DELAY}, {@code namespaces.pageviews.slots} is
 * {@code CG_NAMESPACES_PAGEVIEWS_SLOTS}, for the namespaces the file declares and those {@code CG_NAMESPACES}
 * (a comma-separated list of names) declares besides, with their keys' defaults: a container needs no file of its
 * own to count a namespace of its own. The keys are those the option classes read ({@link ConfigKeys}); a
 * {@code CG_*} variable that names none of them stops start-up, as does an unknown key in the file; one that names a
 * key of a namespace nobody declared says where namespaces are declared.
 */
public final class ConfigLoader {
  public static final String DEFAULT_PATH = "conf/gateway.yaml";
  public static final String ENV_PREFIX = "CG_";
  /** Names the configuration file itself rather than a key. */
  public static final String CONFIG_FILE_VARIABLE = "CG_CONFIG";
  /** Declares namespaces besides the file's: a comma-separated list of names, each with its keys' defaults. */
  public static final String NAMESPACES_VARIABLE = "CG_NAMESPACES";

  private ConfigLoader() {
  }

  public static Future<GatewayConfig> load(Vertx vertx, String path) {
    ConfigStoreOptions file = new ConfigStoreOptions()
      .setType("file").setFormat("yaml")
      .setConfig(new JsonObject().put("path", path));
    ConfigRetriever retriever = ConfigRetriever.create(vertx, new ConfigRetrieverOptions().addStore(file));
    return retriever.getConfig()
      .eventually(() -> {
        retriever.close();
        return Future.succeededFuture();
      })
      .map(raw -> GatewayConfig.fromJson(applyEnvironment(raw, System.getenv(), path)));
  }

  /**
   * The logging options the environment sets ({@code CG_LOGGING_FORMAT}, {@code CG_LOGGING_LEVEL}), for a start whose
   * file could not be read; a value that is not valid leaves the default.
   */
  public static LoggingOptions loggingFromEnvironment() {
    JsonObject logging = new JsonObject();
    for (ConfigKey<String> key : List.of(LoggingOptions.FORMAT, LoggingOptions.LEVEL)) {
      String value = System.getenv(envName(key.name()));
      if (value != null) {
        logging.put(key.localName(), value);
      }
    }
    try {
      return LoggingOptions.fromJson(logging);
    } catch (ConfigException badValue) {
      return LoggingOptions.fromJson(new JsonObject());
    }
  }

  /**
   * Returns a copy of {@code raw} with every {@code CG_*} variable laid over it.
   *
   * @throws ConfigException for a {@code CG_*} variable that names no configuration key
   */
  public static JsonObject applyEnvironment(JsonObject raw, Map<String, String> env) {
    return applyEnvironment(raw, env, "the configuration file");
  }

  /** The same; {@code file} names where {@code raw} came from, for the line that says where namespaces are declared. */
  public static JsonObject applyEnvironment(JsonObject raw, Map<String, String> env, String file) {
    JsonObject declared = declareNamespaces(raw, env.get(NAMESPACES_VARIABLE));
    Map<String, String> keysByVariable = new TreeMap<>();
    knownKeys(declared).forEach(key -> keysByVariable.putIfAbsent(envName(key), key));
    Map<String, String> formerByVariable = new TreeMap<>();
    ConfigDef.formerKeys(keysByVariable.values()).forEach(key -> formerByVariable.putIfAbsent(envName(key), key));
    for (String variable : new TreeSet<>(env.keySet())) {
      if (variable.startsWith(ENV_PREFIX) && !variable.equals(CONFIG_FILE_VARIABLE)
        && !variable.equals(NAMESPACES_VARIABLE) && !keysByVariable.containsKey(variable)) {
        String former = formerByVariable.get(variable);
        if (former != null) {
          throw new ConfigException(variable, ConfigDef.former(former).variableRefusal(former, env.get(variable)));
        }
        String nearest = ConfigKeys.nearest(variable, keysByVariable.keySet());
        String suggestion = nearest == null ? "" : " (did you mean " + nearest + "?)";
        String namespace = undeclaredNamespace(variable, declared);
        if (namespace != null) {
          // another namespace's variable is no answer, unless the name is only mistyped
          boolean typo = nearest != null && LevenshteinDistance.getDefaultInstance().apply(variable, nearest) <= 2;
          throw new ConfigException(variable, "names a key of namespace " + namespace + ", which is not declared: "
            + "declare it under namespaces: in " + file + ", or in " + NAMESPACES_VARIABLE + " (" + NAMESPACES_VARIABLE
            + "=" + namespace + ")" + (typo ? suggestion : ""));
        }
        throw new ConfigException(variable, "unknown variable" + suggestion);
      }
    }
    JsonObject merged = declared.copy();
    keysByVariable.forEach((variable, key) -> {
      String value = env.get(variable);
      if (value != null) {
        put(merged, key, value);
      }
    });
    return merged;
  }

  /**
   * {@code raw} with the namespaces {@code list} ({@code CG_NAMESPACES}) names declared too, each with its keys'
   * defaults; a name the file declares already is left as it is.
   */
  private static JsonObject declareNamespaces(JsonObject raw, String list) {
    if (list == null || list.isBlank()) {
      return raw;
    }
    JsonObject declared = raw.copy();
    if (!(declared.getValue("namespaces") instanceof JsonObject)) {
      declared.put("namespaces", new JsonObject());
    }
    JsonObject namespaces = declared.getJsonObject("namespaces");
    for (String part : list.split(",")) {
      String name = part.strip();
      if (name.isEmpty()) {
        continue;
      }
      if (!NamespaceOptions.isValidName(name)) {
        throw new ConfigException(NAMESPACES_VARIABLE, "'" + name + "' is not a namespace name: "
          + NamespaceOptions.NAME_RULE);
      }
      if (!(namespaces.getValue(name) instanceof JsonObject)) {
        namespaces.put(name, new JsonObject());
      }
    }
    return declared;
  }

  /**
   * The namespace an unknown {@code variable} names a key of ({@code visits} for {@code CG_NAMESPACES_VISITS_SLOTS}),
   * when that namespace is not declared; null when the variable ends in no namespace key, or its namespace is declared
   * (the key is then mistyped).
   */
  private static String undeclaredNamespace(String variable, JsonObject declared) {
    String prefix = envName("namespaces") + "_";
    if (!variable.startsWith(prefix)) {
      return null;
    }
    String rest = variable.substring(prefix.length());
    for (ConfigKey<?> key : ConfigDef.allKeys()) {
      if (!key.name().startsWith("namespaces.<name>.")) {
        continue;
      }
      String suffix = "_" + envName(key.name().substring("namespaces.<name>.".length())).substring(ENV_PREFIX.length());
      if (rest.endsWith(suffix) && rest.length() > suffix.length()) {
        String name = rest.substring(0, rest.length() - suffix.length()).toLowerCase(Locale.ROOT);
        boolean isDeclared = declared.getValue("namespaces") instanceof JsonObject namespaces
          && namespaces.fieldNames().stream().anyMatch(other -> envName(other).equals(ENV_PREFIX + name.toUpperCase(Locale.ROOT)));
        return isDeclared ? null : name;
      }
    }
    return null;
  }

  /**
   * The keys the options read, asked of the code itself: once with defaults for the namespaces the file declares
   * (each windowed) and once on the file as it is (options read under some settings only are then known too). A bad value here
   * is left for the real read to report, after the environment is applied.
   */
  static Set<String> knownKeys(JsonObject raw) {
    JsonObject skeleton = new JsonObject();
    if (raw.getValue("namespaces") instanceof JsonObject declared) {
      // with a window, so that a variable may make a namespace windowed (CG_NAMESPACES_VISITS_WINDOW_BUCKET=day)
      JsonObject namespaces = new JsonObject();
      declared.fieldNames().forEach(name -> namespaces.put(name, new JsonObject()
        .put("window", new JsonObject().put(WindowOptions.BUCKET.localName(), "day"))));
      skeleton.put("namespaces", namespaces);
    }
    Set<String> keys = new TreeSet<>();
    for (JsonObject tree : List.of(skeleton, raw)) {
      ConfigSection root = new ConfigSection(tree, "");
      try {
        GatewayConfig.read(root);
      } catch (ConfigException reportedLater) {
        // the keys asked for before the bad value are recorded all the same
      }
      keys.addAll(root.keys().values());
    }
    return keys;
  }

  public static String envName(String dottedKey) {
    String snake = dottedKey.replaceAll("([a-z0-9])([A-Z])", "$1_$2").replaceAll("[.\\-]", "_");
    return ENV_PREFIX + snake.toUpperCase();
  }

  /** Sets the value at a dotted key, creating the sections on its way. */
  static void put(JsonObject root, String dottedKey, String value) {
    String[] path = dottedKey.split("\\.");
    JsonObject node = root;
    for (int i = 0; i < path.length - 1; i++) {
      Object child = node.getValue(path[i]);
      if (!(child instanceof JsonObject)) {
        child = new JsonObject();
        node.put(path[i], child);
      }
      node = (JsonObject) child;
    }
    node.put(path[path.length - 1], value);
  }
}
