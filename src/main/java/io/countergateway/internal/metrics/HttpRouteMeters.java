package io.countergateway.internal.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.RoutingContext;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * HTTP requests by route template, method and status, and their time to answer as a histogram:
 * {@code gateway_http_requests_total} and {@code gateway_http_response_time_seconds_bucket}.
 *
 * <p>Why not the metrics SPI's HTTP meters: vertx-micrometer-metrics looks each request's meters up in the registry
 * by their tags, four times per request, and that lookup costs the beacon route a sixth of its throughput (measured
 * in a JFR profile of beacons). Here each (route, method, status) resolves its meters once per event loop; later requests find
 * them in a map of this event loop. One instance per router, so per event loop, and its map used only there.
 */
public final class HttpRouteMeters {
  /** Requests the router never matched (404, 405) or the HTTP decoder refused. */
  public static final String UNMATCHED = "unmatched";
  /** Upper bounds of the response-time buckets: from a beacon's fraction of a millisecond to a request timing out. */
  static final Duration[] RESPONSE_TIME_BUCKETS = Stream.of(1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000,
    10_000).map(Duration::ofMillis).toArray(Duration[]::new);
  /** Routing-context key of a HEAD request the router routes as its GET: recorded as the HEAD it is. */
  public static final String HEAD_AS_GET = "cg.headAsGet";

  private final MeterRegistry registry;
  private final Map<String, Map<Integer, Meters>> byRoute = new HashMap<>();

  public HttpRouteMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /** The router's first handler: the request is recorded when its answer has been written (or its connection lost). */
  public void begin(RoutingContext ctx) {
    long started = System.nanoTime();
    HttpMethod method = Boolean.TRUE.equals(ctx.get(HEAD_AS_GET)) ? HttpMethod.HEAD : ctx.request().method();
    ctx.addEndHandler(ended -> record(routeOf(ctx), method, ctx.response().getStatusCode(),
      System.nanoTime() - started));
    ctx.next();
  }

  /** A request the router does not take: recorded when {@code response} has been written, timed from now. */
  public void recordWhenEnded(HttpServerResponse response, String route, HttpMethod method) {
    long started = System.nanoTime();
    response.endHandler(ended -> record(route, method, response.getStatusCode(), System.nanoTime() - started));
  }

  /** A request answered without the router, e.g. one the HTTP decoder refused. */
  public void record(String route, HttpMethod method, int status, long nanos) {
    int methodIndex = methodIndex(method);
    Meters meters = byRoute.computeIfAbsent(route, r -> new HashMap<>())
      .computeIfAbsent(methodIndex * 1_000 + status, key -> new Meters(route, methodLabel(methodIndex, method), status));
    meters.record(nanos);
  }

  private static String routeOf(RoutingContext ctx) {
    Route route = ctx.currentRoute();
    String path = route == null ? null : route.getPath();
    return path == null || ctx.statusCode() == 404 || ctx.statusCode() == 405 ? UNMATCHED : path;
  }

  /** Methods outside the API are one label value, so a client cannot grow the label set. */
  private static int methodIndex(HttpMethod method) {
    String name = method.name();
    return switch (name) {
      case "GET" -> 0;
      case "POST" -> 1;
      case "OPTIONS" -> 2;
      case "DELETE" -> 3;
      case "HEAD" -> 4;
      case "PUT" -> 5;
      default -> 6;
    };
  }

  private static String methodLabel(int index, HttpMethod method) {
    return index == 6 ? "other" : method.name();
  }

  /**
   * The request count and the time to answer as a histogram of fixed buckets: counts per bucket add up across event
   * loops and pods, so {@code histogram_quantile} gives a p99 of the whole service, which quantiles computed in each
   * process could not. Only these buckets, not Micrometer's percentile histogram of some seventy: a few series per
   * route, method and status.
   *
   * <p>One recording per request: the timer counts the requests it times, and {@code gateway_http_requests_total} is
   * read from that count at scrape time (a separate counter would cost every request a second increment; counter and
   * timer together are 1.2 % of the beacon and accepted paths' CPU samples in a JFR profile,
   * src/bench/results/hot-paths-2026-11-25.md). Each event loop's
   * instance registers the same ids: the registry hands back the one timer, and keeps the first request counter, whose
   * function reads that shared timer, so every loop's requests are in it.
   */
  private final class Meters {
    final Timer time;

    Meters(String route, String method, int status) {
      Tags tags = Tags.of("route", route, "method", method, "code", Integer.toString(status));
      time = Timer.builder("gateway.http.response.time")
        .description("time from a request's arrival to its answer written, by route template, method and status")
        .serviceLevelObjectives(RESPONSE_TIME_BUCKETS).tags(tags).register(registry);
      FunctionCounter.builder("gateway.http.requests", time, Timer::count)
        .description("HTTP requests answered, by route template, method and status").tags(tags).register(registry);
    }

    void record(long nanos) {
      time.record(nanos, TimeUnit.NANOSECONDS);
    }
  }
}
