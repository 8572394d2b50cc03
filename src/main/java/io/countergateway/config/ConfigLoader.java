package io.countergateway.config;

import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.Map;

/**
 * Reads a YAML file with vertx-config and lays environment overrides over it.
 *
 * <p>Every key can be overridden by an environment variable named {@code CG_} + its dotted path in upper snake
 * case: {@code batching.maxDelayMs} is {@code CG_BATCHING_MAX_DELAY_MS}, {@code namespaces.pageviews.slots} is
 * {@code CG_NAMESPACES_PAGEVIEWS_SLOTS}. Only keys present in the file (or known defaults) are matched, so a stray
 * variable cannot invent configuration.
 */
public final class ConfigLoader {
  public static final String DEFAULT_PATH = "conf/gateway.yaml";
  public static final String ENV_PREFIX = "CG_";

  /** Keys that have defaults in code and may be absent from a file, yet must still be overridable. */
  private static final String[] WELL_KNOWN_KEYS = {
    "http.host", "http.port", "http.instances", "http.corsOrigins", "http.corsMaxAgeSeconds",
    "beacon.maxBodyBytes", "beacon.botPatterns",
    "database.kind", "database.host", "database.port", "database.name", "database.user", "database.password",
    "database.passwordFile", "database.table", "database.dataDir", "database.readPoolSize", "database.createSchema",
    "batching.maxDelayMs", "batching.maxKeys", "batching.maxInFlight", "batching.maxPendingKeys",
    "batching.maxWaitingRequests", "batching.retryInitialMs", "batching.retryMaxMs", "batching.exactlyOnce", "batching.writeTimeoutMs",
    "batching.flushIdRetentionSeconds", "batching.pruneIntervalSeconds", "auth.tokens", "auth.tokensFile",
    "limits.maxHeaderBytes", "limits.idleTimeoutSeconds",
    "limits.maxBodyBytes", "limits.maxIdLength", "limits.idPattern", "limits.minDelta", "limits.maxDelta",
    "limits.maxBatchIncrements", "limits.requestTimeoutMs", "limits.maxReadIds",
    "reads.instances", "reads.cacheMillis", "shutdown.timeoutMs"
  };

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

  /** Returns a copy of {@code raw} with every matching {@code CG_*} variable laid over it. */
  public static JsonObject applyEnvironment(JsonObject raw, Map<String, String> env) {
    JsonObject merged = raw.copy();
    for (String key : WELL_KNOWN_KEYS) {
      override(merged, key, env);
    }
    JsonObject namespaces = merged.getJsonObject("namespaces");
    if (namespaces != null) {
      for (String name : namespaces.fieldNames()) {
        override(merged, "namespaces." + name + ".slots", env);
        override(merged, "namespaces." + name + ".public", env);
        for (String beaconKey : new String[] {"dropBots", "honorDoNotTrack", "honorGlobalPrivacyControl"}) {
          override(merged, "namespaces." + name + ".beacon." + beaconKey, env);
        }
      }
    }
    return merged;
  }

  public static String envName(String dottedKey) {
    String snake = dottedKey.replaceAll("([a-z0-9])([A-Z])", "$1_$2").replaceAll("[.\\-]", "_");
    return ENV_PREFIX + snake.toUpperCase();
  }

  private static void override(JsonObject root, String dottedKey, Map<String, String> env) {
    String value = env.get(envName(dottedKey));
    if (value == null) {
      return;
    }
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
