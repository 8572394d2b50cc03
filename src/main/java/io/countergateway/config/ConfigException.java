package io.countergateway.config;

/** A configuration value that stops start-up; the message always names the offending key. */
public class ConfigException extends RuntimeException {
  public ConfigException(String key, String rule) {
    super(key + ": " + rule);
  }
}
