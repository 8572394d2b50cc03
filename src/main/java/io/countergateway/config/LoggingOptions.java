package io.countergateway.config;

import io.vertx.core.json.JsonObject;

import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.choice;

/** How the gateway writes its log: readable lines, or one JSON object per line for log shippers. */
public final class LoggingOptions {
  public enum Format { TEXT, JSON }

  static final ConfigDef KEYS = ConfigDef.section("logging");
  public static final ConfigKey<String> FORMAT = KEYS.define("format", MEDIUM, choice("text", "json"), "text", any(),
    "`json`: one JSON object per line for log shippers");
  public static final ConfigKey<String> LEVEL = KEYS.define("level", MEDIUM, choice("trace", "debug", "info", "warn", "error"),
    "info", any(), "level of the gateway's own loggers (`io.countergateway`)");

  private final Format format;
  private final String level;

  private LoggingOptions(ConfigSection section) {
    format = section.get(FORMAT).equals("json") ? Format.JSON : Format.TEXT;
    level = section.get(LEVEL);
  }

  static LoggingOptions from(ConfigSection section) {
    return new LoggingOptions(section);
  }

  /** Options from a mapping as the file's {@code logging} section would hold it; empty for the defaults. */
  public static LoggingOptions fromJson(JsonObject json) {
    return ConfigSection.read(json, KEYS.pattern(), LoggingOptions::from);
  }

  public Format getFormat() {
    return format;
  }

  /** The level of the gateway's own loggers ({@code io.countergateway}). */
  public String getLevel() {
    return level;
  }
}
