package io.countergateway.config;

import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.between;

/**
 * A port of its own for health and metrics, as Envoy's admin listener and Spring Boot's management port: probes and
 * scrapes then reach the gateway on an address that clients of the API do not, so no client's flood of either can
 * touch what the kubelet and Prometheus see, and a NetworkPolicy can keep the port to them.
 */
public final class ManagementOptions {
  static final ConfigDef KEYS = ConfigDef.section("management");
  public static final ConfigKey<Integer> PORT = KEYS.defineOptional("port", MEDIUM, INT, between(1, 65_535),
    "serve `/health/*` and `/metrics` on this port (bound on `http.host`, plain HTTP) and not on `http.port`, which "
      + "answers them 404; it listens before the ingest verticles replay their journals; none = both on `http.port`");

  private final Integer port;

  private ManagementOptions(ConfigSection section) {
    port = section.get(PORT);
  }

  static ManagementOptions from(ConfigSection section) {
    return new ManagementOptions(section);
  }

  /** Whether health and metrics have a port of their own. */
  public boolean isEnabled() {
    return port != null;
  }

  /** The management port; only when {@link #isEnabled()}. */
  public int getPort() {
    return port;
  }
}
