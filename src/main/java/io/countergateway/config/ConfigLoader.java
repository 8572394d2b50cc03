package io.countergateway.config;

import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Reads a YAML file with vertx-config and lays environment overrides over it; the one place that reads
 * environment variables.
 *
 * <p>Every key can be overridden by an environment variable named {@code CG_} + its dotted path in upper snake
 * case: {@code batching.maxDelayMs} is {@code CG_BATCHING_MAX_DELAY_MS}, {@code namespaces.pageviews.slots} is
 * {@code CG_NAMESPACES_PAGEVIEWS_SLOTS} (for the namespaces the file declares). The keys are those the option
 * classes read ({@link ConfigKeys}); a {@code CG_*} variable that names none of them stops start-up, as does an
 * unknown key in the file.
 */
public final class ConfigLoader {
  public static final String DEFAULT_PATH = "conf/gateway.yaml";
  public static final String ENV_PREFIX = "CG_";
  /** Names the configuration file itself rather than a key. */
  public static final String CONFIG_FILE_VARIABLE = "CG_CONFIG";

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
      .map(raw -> GatewayConfig.fromJson(applyEnvironment(raw, System.getenv())));
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
    Map<String, String> keysByVariable = new TreeMap<>();
    knownKeys(raw).forEach(key -> keysByVariable.putIfAbsent(envName(key), key));
    for (String variable : new TreeSet<>(env.keySet())) {
      if (variable.startsWith(ENV_PREFIX) && !variable.equals(CONFIG_FILE_VARIABLE)
        && !keysByVariable.containsKey(variable)) {
        String nearest = ConfigKeys.nearest(variable, keysByVariable.keySet());
        throw new ConfigException(variable, "unknown variable" + (nearest == null ? "" : " (did you mean " + nearest + "?)"));
      }
    }
    JsonObject merged = raw.copy();
    keysByVariable.forEach((variable, key) -> {
      String value = env.get(variable);
      if (value != null) {
        put(merged, key, value);
      }
    });
    return merged;
  }

  /**
   * The keys the options read, asked of the code itself: once with defaults for the namespaces the file declares
   * and once on the file as it is (options read under some settings only are then known too). A bad value here
   * is left for the real read to report, after the environment is applied.
   */
  static Set<String> knownKeys(JsonObject raw) {
    JsonObject skeleton = new JsonObject();
    if (raw.getValue("namespaces") instanceof JsonObject declared) {
      JsonObject namespaces = new JsonObject();
      declared.fieldNames().forEach(name -> namespaces.put(name, new JsonObject()));
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
