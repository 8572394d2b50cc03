package io.countergateway.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.RoutingContext;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * HTTP requests by route template, method and status, and their time to answer by route and method:
 * {@code gateway_http_requests_total} and {@code gateway_http_response_time_seconds}.
 *
 * <p>Why not the metrics SPI's HTTP meters: vertx-micrometer-metrics looks each request's meters up in the registry
 * by their tags, four times per request, and that lookup cost the beacon route a sixth of its throughput (measured:
 * issue 10's note). Here each (route, method, status) resolves its meters once; later requests find them in a map
 * of this event loop. One instance per router, so per event loop, and used only there: no locks.
 */
public final class HttpRouteMeters {
  /** Requests the router never matched (404, 405) or the HTTP decoder refused. */
  public static final String UNMATCHED = "unmatched";

  private final MeterRegistry registry;
  private final Map<String, Map<Integer, Meters>> byRoute = new HashMap<>();

  public HttpRouteMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /** The router's first handler: the request is recorded when its answer has been written (or its connection lost). */
  public void begin(RoutingContext ctx) {
    long started = System.nanoTime();
    ctx.addEndHandler(ended -> record(routeOf(ctx), ctx.request().method(), ctx.response().getStatusCode(),
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
    meters.requests.increment();
    meters.nanos.add(nanos);
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
   * Two adders read by the scrape: the request count (a counter, and the timer's count) and the total time. A
   * function timer rather than a Timer: a Timer also keeps a decaying maximum, whose upkeep was most of this class's
   * cost per request; the mean (sum ÷ count) and rates are what the dashboard reads.
   */
  private final class Meters {
    final LongAdder requests = new LongAdder();
    final LongAdder nanos = new LongAdder();

    Meters(String route, String method, int status) {
      Tags tags = Tags.of("route", route, "method", method, "code", Integer.toString(status));
      FunctionCounter.builder("gateway.http.requests", requests, LongAdder::doubleValue)
        .description("HTTP requests answered, by route template, method and status").tags(tags).register(registry);
      FunctionTimer.builder("gateway.http.response.time", this, meters -> meters.requests.longValue(),
          meters -> meters.nanos.doubleValue(), TimeUnit.NANOSECONDS)
        .description("time from a request's arrival to its answer written, by route template, method and status")
        .tags(tags).register(registry);
    }
  }
}
