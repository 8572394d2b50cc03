package io.countergateway.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Secrets come from the configuration (usually an environment override) or from a file named by a second key
 * ({@code <key>File}), the way Kubernetes mounts secrets; their values are never logged.
 */
final class Secrets {
  private Secrets() {
  }

  /**
   * The secret of {@code value}, or the content of the file {@code file} names. Both are read, so a file holding the
   * value key empty (the shipped configurations, {@code password: ""}) takes the file from the environment; a value
   * and a file both given are refused naming both keys, rather than one silently ignored.
   */
  static String resolve(ConfigSection section, ConfigKey<String> value, ConfigKey<String> file) {
    String path = section.get(file);
    String given = section.get(value);
    if (path == null || path.isBlank()) {
      return given;
    }
    if (given != null && !given.isEmpty()) {
      throw new ConfigException(section.key(file), "set either " + section.key(value) + " or " + section.key(file)
        + ", not both");
    }
    try {
      return Files.readString(Path.of(path)).strip();
    } catch (IOException e) {
      throw new ConfigException(section.key(file), "cannot read secret file " + path + ": " + e.getMessage());
    }
  }
}
