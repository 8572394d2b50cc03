package io.countergateway.config;

import java.util.List;

/** Where the gateway listens and how many server shares it runs. */
public class HttpOptions {
  /** Loopback by default: the gateway is meant to run as a sidecar unless told otherwise. */
  public static final String DEFAULT_HOST = "127.0.0.1";
  public static final int DEFAULT_PORT = 8080;
  /** 0 means one ingest verticle per core. */
  public static final int DEFAULT_INSTANCES = 0;

  private String host = DEFAULT_HOST;
  private int port = DEFAULT_PORT;
  private int instances = DEFAULT_INSTANCES;
  private List<String> corsOrigins = List.of("*");
  /** How long a browser may reuse a beacon preflight; Chromium caps this at 7200. */
  private int corsMaxAgeSeconds = 7200;
  private TrustedProxies trustedProxies = TrustedProxies.NONE;

  static HttpOptions from(ConfigSection section) {
    return new HttpOptions()
      .setHost(section.stringValue("host", DEFAULT_HOST))
      .setPort(section.intValue("port", DEFAULT_PORT))
      .setInstances(section.intValue("instances", DEFAULT_INSTANCES))
      .setCorsOrigins(section.has("corsOrigins") ? section.stringList("corsOrigins") : List.of("*"))
      .setCorsMaxAgeSeconds(section.intValue("corsMaxAgeSeconds", 7200))
      .setTrustedProxies(section.stringList("trustedProxies"));
  }

  public String getHost() {
    return host;
  }

  public HttpOptions setHost(String host) {
    this.host = Checks.notBlank("http.host", host);
    return this;
  }

  public int getPort() {
    return port;
  }

  /** 0 picks a free port (tests, benchmarks). */
  public HttpOptions setPort(int port) {
    this.port = Checks.range("http.port", port, 0, 65535);
    return this;
  }

  public int getInstances() {
    return instances;
  }

  public HttpOptions setInstances(int instances) {
    this.instances = Checks.range("http.instances", instances, 0, 256);
    return this;
  }

  public List<String> getCorsOrigins() {
    return corsOrigins;
  }

  /** Origins allowed to send beacons from a browser; {@code *} allows any. */
  public HttpOptions setCorsOrigins(List<String> corsOrigins) {
    if (corsOrigins.isEmpty()) {
      throw new ConfigException("http.corsOrigins", "must list at least one origin (use '*' for any)");
    }
    this.corsOrigins = List.copyOf(corsOrigins);
    return this;
  }

  public int getCorsMaxAgeSeconds() {
    return corsMaxAgeSeconds;
  }

  public HttpOptions setCorsMaxAgeSeconds(int corsMaxAgeSeconds) {
    this.corsMaxAgeSeconds = Checks.range("http.corsMaxAgeSeconds", corsMaxAgeSeconds, 0, 86_400);
    return this;
  }

  /** Peers whose X-Forwarded-For names the client; empty: the TCP peer is always the client. */
  public TrustedProxies getTrustedProxies() {
    return trustedProxies;
  }

  /** IP addresses or CIDR blocks (IPv4 or IPv6). */
  public HttpOptions setTrustedProxies(List<String> proxies) {
    this.trustedProxies = TrustedProxies.parse("http.trustedProxies", proxies);
    return this;
  }
}
