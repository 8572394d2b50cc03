package io.countergateway.internal.http;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.HttpOptions;
import io.countergateway.internal.model.ApiError;
import io.netty.util.NetUtil;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.HostAndPort;
import io.vertx.ext.web.RoutingContext;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The names the gateway answers to ({@code http.allowedHosts}), against DNS rebinding: a page of another site makes its
 * own name resolve to the gateway's address (127.0.0.1 for a sidecar), and the browser then takes the gateway for that
 * site: the page may read its answers, and an {@code Origin} equal to the {@code Host} passes as same-origin. The
 * browser still sends the page's name in {@code Host}, so a request whose {@code Host} is not one the gateway is
 * reached by is refused (421 {@code misdirected_request}) before anything else is done.
 *
 * <p>An IP address in {@code Host} always passes (a rebinding page has a name, never an address: a page at an address
 * is of another origin than the gateway's), as do {@code localhost} and its subdomains, and a request without a
 * {@code Host} (HTTP/1.0: no browser sends one). Listed names pass, {@code .example.com} passes example.com and its
 * subdomains, {@code *} passes every name. With the list empty (the default), names are checked only when the gateway
 * has no tokens, the case rebinding matters for (a page cannot present a bearer token it does not have); the name of
 * {@code http.host} then passes too. As webpack-dev-server's and Vite's {@code allowedHosts} do.
 */
final class AllowedHosts {
  private final boolean checks;
  private final boolean any;
  private final Set<String> names;
  private final List<String> suffixes;

  private AllowedHosts(boolean checks, boolean any, Set<String> names, List<String> suffixes) {
    this.checks = checks;
    this.any = any;
    this.names = names;
    this.suffixes = suffixes;
  }

  static AllowedHosts of(GatewayConfig config) {
    HttpOptions http = config.getHttp();
    List<String> listed = http.getAllowedHosts();
    Set<String> names = new HashSet<>();
    List<String> suffixes = new ArrayList<>();
    for (String entry : listed) {
      String name = normalised(entry);
      if (name.startsWith(".")) {
        suffixes.add(name);
        names.add(name.substring(1));
      } else {
        names.add(name);
      }
    }
    if (listed.isEmpty()) {
      names.add(normalised(http.getHost()));
    }
    boolean checks = !listed.isEmpty() || !config.getAuth().isEnabled();
    return new AllowedHosts(checks, listed.contains("*"), Set.copyOf(names), List.copyOf(suffixes));
  }

  /** Whether requests are checked at all: false with tokens and no list, or with {@code *}. */
  boolean checks() {
    return checks && !any;
  }

  /** Whether a request naming {@code authority} (null when it has no Host) may be answered. */
  boolean allows(HostAndPort authority) {
    if (!checks() || authority == null) {
      return true;
    }
    String host = normalised(authority.host());
    if (host.startsWith("[") && host.endsWith("]")) {
      return NetUtil.isValidIpV6Address(host.substring(1, host.length() - 1));
    }
    if (NetUtil.isValidIpV4Address(host) || NetUtil.isValidIpV6Address(host) || host.equals("localhost")
      || host.endsWith(".localhost") || names.contains(host)) {
      return true;
    }
    for (String suffix : suffixes) {
      if (host.endsWith(suffix)) {
        return true;
      }
    }
    return false;
  }

  /** The router's first check: a request for a name the gateway does not answer to is refused, its body unread. */
  Handler<RoutingContext> guard(Vertx vertx) {
    return ctx -> {
      HttpServerRequest request = ctx.request();
      if (allows(request.authority())) {
        ctx.next();
        return;
      }
      String host = request.authority().host();
      String shown = (host.length() > 100 ? host.substring(0, 100) : host).replaceAll("\\p{Cntrl}", "?");
      BodyReader.refuseUnread(vertx, request, new ApiError(421, "misdirected_request", "this gateway does not answer to "
        + "the name '" + shown + "': list it in " + HttpOptions.ALLOWED_HOSTS.name() + " (IP addresses and localhost "
        + "always pass)", "Host"));
    };
  }

  private static String normalised(String name) {
    String lower = name.trim().toLowerCase(Locale.ROOT);
    return lower.endsWith(".") && lower.length() > 1 ? lower.substring(0, lower.length() - 1) : lower;
  }
}
