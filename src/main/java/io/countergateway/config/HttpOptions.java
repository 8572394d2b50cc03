package io.countergateway.config;

import io.netty.util.NetUtil;

import java.net.InetAddress;
import java.util.List;

import static io.countergateway.config.ConfigKey.BOOLEAN;
import static io.countergateway.config.ConfigKey.INT;
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
  public static final ConfigKey<String> HOST = KEYS.define("host", STRING, "127.0.0.1", notBlank(),
    "where to listen (`0.0.0.0` to serve the network)");
  public static final ConfigKey<Integer> PORT = KEYS.define("port", INT, 8080, between(0, 65_535),
    "the HTTP port; 0 = a free port, the same for every ingest verticle (tests, benchmarks)");
  public static final ConfigKey<Integer> INSTANCES = KEYS.define("instances", INT, 0, between(0, 256),
    "ingest verticles (HTTP server share + event-bus consumer + coalescer); 0 = one per core");
  public static final ConfigKey<List<String>> CORS_ORIGINS = KEYS.define("corsOrigins", LIST, List.of("*"),
    nonEmpty("origin (use '*' for any)"), "origins allowed to send beacons from browsers (each echoed, with credentials)");
  /** Chromium caps a preflight's max age at 7200. */
  public static final ConfigKey<Integer> CORS_MAX_AGE_SECONDS = KEYS.define("corsMaxAgeSeconds", INT, 7200,
    between(0, 86_400), "how long browsers may reuse a beacon preflight");
  public static final ConfigKey<List<String>> TRUSTED_PROXIES = KEYS.define("trustedProxies", LIST, List.of(), any(),
    "IPs or CIDR blocks whose `X-Forwarded-For` names the client (unique visitors); empty: the TCP peer is the client");
  public static final ConfigKey<List<String>> ALLOWED_ORIGINS = KEYS.define("allowedOrigins", LIST, List.of(),
    items("(https?://[^/\\s]+|\\*)", "scheme://host[:port] (or *)"), "origins (`https://app.example.com`) whose pages may send "
      + "increments, batches and resets from a browser; empty = only requests without an `Origin` or from the gateway's "
      + "own origin (403 `origin_not_allowed` otherwise); beacons follow `corsOrigins`");
  public static final ConfigKey<Boolean> H2C = KEYS.define("h2c", BOOLEAN, false, any(),
    "accept HTTP/2 without TLS (prior knowledge or `Upgrade: h2c`); off: HTTP/1.1 only");
  public static final ConfigKey<String> TLS_CERT_FILE = KEYS.defineOptional("tls.certFile", STRING, any(),
    "PEM certificate chain (leaf first) to serve HTTPS with, together with `tls.keyFile`; none = plain HTTP");
  public static final ConfigKey<String> TLS_KEY_FILE = KEYS.defineOptional("tls.keyFile", STRING, any(),
    "the PEM private key (PKCS#8 or PKCS#1) of `tls.certFile`");
  /** A rotated Kubernetes TLS Secret is picked up without a restart. */
  public static final ConfigKey<Integer> TLS_FILE_CHECK_MS = KEYS.define("tls.fileCheckMs", INT, 5_000,
    between(100, 3_600_000), "how often the certificate and key files' modification times are checked; a changed pair "
      + "is served to new connections, one that does not load or match is refused (the old one stays, an error is logged)");

  private final String host;
  private final int port;
  private final int instances;
  private final List<String> corsOrigins;
  private final int corsMaxAgeSeconds;
  private final TrustedProxies trustedProxies;
  private final List<String> allowedOrigins;
  private final boolean h2c;
  private final TlsFiles tls;
  private final int tlsFileCheckMs;

  private HttpOptions(ConfigSection section) {
    host = section.get(HOST);
    port = section.get(PORT);
    instances = section.get(INSTANCES);
    corsOrigins = section.get(CORS_ORIGINS);
    corsMaxAgeSeconds = section.get(CORS_MAX_AGE_SECONDS);
    trustedProxies = TrustedProxies.parse(section.key(TRUSTED_PROXIES), section.get(TRUSTED_PROXIES));
    allowedOrigins = section.get(ALLOWED_ORIGINS);
    h2c = section.get(H2C);
    tls = TlsFiles.pair(section, TLS_CERT_FILE, TLS_KEY_FILE);
    tlsFileCheckMs = section.get(TLS_FILE_CHECK_MS);
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
