package io.countergateway.internal.http;

import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.metrics.HttpRouteMeters;
import io.countergateway.internal.read.ReadVerticle;
import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.EventLoop;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.countergateway.internal.write.Coalescer;
import io.countergateway.internal.write.IdempotentIncrements;
import io.countergateway.internal.write.WritePath;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link HotRoutes} is a fast path in front of the router for three routes, so it must answer exactly as the router
 * does. A corpus of raw requests (valid, invalid, odd framing) goes to two servers on one event loop: one with the hot
 * routes in front of the router, one with the router alone, each writing its own table through its own write path.
 * Every request must get the same status, the same headers that matter and the same body from both, and both tables
 * must end the same.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("The hot routes answer as the router does")
class HotRoutesMatchRouterIT {
  private static final List<String> HEADERS_THAT_MATTER = List.of("content-type", "cache-control", "vary",
    "access-control-allow-origin", "access-control-allow-credentials", "access-control-expose-headers", "retry-after",
    "allow", "idempotent-replayed", "x-counter-dropped", "x-counter-folded", "x-counter-ignored-parameters");
  private static final String BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    + "Chrome/120.0 Safari/537.36";

  private Vertx vertx;
  private Context loop;
  private JsonObject database;
  private final List<WritePath> writePaths = new ArrayList<>();
  private int hotPort;
  private int routerPort;

  @BeforeAll
  void start() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
    database = TestDatabases.postgres();
    hotPort = await(EventLoop.call(loop, () -> server("hot_route_counters", true)));
    routerPort = await(EventLoop.call(loop, () -> server("router_counters", false)));
  }

  @AfterAll
  void stop() {
    await(vertx.close());
  }

  private GatewayConfig config(String table) {
    JsonObject config = GatewayFixture.baseConfig(database, table);
    config.getJsonObject("http").put("corsOrigins", new JsonArray().add("https://shop.example"))
      .put("allowedOrigins", new JsonArray().add("https://shop.example")).put("allowedHosts", new JsonArray().add("gateway.test"));
    config.put("batching", new JsonObject().put("maxDelay", "1ms"));
    return GatewayConfig.fromJson(config);
  }

  /** A write path on its own table and a server in front of it: the hot routes then the router, or the router alone. */
  private Future<Integer> server(String table, boolean hotRoutes) {
    GatewayConfig config = config(table);
    GatewayServices services = new GatewayServices(config, new GatewayState(), new SimpleMeterRegistry());
    CounterStore store = SqlStores.create(vertx, config.getDatabase(), "writes", 2, 5_000);
    return store.createSchema().compose(created -> {
      Coalescer coalescer = new Coalescer(vertx, store, config, services.state(), 0, () -> 0, System::nanoTime);
      coalescer.start();
      WritePath writes = new WritePath(coalescer, new IdempotentIncrements(vertx, config,
        services.state().keysInFlight(), services.registry()), (type, id) -> Future.succeededFuture(null), store,
        services.state().taken());
      writePaths.add(writes);
      return vertx.deployVerticle(new ReadVerticle(services, false)).map(id -> writes);
    }).compose(writes -> {
      HttpRouteMeters meters = new HttpRouteMeters(services.registry());
      Handler<HttpServerRequest> handler = hotRoutes ? HttpApi.requestHandler(vertx, services, writes, meters, null)
        : HttpApi.router(vertx, services, writes);
      return vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0)
          .setMaxHeaderSize(config.getLimits().getMaxHeaderBytes()))
        .requestHandler(handler).invalidRequestHandler(HttpApi.invalidRequestHandler(meters)).listen()
        .map(HttpServer::actualPort);
    });
  }

  /** The corpus: what a browser, a client library and a careless or hostile client send to the two hot routes. */
  private static List<String> corpus() {
    String host = "Host: gateway.test\r\n";
    String ua = "User-Agent: " + BROWSER + "\r\n";
    List<String> requests = new ArrayList<>();
    // beacons
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home?format=gif HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/cart HTTP/1.1\r\n" + host + ua + "Origin: https://shop.example\r\n\r\n");
    requests.add("GET /v1/beacon/pageviews/cart HTTP/1.1\r\n" + host + ua + "Origin: https://evil.example\r\n\r\n");
    requests.add("GET /v1/beacon/pageviews/cart HTTP/1.1\r\n" + host + ua + "Origin: null\r\n\r\n");
    requests.add("GET /v1/beacon/likes/home HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/nosuch/home HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/" + "x".repeat(300) + " HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/a%20b HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/%68ome HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/.. HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home/extra HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/ HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/bot HTTP/1.1\r\n" + host + "User-Agent: Googlebot/2.1 (+http://www.google.com/bot.html)\r\n\r\n");
    requests.add("GET /v1/beacon/pageviews/noua HTTP/1.1\r\n" + host + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\n" + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\nHost: bad host^\r\n" + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\nHost: evil.test\r\n" + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\nHost: 127.0.0.1:1\r\n" + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.0\r\n" + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\n" + host + ua + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\n" + host + ua + "Content-Length: 3\r\n\r\nabc");
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\n" + host + ua + "Content-Length: 100000\r\n\r\n"
      + "x".repeat(100_000));
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\n" + host + ua + "Content-Length: 0\r\n\r\n");
    // query parameters: the GIF, one the route does not take, a malformed one
    requests.add("GET /v1/beacon/pageviews/home?fromat=gif HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home?format=gif&x=1 HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home?format=png HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home?%zz HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/home HTTP/1.1\r\n" + host + ua + "DNT: 1\r\nSec-GPC: 1\r\n\r\n");
    // page paths as beacon.js sends them (decoded once, encoded once), and as careless senders do
    for (String id : List.of("%2Fdocs%2F%C3%BCber", "%2Fdocs%2Fu%CC%88ber", "%2Fa%20page", "%2Fwiki%2FFoo_(bar)",
      "%2Fx%3By", "%2Fit's", "%2Fit%27s", "/100%", "%2F100%", "%2Fa%zz%2", "%25", "%", "%2Fa%0Ab", "%C3%28", "%2E%2E",
      "%2e", ".%2E", "a+b", "%2F" + "p%C3%A4ge".repeat(120), "%2F" + "x".repeat(600), "(other)", "(invalid)")) {
      requests.add("GET /v1/beacon/pageviews/" + id + " HTTP/1.1\r\n" + host + ua + "\r\n");
    }
    requests.add("GET /v1/beacon/pageviews/50%25%off HTTP/1.1\r\n" + host + ua + "Origin: https://shop.example\r\n\r\n");
    requests.add("HEAD /v1/beacon/pageviews/%2Fsale%ff% HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("POST /v1/beacon/pageviews/%2Fposted%zz HTTP/1.1\r\n" + host + ua + "Content-Length: 0\r\n\r\n");
    requests.add("POST /v1/beacon/pageviews/%2Fposted%20page?utm_source=x HTTP/1.1\r\n" + host + ua
      + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi");
    // parameters a beacon does not use: ignored, named in the answer
    requests.add("GET /v1/beacon/pageviews/%2Fpixel?_=1&cb=2&v=3&utm_source=x&utm_medium=y&fbclid=z&ref=w HTTP/1.1\r\n"
      + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/%2Fpixel?_=1&format=gif&utm_source=x HTTP/1.1\r\n" + host + ua
      + "Origin: https://shop.example\r\n\r\n");
    requests.add("GET /v1/beacon/pageviews/%2Fpixel?format=gif&format=png&%zz=1&a%2Cb&&=x&" + "n".repeat(300)
      + " HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/%2Fpixel?%C3%28%zz=1&utm%5Fsource=x&%E2%82%AC=1 HTTP/1.1\r\n" + host + ua + "\r\n");
    requests.add("GET /v1/beacon/pageviews/%2Fpixel?" + "p=1&".repeat(3) + "q".repeat(70) + "=1&r%0A=2 HTTP/1.1\r\n"
      + host + ua + "\r\n");
    // single increments
    requests.add(post("/v1/counters/likes/a/increments", host, null, ""));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/json", "{\"delta\":5}"));
    requests.add(post("/v1/counters/likes/a/increments?ack=accepted", host, "application/json", "{\"delta\":2}"));
    requests.add(post("/v1/counters/likes/a/increments?ack=commit", host, "application/json", "{\"delta\":-3}"));
    requests.add(post("/v1/counters/likes/a/increments?ack=bogus", host, "application/json", "{\"delta\":1}"));
    requests.add(post("/v1/counters/likes/a/increments?ack=accepted&ack=commit", host, null, ""));
    requests.add(post("/v1/counters/likes/a/increments?ack=accepted&delta=5", host, null, ""));
    requests.add(post("/v1/counters/likes/a/increments?delta=5", host, null, ""));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/json", "{\"delta\":0}"));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/json", "{\"delta\":"));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/json", "{\"delta\":1,\"extra\":2}"));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/json", "{\"delta\":\"7\"}"));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/json", "{\"delta\":1.5}"));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/json", "{\"delta\":99999999999999999999}"));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/json", "{\"delta\":null}"));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/json", "[1]"));
    requests.add(post("/v1/counters/likes/a/increments", host, "text/plain", "{\"delta\":4}"));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/x-www-form-urlencoded", "delta=4"));
    requests.add(post("/v1/counters/likes/a/increments", host, "multipart/form-data; boundary=x", "--x--"));
    // cross-site writes: a foreign, listed or own Origin, a body of no type, an empty body of a form's type, NDJSON
    requests.add(post("/v1/counters/likes/a/increments", host + "Origin: https://evil.example\r\n", "application/json", "{\"delta\":4}"));
    requests.add(post("/v1/counters/likes/a/increments", host + "Origin: https://shop.example\r\n", "application/json", "{\"delta\":4}"));
    requests.add(post("/v1/counters/likes/a/increments", host + "Origin: http://gateway.test\r\n", "application/json", "{\"delta\":4}"));
    requests.add(post("/v1/counters/likes/a/increments", host + "Origin: null\r\n", null, ""));
    requests.add(post("/v1/counters/likes/a/increments", host, null, "{\"delta\":4}"));
    requests.add(post("/v1/counters/likes/a/increments", host, "text/plain", ""));
    requests.add(post("/v1/counters/likes/a/increments", host, "application/x-ndjson", "{\"delta\":4}"));
    requests.add(post("/v1/counters/likes/a/increments", host, "Application/JSON; charset=utf-8", "{\"delta\":4}"));
    requests.add(post("/v1/counters/nosuch/a/increments", host, null, ""));
    requests.add(post("/v1/counters/likes/" + "y".repeat(300) + "/increments", host, null, ""));
    requests.add(post("/v1/counters/likes/a%2Fb/increments", host, null, ""));
    requests.add(post("/v1/counters/likes/%61/increments", host, null, ""));
    requests.add(post("/v1/counters/likes/../increments", host, null, ""));
    requests.add(post("/v1/counters//a/increments", host, null, ""));
    requests.add(post("/v1/counters/likes/a/increments", "Host: bad host^\r\n", null, ""));
    requests.add(post("/v1/counters/likes/a/increments", "Host: evil.test:8080\r\nOrigin: http://evil.test:8080\r\n",
      "application/json", "{\"delta\":7}"));
    requests.add(post("/v1/counters/likes/a/increments", "Host: [::1]:8080\r\n", null, ""));
    requests.add(post("/v1/counters/likes/a/increments", "", null, ""));
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Content-Length: 70000\r\n\r\n"
      + "x".repeat(70_000));
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Content-Type: application/json\r\n"
      + "Transfer-Encoding: chunked\r\n\r\nb\r\n{\"delta\":6}\r\n0\r\n\r\n");
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Content-Type: application/json\r\n"
      + "Content-Length: +11\r\n\r\n{\"delta\":6}");
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Expect: 100-continue\r\n"
      + "Content-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"delta\":8}");
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Expect: something\r\n"
      + "Content-Length: 0\r\n\r\n");
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Idempotency-Key: k-1\r\n"
      + "Content-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"delta\":9}");
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Idempotency-Key: k-1\r\n"
      + "Content-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"delta\":9}");
    requests.add("PUT /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Content-Length: 0\r\n\r\n");
    // the edge (src/DESIGN.md §10): a user agent past 512 characters is a bot; made-up crawler agents are dropped;
    // a body announced past the limit is refused on its headers; a chunked body past it is refused as it comes
    requests.add("GET /v1/beacon/pageviews/long-ua HTTP/1.1\r\n" + host + "User-Agent: " + BROWSER + " " + "x".repeat(600)
      + "\r\n\r\n");
    requests.add("GET /v1/beacon/pageviews/made-up-bot HTTP/1.1\r\n" + host + "User-Agent: Googlebot/2.1 zq" + "k".repeat(300)
      + "\r\n\r\n");
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Content-Type: application/json\r\n"
      + "Content-Length: 9999999\r\n\r\n");
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Expect: 100-continue\r\n"
      + "Content-Length: 9999999\r\n\r\n");
    requests.add("POST /v1/counters/likes/a/increments HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n"
      + "11170\r\n" + "x".repeat(70_000) + "\r\n0\r\n\r\n");
    requests.add("POST /v1/beacon/pageviews/posted HTTP/1.1\r\n" + host + ua + "Content-Type: text/plain\r\n"
      + "Content-Length: 5\r\n\r\nhello");
    // reads of a plain counter whose increments were all committed when answered
    requests.add(post("/v1/counters/downloads/r/increments", host, "application/json", "{\"delta\":4}"));
    for (String path : List.of("/v1/counters/downloads/r", "/v1/counters/downloads/r?", "/v1/counters/downloads/r?x=1",
      "/v1/counters/downloads/none", "/v1/counters/nosuch/r", "/v1/counters/downloads/%72", "/v1/counters/downloads/..",
      "/v1/counters/downloads/r/", "/v1/counters//r", "/v1/counters/downloads/" + "z".repeat(300),
      "/v1/counters/downloads?id=r&id=none&id=r", "/v1/counters/pageviews/home")) {
      requests.add("GET " + path + " HTTP/1.1\r\n" + host + "\r\n");
    }
    requests.add("HEAD /v1/counters/downloads/r HTTP/1.1\r\n" + host + "\r\n");
    requests.add("GET /v1/counters/downloads/r HTTP/1.1\r\n" + host + "Content-Length: 3\r\n\r\nabc");
    requests.add("GET /v1/counters/downloads/r HTTP/1.1\r\n" + host + "Origin: https://evil.example\r\n\r\n");
    requests.add("GET /v1/counters/downloads/r HTTP/1.1\r\nHost: evil.test\r\n\r\n");
    requests.add("GET /v1/counters/downloads/r HTTP/1.0\r\n\r\n");
    return requests;
  }

  private static String post(String path, String host, String contentType, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return "POST " + path + " HTTP/1.1\r\n" + host + (contentType == null ? "" : "Content-Type: " + contentType + "\r\n")
      + "Content-Length: " + bytes.length + "\r\n\r\n" + body;
  }

  @Test
  @DisplayName("every request of the corpus gets the same status, headers and body, and both tables end the same")
  void sameAnswersSameTable() {
    List<String> differences = new ArrayList<>();
    int index = 0;
    for (String request : corpus()) {
      String viaHot = exchange(hotPort, request);
      String viaRouter = exchange(routerPort, request);
      if (!viaHot.equals(viaRouter)) {
        differences.add("case " + index + " " + request.lines().findFirst().orElse("") + "\n  hot:    " + viaHot
          + "\n  router: " + viaRouter);
      }
      index++;
    }
    assertThat(differences).as("requests answered differently").isEmpty();
    assertThat(exchange(hotPort, "GET /v1/counters/downloads/r HTTP/1.1\r\nHost: gateway.test\r\n\r\n"))
      .as("a read answered with its value").startsWith("200 ").contains("\"value\":4");

    for (WritePath writes : writePaths) {
      await(EventLoop.call(loop, writes::drain));
    }
    Pool sql = DirectSql.pool(vertx, "postgres");
    try {
      Map<String, Long> hotTable = table(sql, "hot_route_counters");
      assertThat(hotTable).as("counted through the hot routes").isNotEmpty();
      assertThat(hotTable).as("counted through the router alone").isEqualTo(table(sql, "router_counters"));
    } finally {
      await(sql.close());
    }
  }

  private static Map<String, Long> table(Pool sql, String table) {
    Map<String, Long> sums = new TreeMap<>();
    for (Row row : await(sql.query("SELECT record_type, record_id, SUM(count) FROM " + table
      + " GROUP BY record_type, record_id").execute())) {
      sums.put(row.getString(0) + "/" + row.getString(1), row.getNumeric(2).longValue());
    }
    return sums;
  }

  /**
   * The request over a fresh connection, answered as "status | headers that matter | body" (the Date header and the
   * framing aside). Blocking socket I/O on the test thread, never on an event loop.
   */
  private static String exchange(int port, String request) {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.UTF_8));
      out.flush();
      return readResponse(socket.getInputStream());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String readResponse(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int next = in.read();
      if (next < 0) {
        return "closed without an answer after " + head.size() + " bytes";
      }
      head.write(next);
      matched = next == "\r\n\r\n".charAt(matched) ? matched + 1 : next == '\r' ? 1 : 0;
    }
    String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
    String status = lines[0].split(" ", 3)[1];
    if (status.equals("100")) {
      return "100 | " + readResponse(in);
    }
    Map<String, String> headers = new TreeMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      headers.merge(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim(),
        (a, b) -> a + ", " + b);
    }
    byte[] body;
    if (headers.containsKey("content-length")) {
      body = in.readNBytes(Integer.parseInt(headers.get("content-length")));
    } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      ByteArrayOutputStream chunks = new ByteArrayOutputStream();
      while (true) {
        int size = Integer.parseInt(readLine(in).trim(), 16);
        if (size == 0) {
          break;
        }
        chunks.write(in.readNBytes(size));
        readLine(in);
      }
      body = chunks.toByteArray();
    } else {
      body = new byte[0];
    }
    headers.keySet().retainAll(HEADERS_THAT_MATTER);
    return status + " | " + headers + " | " + new String(body, StandardCharsets.UTF_8);
  }

  private static String readLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int next;
    while ((next = in.read()) >= 0 && next != '\n') {
      line.append((char) next);
    }
    return line.toString();
  }
}
