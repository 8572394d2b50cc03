package io.countergateway.config;

/** How the gateway writes its log: readable lines, or one JSON object per line for log shippers. */
public class LoggingOptions {
  public enum Format { TEXT, JSON }

  private Format format = Format.TEXT;
  private String level = "info";

  static LoggingOptions from(ConfigSection section) {
    LoggingOptions options = new LoggingOptions();
    String format = section.stringValue("format", "text").strip().toLowerCase();
    options.format = switch (format) {
      case "text" -> Format.TEXT;
      case "json" -> Format.JSON;
      default -> throw new ConfigException(section.key("format"), "must be text or json, got '" + format + "'");
    };
    String level = section.stringValue("level", "info").strip().toLowerCase();
    if (!level.matches("trace|debug|info|warn|error")) {
      throw new ConfigException(section.key("level"), "must be one of trace, debug, info, warn, error, got '" + level + "'");
    }
    options.level = level;
    return options;
  }

  public Format getFormat() {
    return format;
  }

  public LoggingOptions setFormat(Format format) {
    this.format = format;
    return this;
  }

  /** The level of the gateway's own loggers ({@code io.countergateway}). */
  public String getLevel() {
    return level;
  }
}
