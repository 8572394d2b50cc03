package io.countergateway.internal.logging;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import org.slf4j.Logger;
import org.slf4j.spi.LoggingEventBuilder;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The start event: what an operator checks first when a gateway misbehaves. Never a secret: the database
 * password and the tokens are not in it, only whether authentication is on.
 */
public final class ConfigSummary {
  private ConfigSummary() {
  }

  public static Map<String, Object> of(GatewayConfig config, int port, int ingestVerticles) {
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("http_host", config.getHttp().getHost());
    summary.put("http_port", port);
    summary.put("http_tls", config.getHttp().getTls().isEnabled());
    summary.put("ingest_verticles", ingestVerticles);
    summary.put("database", config.getDatabase().toString());
    summary.put("max_delay_ms", config.getBatching().getMaxDelayMs());
    summary.put("max_keys", config.getBatching().getMaxKeys());
    summary.put("max_in_flight", config.getBatching().getMaxInFlight());
    summary.put("max_pending_keys", config.getMemoryBounds().maxPendingKeys());
    summary.put("request_timeout_ms", config.getLimits().getRequestTimeoutMs());
    summary.put("read_verticles", config.getReads().getInstances());
    summary.put("read_cache_ms", config.getReads().getCacheMillis());
    summary.put("cluster_tls", config.getCluster().isEnabled() && config.getCluster().getTls().isEnabled());
    summary.put("auth", config.getAuth().isEnabled() ? "tokens" : config.getAuth().isAnonymous() ? "anonymous" : "off");
    summary.put("shutdown_timeout_ms", config.getShutdownTimeoutMs());
    summary.put("namespaces", config.getNamespaces().values().stream().filter(namespace -> !namespace.isCompanion())
      .map(ConfigSummary::describe).collect(Collectors.joining(" ")));
    return summary;
  }

  /**
   * {@code transport}: epoll where Netty's native transport loaded, else nio. A network bind without tokens (asked for
   * with {@code auth.anonymous}) makes it a warning: every route is open to whoever reaches the port.
   */
  /** Binds that listen on every address: the dashboard is opened on this machine's loopback. */
  private static final Set<String> WILDCARDS = Set.of("0.0.0.0", "::", "[::]");

  public static void logStart(Logger log, GatewayConfig config, int port, int ingestVerticles, String transport) {
    boolean open = !config.getAuth().isEnabled() && !config.getHttp().isLoopback();
    LoggingEventBuilder event = (open ? log.atWarn() : log.atInfo()).addKeyValue("event", "start")
      .addKeyValue("transport", transport);
    of(config, port, ingestVerticles).forEach(event::addKeyValue);
    String scheme = config.getHttp().getTls().isEnabled() ? "https" : "http";
    String host = config.getHttp().getHost();
    String dashboard = scheme + "://" + urlHost(WILDCARDS.contains(host) ? "127.0.0.1" : host) + ":" + port + "/ui/";
    event.addKeyValue("dashboard", dashboard);
    event.log(open ? "counter-gateway listening on {}://{}:{} WITHOUT AUTHENTICATION (auth.anonymous: true): anyone "
      + "who reaches this port may write, reset and read counters; dashboard at {}"
      : "counter-gateway listening on {}://{}:{}; dashboard at {}", scheme, urlHost(host), port, dashboard);
  }

  /** An address as a URL holds it: an IPv6 literal in brackets. */
  private static String urlHost(String host) {
    return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
  }

  private static String describe(NamespaceOptions namespace) {
    return namespace.getName() + "(slots=" + namespace.getSlots() + (namespace.isPublic() ? ",public" : "") + ")";
  }
}
