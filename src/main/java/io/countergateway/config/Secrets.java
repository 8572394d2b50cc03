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

  static String resolve(ConfigSection section, ConfigKey<String> value, ConfigKey<String> file) {
    String path = section.get(file);
    if (path == null || path.isBlank()) {
      return section.get(value);
    }
    try {
      return Files.readString(Path.of(path)).strip();
    } catch (IOException e) {
      throw new ConfigException(section.key(file), "cannot read secret file " + path + ": " + e.getMessage());
    }
  }
}
