package io.countergateway.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

import io.netty.util.NetUtil;

import java.net.InetAddress;
import java.util.List;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.DURATION;
import static io.countergateway.config.ConfigKey.INT;
import static io.countergateway.config.ConfigKey.Importance.HIGH;
import static io.countergateway.config.ConfigKey.Importance.LOW;
import static io.countergateway.config.ConfigKey.Importance.MEDIUM;
import static io.countergateway.config.ConfigKey.LIST;
import static io.countergateway.config.ConfigKey.STRING;
import static io.countergateway.config.ConfigKey.any;
import static io.countergateway.config.ConfigKey.between;
import static io.countergateway.config.ConfigKey.items;
import static io.countergateway.config.ConfigKey.nonEmpty;
import static io.countergateway.config.ConfigKey.notBlank;

/** Where the gateway listens and how many server shares it runs. */
public final class HttpOptions {
  static final ConfigDef KEYS = ConfigDef.section("http");
  /** Loopback by default: the gateway is meant to run as a sidecar unless told otherwise. */
  public static final ConfigKey<String> HOST = KEYS.define("host", HIGH, STRING, "127.0.0.1", notBlank(),
    "where to listen (`0.0.0.0` to serve the network)");
  public static final ConfigKey<Integer> PORT = KEYS.define("port", HIGH, INT, 8080, between(0, 65_535),
    "the HTTP port; 0 = a free port, the same for every ingest verticle (tests, benchmarks)");
  public static final ConfigKey<Integer> INSTANCES = KEYS.define("instances", MEDIUM, INT, 0, between(0, 256),
    "ingest verticles (HTTP server share + event-bus consumer + coalescer); 0 = one per core");
  public static final ConfigKey<List<String>> CORS_ORIGINS = KEYS.define("corsOrigins", MEDIUM, LIST, List.of("*"),
    nonEmpty("origin (use '*' for any)"), "origins allowed to send beacons from browsers (each echoed, with credentials)");
  /** Chromium caps a preflight's max age at 2 hours; the header carries whole seconds. */
  public static final ConfigKey<Duration> CORS_MAX_AGE = KEYS.define("corsMaxAge", LOW, DURATION, Duration.ofHours(2),
    between(Duration.ZERO, Duration.ofDays(1)), "how long browsers may reuse a beacon preflight")
    .formerly("corsMaxAgeSeconds", ChronoUnit.SECONDS);
  public static final ConfigKey<List<String>> TRUSTED_PROXIES = KEYS.define("trustedProxies", MEDIUM, LIST, List.of(), any(),
    "IPs or CIDR blocks whose `X-Forwarded-For` names the client (unique visitors); empty: the TCP peer is the client");
  public static final ConfigKey<List<String>> ALLOWED_ORIGINS = KEYS.define("allowedOrigins", MEDIUM, LIST, List.of(),
    items("(https?://[^/\\s]+|\\*)", "scheme://host[:port] (or *)"), "origins (`https://app.example.com`) whose pages may send "
      + "increments, batches and resets from a browser; empty = only requests without an `Origin` or from the gateway's "
      + "own origin (403 `origin_not_allowed` otherwise); beacons follow `corsOrigins`");
  /** Against DNS rebinding (http/AllowedHosts): a page of another site reaching the gateway under its own name. */
  public static final ConfigKey<List<String>> ALLOWED_HOSTS = KEYS.define("allowedHosts", MEDIUM, LIST, List.of(),
    items("(\\*|\\.?[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.?)", "a host name, .domain for it and its subdomains, or *"),
    "names the `Host` header may carry (`counter.example.com`; `.example.com` for it and its subdomains; `*` for any); "
      + "IP addresses and `localhost` always pass; empty = names are checked only without tokens, and `host` passes; "
      + "421 `misdirected_request` otherwise (DNS rebinding)");
  public static final ConfigKey<Boolean> H2C = KEYS.define("h2c", MEDIUM, BOOLEAN, false, any(),
    "accept HTTP/2 without TLS (prior knowledge or `Upgrade: h2c`); off: HTTP/1.1 only");
  public static final ConfigKey<String> TLS_CERT_FILE = KEYS.defineOptional("tls.certFile", MEDIUM, STRING, any(),
    "PEM certificate chain (leaf first) to serve HTTPS with, together with `tls.keyFile`; none = plain HTTP");
  public static final ConfigKey<String> TLS_KEY_FILE = KEYS.defineOptional("tls.keyFile", MEDIUM, STRING, any(),
    "the PEM private key (PKCS#8 or PKCS#1) of `tls.certFile`");
  /** A rotated Kubernetes TLS Secret is picked up without a restart. */
  public static final ConfigKey<Duration> TLS_FILE_CHECK_INTERVAL = KEYS.define("tls.fileCheckInterval", LOW, DURATION,
    Duration.ofSeconds(5), between(Duration.ofMillis(100), Duration.ofHours(1)), "how often the certificate and key files' modification times are checked; a changed pair "
      + "is served to new connections, one that does not load or match is refused (the old one stays, an error is logged)")
    .formerly("tls.fileCheckMs", ChronoUnit.MILLIS);

  private final String host;
  private final int port;
  private final int instances;
  private final List<String> corsOrigins;
  private final int corsMaxAgeSeconds;
  private final TrustedProxies trustedProxies;
  private final List<String> allowedOrigins;
  private final List<String> allowedHosts;
  private final boolean h2c;
  private final TlsFiles tls;
  private final int tlsFileCheckMs;

  private HttpOptions(ConfigSection section) {
    host = section.get(HOST);
    port = section.get(PORT);
    instances = section.get(INSTANCES);
    corsOrigins = section.get(CORS_ORIGINS);
    corsMaxAgeSeconds = (int) section.get(CORS_MAX_AGE).toSeconds();
    trustedProxies = TrustedProxies.parse(section.key(TRUSTED_PROXIES), section.get(TRUSTED_PROXIES));
    allowedOrigins = section.get(ALLOWED_ORIGINS);
    allowedHosts = section.get(ALLOWED_HOSTS);
    h2c = section.get(H2C);
    tls = TlsFiles.pair(section, TLS_CERT_FILE, TLS_KEY_FILE);
    tlsFileCheckMs = (int) section.get(TLS_FILE_CHECK_INTERVAL).toMillis();
  }

  static HttpOptions from(ConfigSection section) {
    return new HttpOptions(section);
  }

  public String getHost() {
    return host;
  }

  /**
   * Whether only this machine can reach the port: {@code localhost} or a loopback address literal. Any other name is
   * taken as reachable from the network (it is not resolved here, and fails closed).
   */
  public boolean isLoopback() {
    return isLoopback(host);
  }

  /** Whether {@code host} is {@code localhost} or a loopback address literal; any other name fails closed. */
  static boolean isLoopback(String host) {
    if (host.equalsIgnoreCase("localhost")) {
      return true;
    }
    InetAddress literal = NetUtil.createInetAddressFromIpAddressString(host);
    return literal != null && literal.isLoopbackAddress();
  }

  /** Origins whose pages may send to the JSON write routes, besides the gateway's own; {@code *} allows any. */
  public List<String> getAllowedOrigins() {
    return allowedOrigins;
  }

  /** Names the Host header may carry besides IP addresses and localhost; empty: checked only without tokens. */
  public List<String> getAllowedHosts() {
    return allowedHosts;
  }

  /** Whether HTTP/2 without TLS is served. */
  public boolean isH2c() {
    return h2c;
  }

  /** The HTTPS certificate and key files; {@link TlsFiles#isEnabled()} false: plain HTTP. */
  public TlsFiles getTls() {
    return tls;
  }

  /** How often the TLS files are checked for a new certificate. */
  public int getTlsFileCheckMs() {
    return tlsFileCheckMs;
  }

  /** The configured port; 0 picks a free one (the bound port is then the gateway's {@code port()}). */
  public int getPort() {
    return port;
  }

  /**
   * The port to hand to Vert.x. Every ingest verticle creates a server on the same host and port and Vert.x shares
   * one listener among them; with port 0 each server would get a random port of its own, so a free port is asked
   * for as -1: a negative port shares one random port among the servers that name it.
   */
  public int listenPort() {
    return port == 0 ? -1 : port;
  }

  public int getInstances() {
    return instances;
  }

  /** Origins allowed to send beacons from a browser; {@code *} allows any. */
  public List<String> getCorsOrigins() {
    return corsOrigins;
  }

  public int getCorsMaxAgeSeconds() {
    return corsMaxAgeSeconds;
  }

  /** Peers whose X-Forwarded-For names the client; empty: the TCP peer is always the client. */
  public TrustedProxies getTrustedProxies() {
    return trustedProxies;
  }
}
