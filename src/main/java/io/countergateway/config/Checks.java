package io.countergateway.config;

/** Validation for options setters; each failure names the configuration key it guards. */
final class Checks {
  private Checks() {
  }

  static int range(String key, int value, int min, int max) {
    if (value < min || value > max) {
      throw new ConfigException(key, "must be between " + min + " and " + max + ", got " + value);
    }
    return value;
  }

  static long range(String key, long value, long min, long max) {
    if (value < min || value > max) {
      throw new ConfigException(key, "must be between " + min + " and " + max + ", got " + value);
    }
    return value;
  }

  static String notBlank(String key, String value) {
    if (value == null || value.isBlank()) {
      throw new ConfigException(key, "must not be empty");
    }
    return value;
  }

  static String identifier(String key, String value) {
    if (value == null || !value.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
      throw new ConfigException(key, "must be a SQL identifier (letters, digits, underscore; at most 63), got '" + value + "'");
    }
    return value;
  }
}
