package io.countergateway.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Secrets come from the configuration (usually an environment override) or from a file named by
 * {@code <key>File}, the way Kubernetes mounts secrets; their values are never logged.
 */
final class Secrets {
  private Secrets() {
  }

  static String resolve(ConfigSection section, String name) {
    String file = section.stringValue(name + "File", null);
    if (file == null || file.isBlank()) {
      return section.stringValue(name, "");
    }
    try {
      return Files.readString(Path.of(file)).strip();
    } catch (IOException e) {
      throw new ConfigException(section.key(name + "File"), "cannot read secret file " + file + ": " + e.getMessage());
    }
  }
}
