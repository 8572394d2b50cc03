package io.countergateway.fuzz;

import io.vertx.core.http.HttpMethod;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A seeded stream of requests that must all be refused. Case {@code i} depends only on the seed and {@code i}, so
 * one case can be replayed alone. Every case is bad by construction: an unknown route or namespace, an invalid id,
 * a method the route does not take, a missing or weak token, an invalid body or query, or a body, line or header
 * block over the limits. Noise that a valid request could carry (odd headers, double slashes, raw-socket quirks) is
 * only ever added on top of a request that is bad for one of those reasons, so no mutation can make it valid.
 */
final class BadRequests {
  static final String WRITE_TOKEN = "fuzz-writer-token-000000000001";
  static final String BEACON_TOKEN = "fuzz-beacon-token-000000000002";
  static final String ADMIN_TOKEN = "fuzz-admin-token-0000000000003";
  static final String ORIGIN = "https://shop.example";
  static final List<String> NAMESPACES = List.of("pageviews", "downloads", "likes");
  static final String PUBLIC_NAMESPACE = "pageviews";
  static final int MAX_BODY = 65_536;
  static final int MAX_HEADERS = 8_192;
  static final int MAX_LINE = 4_096;
  static final int MAX_ITEMS = 10_000;

  private static final String ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~:/@+=!,-";
  private static final String ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789";
  /** Characters outside the id charset, including controls, look-alikes, invisible and bidi characters. */
  private static final String[] BAD_ID_CHARS = {" ", "\"", "#", "$", "%", "&", "'", "(", ")", "*", ";", "<", ">", "?",
    "[", "\\", "]", "^", "`", "{", "|", "}", "\t", "\n", "\r", "\u0000", "\u0001", "\u001f", "\u007f", "\u0085",
    "é", "ß", "中", "😀", "\u00a0", "\u200b", "\ufeff", "\u2028", "\u0301", "\u202e", "ｄ", "\ufffd"};
  private static final Set<Integer> ANY = Set.of();

  private final long seed;

  BadRequests(long seed) {
    this.seed = seed;
  }

  FuzzCase generate(int index) {
    return new Gen(new Random(seed * 0x9E3779B97F4A7C15L + index * 0xBF58476D1CE4E5B9L + 1), index).any();
  }

  /** One case's generator: all randomness comes from its own {@link Random}. */
  private static final class Gen {
    private final Random r;
    private final int index;

    Gen(Random r, int index) {
      this.r = r;
      this.index = index;
    }

    FuzzCase any() {
      int roll = r.nextInt(100);
      if (roll < 4) {
        return unknownRoute();
      } else if (roll < 7) {
        return traversal();
      } else if (roll < 10) {
        return emptySegments();
      } else if (roll < 16) {
        return unknownNamespace();
      } else if (roll < 25) {
        return badId();
      } else if (roll < 31) {
        return wrongMethod();
      } else if (roll < 37) {
        return badAuth();
      } else if (roll < 53) {
        return badSingleBody();
      } else if (roll < 67) {
        return badBatch();
      } else if (roll < 73) {
        return badQuery();
      } else if (roll < 80) {
        return headerNoise();
      } else if (roll < 84) {
        return oversizedBody();
      }
      return raw();
    }

    // ---------------------------------------------------------------- categories sent by the web client

    FuzzCase unknownRoute() {
      String path = switch (r.nextInt(9)) {
        case 0 -> "/";
        case 1 -> "/" + junkSegment() + junkPath(r.nextInt(4));
        case 2 -> "/v1/" + junkSegment() + junkPath(r.nextInt(4));
        case 3 -> "/v1/counters/" + ns() + "/" + enc(goodId()) + "/increments/" + junkSegment();
        case 4 -> "/v1/counters/" + ns() + "/" + enc(goodId()) + "/" + junkSegment();
        case 5 -> "/v1/beacon/" + PUBLIC_NAMESPACE + "/" + enc(goodId()) + "/" + junkSegment();
        case 6 -> "/health/" + junkSegment();
        case 7 -> "/metrics/" + junkSegment();
        default -> pick("/v2/increments", "/v1/increment", "/v1/counter/downloads/x/increments", "/api/v1/increments",
          "/v1/increments/" + junkSegment(), "/v1/beacon/" + PUBLIC_NAMESPACE, "/health", "/v1/counters/downloads/x/y/z");
      };
      // GET / leads to the dashboard: the root is a route for GET only
      HttpMethod method = path.equals("/") ? pick(HttpMethod.POST, HttpMethod.PUT, HttpMethod.DELETE, HttpMethod.PATCH)
        : pick(HttpMethod.GET, HttpMethod.POST, HttpMethod.PUT, HttpMethod.DELETE, HttpMethod.PATCH);
      return http("unknown-route", method, path, writeAuth(), r.nextBoolean() ? badSingleBodyBytes() : new byte[0],
        Set.of(404, 405));
    }

    /** Dot segments, in every spelling, that climb above the root: whatever they resolve to is no route. */
    FuzzCase traversal() {
      String prefix = pick("/v1/counters/" + ns() + "/" + enc(goodId()), "/v1/beacon/" + PUBLIC_NAMESPACE,
        "/v1/counters/" + ns(), "/v1", "/health", "");
      int depth = (int) prefix.chars().filter(c -> c == '/').count();
      StringBuilder path = new StringBuilder(prefix);
      for (int i = 0; i < depth + 1 + r.nextInt(4); i++) {
        path.append('/').append(pick("..", "%2e%2e", "%2E%2E", ".%2e", "%2e.", "..", ".."));
        if (r.nextInt(5) == 0) {
          path.append("/.");
        }
      }
      path.append('/').append(pick("etc/passwd", "windows/win.ini", "proc/self/environ", "zz" + junkSegment(),
        "%2e%2e%2fetc%2fpasswd", "..%5c..%5cboot.ini", "..;/etc"));
      HttpMethod method = pick(HttpMethod.GET, HttpMethod.POST, HttpMethod.PUT, HttpMethod.DELETE);
      return http("traversal", method, path.toString(), writeAuth(),
        method == HttpMethod.POST ? badSingleBodyBytes() : new byte[0], ANY);
    }

    /** Double slashes and empty segments, on write routes whose body is bad anyway. */
    FuzzCase emptySegments() {
      boolean batch = r.nextInt(3) == 0;
      String[] segments = batch ? new String[] {"v1", "increments"}
        : new String[] {"v1", "counters", ns(), enc(goodId()), "increments"};
      StringBuilder path = new StringBuilder();
      int where = r.nextInt(segments.length + 1);
      for (int i = 0; i < segments.length; i++) {
        path.append('/');
        if (i == where || r.nextInt(6) == 0) {
          path.append("/".repeat(1 + r.nextInt(3)));
        }
        if (!batch && i == 3 && r.nextInt(4) == 0) {
          continue; // empty id segment
        }
        path.append(segments[i]);
      }
      if (where == segments.length) {
        path.append("/".repeat(1 + r.nextInt(2)));
      }
      return http("empty-segments", HttpMethod.POST, path.toString(), writeAuth(),
        batch ? badBatchBytes() : badSingleBodyBytes(), ANY);
    }

    FuzzCase unknownNamespace() {
      String type = badNamespace();
      String id = goodId();
      return switch (r.nextInt(7)) {
        case 0, 1 -> http("unknown-namespace", HttpMethod.POST, "/v1/counters/" + enc(type) + "/" + enc(id) + "/increments"
          + maybeAck(), writeAuth(), goodSingleBody(), Set.of(404, 414));
        case 2 -> http("unknown-namespace", pick(HttpMethod.GET, HttpMethod.POST), "/v1/beacon/" + enc(type) + "/" + enc(id),
          List.of(), new byte[0], Set.of(404, 414));
        case 3 -> http("unknown-namespace", HttpMethod.GET, "/v1/counters/" + enc(type) + "/" + enc(id), List.of(),
          new byte[0], Set.of(404, 414));
        case 4 -> http("unknown-namespace", HttpMethod.GET, "/v1/counters/" + enc(type) + "?id=" + enc(id), List.of(),
          new byte[0], Set.of(404, 414));
        case 5 -> http("unknown-namespace", HttpMethod.DELETE, "/v1/counters/" + enc(type) + "/" + enc(id),
          bearer(ADMIN_TOKEN), new byte[0], Set.of(404, 414));
        default -> {
          List<String> items = goodItems(r.nextInt(20));
          items.add(r.nextInt(items.size() + 1), "{\"type\":" + quote(type) + ",\"id\":" + quote(id) + ",\"delta\":1}");
          yield http("unknown-namespace", HttpMethod.POST, "/v1/increments" + maybeAck(), writeAuth(),
            batchBody(items), Set.of(404));
        }
      };
    }

    /**
     * Ids the JSON API refuses, on namespaces that are not public: a public namespace's beacons, reads and resets take
     * any page path (a beacon's unstorable one counts under (invalid)), so none of them is a bad request there.
     */
    FuzzCase badId() {
      String id = badIdText();
      String ns = pick("downloads", "likes");
      Set<Integer> refused = Set.of(400, 404, 414);
      if (r.nextInt(6) == 0) {
        // escapes that do not decode to UTF-8 (or at all), written into the path as they are
        String escaped = enc(goodId()) + pick("%", "%Z1", "%G", "%C0%AF", "%C0%AE%C0%AE", "%FF", "%E2%82", "%ED%A0%80",
          "%F8%88%80%80%80", "%%", "%2", "%u0041", "%00", "%0A", "%E2%80%AE") + pick("", "z" + enc(goodId()));
        return switch (r.nextInt(4)) {
          case 0 -> http("bad-id", HttpMethod.POST, "/v1/counters/" + ns + "/" + escaped + "/increments", writeAuth(),
            goodSingleBody(), refused);
          case 1 -> http("bad-id", HttpMethod.GET, "/v1/counters/" + ns + "/" + escaped, List.of(), new byte[0], refused);
          case 2 -> http("bad-id", HttpMethod.GET, "/v1/counters/" + ns + "?id=" + escaped, List.of(), new byte[0], refused);
          default -> http("bad-id", HttpMethod.DELETE, "/v1/counters/" + ns + "/" + escaped, bearer(ADMIN_TOKEN),
            new byte[0], refused);
        };
      }
      return switch (r.nextInt(8)) {
        case 0, 1 -> http("bad-id", HttpMethod.POST, "/v1/counters/" + ns + "/" + enc(id) + "/increments" + maybeAck(),
          writeAuth(), goodSingleBody(), refused);
        case 2, 3 -> http("bad-id", HttpMethod.GET, "/v1/counters/" + ns + "/" + enc(id), List.of(), new byte[0], refused);
        case 4 -> {
          StringBuilder query = new StringBuilder("?");
          int before = r.nextInt(3);
          for (int i = 0; i < before; i++) {
            query.append("id=").append(enc(goodId())).append('&');
          }
          query.append("id=").append(enc(id));
          yield http("bad-id", HttpMethod.GET, "/v1/counters/" + ns + query, List.of(), new byte[0], refused);
        }
        case 5 -> http("bad-id", HttpMethod.DELETE, "/v1/counters/" + ns + "/" + enc(id), bearer(ADMIN_TOKEN),
          new byte[0], refused);
        default -> {
          List<String> items = goodItems(r.nextInt(20));
          String idJson = r.nextInt(5) == 0 ? pick("\"\"", "null", "42", "true", "[\"a\"]", "{\"id\":\"a\"}")
            : quote(id);
          items.add(r.nextInt(items.size() + 1), "{\"type\":" + quote(ns) + ",\"id\":" + idJson + "}");
          yield http("bad-id", HttpMethod.POST, "/v1/increments" + maybeAck(), writeAuth(), batchBody(items),
            Set.of(400, 413));
        }
      };
    }

    /** Every route with a method it does not take; the path and body are otherwise fine. */
    FuzzCase wrongMethod() {
      String ns = ns();
      String id = enc(goodId());
      HttpMethod[] odd = {HttpMethod.PUT, HttpMethod.PATCH, HttpMethod.TRACE, HttpMethod.valueOf("PROPFIND"),
        HttpMethod.valueOf("FOO"), HttpMethod.valueOf("MKCOL"), HttpMethod.valueOf("PURGE")};
      String path;
      HttpMethod method;
      switch (r.nextInt(7)) {
        case 0 -> {
          path = "/v1/counters/" + ns + "/" + id + "/increments";
          method = pickOr(odd, HttpMethod.GET, HttpMethod.DELETE, HttpMethod.OPTIONS);
        }
        case 1 -> {
          path = "/v1/increments";
          method = pickOr(odd, HttpMethod.GET, HttpMethod.DELETE, HttpMethod.OPTIONS);
        }
        case 2 -> {
          path = "/v1/beacon/" + PUBLIC_NAMESPACE + "/" + id;
          method = pickOr(odd, HttpMethod.DELETE);
        }
        case 3 -> {
          path = "/v1/counters/" + ns + "/" + id;
          method = pickOr(odd, HttpMethod.POST, HttpMethod.OPTIONS);
        }
        case 4 -> {
          path = "/v1/counters/" + ns + "?id=" + id;
          method = pickOr(odd, HttpMethod.POST, HttpMethod.DELETE, HttpMethod.OPTIONS);
        }
        case 5 -> {
          path = pick("/health/live", "/health/ready", "/metrics");
          method = pickOr(odd, HttpMethod.POST, HttpMethod.DELETE, HttpMethod.OPTIONS);
        }
        default -> {
          path = "/v1/counters/" + ns + "/" + id + "/increments";
          method = HttpMethod.valueOf(pick("post", "Post", "P0ST", "POSTX", "XPOST"));
        }
      }
      return http("wrong-method", method, path, writeAuth(), r.nextBoolean() ? goodSingleBody() : new byte[0],
        Set.of(404, 405));
    }

    /** Valid writes and resets with no token, a malformed or unknown token, or a token without the right. */
    FuzzCase badAuth() {
      String auth = switch (r.nextInt(18)) {
        case 0 -> null;
        case 1 -> "";
        case 2 -> "Bearer";
        case 3 -> "Bearer ";
        case 4 -> "Bearer " + BEACON_TOKEN;
        case 5 -> "Bearer " + WRITE_TOKEN.substring(0, r.nextInt(WRITE_TOKEN.length()));
        case 6 -> "Bearer " + WRITE_TOKEN + pick("x", "0", "=", "==", ".", "-");
        case 7 -> "Basic " + java.util.Base64.getEncoder().encodeToString(("user:" + WRITE_TOKEN).getBytes(StandardCharsets.UTF_8));
        case 8 -> WRITE_TOKEN;
        case 9 -> "Bearer" + WRITE_TOKEN;
        case 10 -> pick("Token ", "Bearer: ", "Bearer=", "Bearerx ", "JWT ", "Bearer\t") + WRITE_TOKEN;
        case 11 -> "Bearer " + WRITE_TOKEN.toUpperCase();
        case 12 -> "Bearer " + new StringBuilder(WRITE_TOKEN).reverse();
        case 13 -> "Bearer " + randomAscii(1 + r.nextInt(200));
        case 14 -> "Bearer " + "A".repeat(r.nextBoolean() ? 1_000 + r.nextInt(6_000) : MAX_HEADERS + r.nextInt(8_000));
        case 15 -> "Bearer " + WRITE_TOKEN.substring(0, 10) + " " + WRITE_TOKEN.substring(10);
        case 16 -> "Bearer " + ADMIN_TOKEN.substring(0, 12) + WRITE_TOKEN.substring(12);
        default -> "Bearer %" + WRITE_TOKEN;
      };
      List<String[]> headers = auth == null ? new ArrayList<>() : new ArrayList<>(List.<String[]>of(new String[] {"Authorization", auth}));
      if (auth != null && r.nextInt(8) == 0) {
        headers.add(new String[] {"Authorization", pick("Bearer " + BEACON_TOKEN, "Basic Zm9vOmJhcg==", "Bearer x")});
      }
      Set<Integer> refused = Set.of(401, 403, 431);
      return switch (r.nextInt(4)) {
        case 0, 1 -> http("auth", HttpMethod.POST, "/v1/counters/" + ns() + "/" + enc(goodId()) + "/increments" + maybeAck(),
          headers, goodSingleBody(), refused);
        case 2 -> http("auth", HttpMethod.POST, "/v1/increments" + maybeAck(), headers,
          batchBody(goodItems(1 + r.nextInt(30))), refused);
        default -> {
          if (auth != null && r.nextBoolean()) {
            headers = bearer(pick(WRITE_TOKEN, BEACON_TOKEN));
          }
          yield http("auth", HttpMethod.DELETE, "/v1/counters/" + ns() + "/" + enc(goodId()), headers, new byte[0], refused);
        }
      };
    }

    FuzzCase badSingleBody() {
      List<String[]> headers = writeAuth();
      maybeContentType(headers);
      return http("single-body", HttpMethod.POST, "/v1/counters/" + ns() + "/" + enc(goodId()) + "/increments" + maybeAck(),
        headers, badSingleBodyBytes(), Set.of(400, 413, 415));
    }

    FuzzCase badBatch() {
      List<String[]> headers = writeAuth();
      maybeContentType(headers);
      return http("batch-body", HttpMethod.POST, "/v1/increments" + maybeAck(), headers, badBatchBytes(),
        Set.of(400, 404, 413, 415));
    }

    /** Invalid ack values, repeated acks, undecodable escapes and query strings over the request-line limit. */
    FuzzCase badQuery() {
      boolean batch = r.nextInt(3) == 0;
      String path = batch ? "/v1/increments" : "/v1/counters/" + ns() + "/" + enc(goodId()) + "/increments";
      byte[] body = batch ? batchBody(goodItems(1 + r.nextInt(10))) : goodSingleBody();
      String query = switch (r.nextInt(12)) {
        case 0 -> "ack=" + pick("", "maybe", "COMMIT", "Accepted", "commit%20", "%20accepted", "1", "true", "null",
          "commit,accepted", "acccepted", "%E2%9C%93", "commit%00", "accepted%0A");
        case 1 -> "ack=" + enc(randomUnicode(1 + r.nextInt(10)));
        case 2 -> "ack=commit&ack=" + pick("commit", "accepted", "");
        case 3 -> "ack=accepted&ack=accepted" + "&ack=accepted".repeat(r.nextInt(5));
        case 4 -> "ack";
        case 5 -> "ack=" + pick("%ZZ", "%", "%E", "%G1", "%E9", "%C0%AF", "%FF%FE", "%u0041");
        case 6 -> "%61ck=" + pick("garbage", "Commit", "");
        case 7 -> "ack=commit&pad=" + "x".repeat(MAX_LINE + r.nextInt(12_000));
        case 8 -> "pad=" + "%41".repeat(MAX_LINE / 3 + r.nextInt(4_000)) + "&ack=accepted";
        case 9 -> "ack=" + randomAsciiQuery(1 + r.nextInt(30));
        case 10 -> "ack=accepted&" + "ack=x&".repeat(1 + r.nextInt(50)) + "z=1";
        default -> "ack=" + "a".repeat(100 + r.nextInt(3_000));
      };
      return http("query", HttpMethod.POST, path + "?" + query, writeAuth(), body, Set.of(400, 414));
    }

    /** A request bad for another reason, with odd, huge or many headers on top. */
    FuzzCase headerNoise() {
      FuzzCase base = switch (r.nextInt(4)) {
        case 0 -> badSingleBody();
        case 1 -> badBatch();
        case 2 -> unknownNamespace();
        default -> badBeacon();
      };
      List<String[]> headers = new ArrayList<>(base.headers());
      Set<Integer> expected = new java.util.HashSet<>(base.expected());
      switch (r.nextInt(8)) {
        case 0 -> headers.add(new String[] {"Content-Type", "application/json; " + "x".repeat(r.nextInt(2 * MAX_HEADERS))});
        case 1 -> headers.add(new String[] {"Content-Type", pick("", ";", ";;;", "application/json; charset=ebcdic",
          "application/json; charset=utf-16", "text/html", "*/*", "application/json, text/plain", "image/gif",
          "multipart/form-data", "multipart/form-data; boundary=fuzz", "multipart/mixed; boundary=x",
          "application/x-www-form-urlencoded", "application/x-ndjson; charset=latin1", "a/b/c")});
        case 2 -> {
          int count = 10 + r.nextInt(400);
          for (int i = 0; i < count; i++) {
            headers.add(new String[] {"X-Fuzz-" + i, randomAscii(1 + r.nextInt(40))});
          }
        }
        case 3 -> headers.add(new String[] {pick("X-Fuzz", "Cookie", "Referer", "User-Agent", "Accept"),
          randomAscii(1_000 + r.nextInt(2 * MAX_HEADERS))});
        case 4 -> {
          headers.add(new String[] {"Accept", pick("text/html", "application/xml", "*/*;q=0", "image/*", "")});
          headers.add(new String[] {"Accept-Encoding", pick("gzip", "br, deflate", "identity;q=0", "*")});
          headers.add(new String[] {"Content-Encoding", pick("gzip", "deflate", "br", "identity", "fuzz")});
        }
        case 5 -> {
          headers.add(new String[] {"Origin", pick("https://evil.example", "null", "http://shop.example", ORIGIN + ".evil",
            "https://shop.example:444", "*", "file://", "")});
          headers.add(new String[] {"Access-Control-Request-Method", pick("POST", "DELETE", "PUT")});
        }
        case 6 -> {
          headers.add(new String[] {"Upgrade", pick("websocket", "WebSocket", "TLS/1.2", "foo")});
          headers.add(new String[] {"Connection", pick("Upgrade", "upgrade, keep-alive", "keep-alive")});
          headers.add(new String[] {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="});
          headers.add(new String[] {"Sec-WebSocket-Version", pick("13", "8", "x")});
        }
        default -> {
          headers.add(new String[] {"X-Forwarded-For", randomAscii(1 + r.nextInt(100))});
          headers.add(new String[] {"X-HTTP-Method-Override", pick("GET", "DELETE", "PUT")});
          headers.add(new String[] {"Forwarded", "for=" + randomAscii(1 + r.nextInt(30))});
        }
      }
      // bad Content-Type or framing, rejected Origin, multipart, too large; a beacon's base may be one to a namespace
      // that is not public (404)
      expected.addAll(Set.of(400, 403, 415, 431));
      if (base.uri().startsWith("/v1/beacon/")) {
        expected.add(404);
      }
      return http("headers", base.method(), base.uri(), headers, base.body(), base.expected().isEmpty() ? ANY : expected);
    }

    /**
     * Beacons to a namespace that is not public (404, as an undeclared one), with any id. A public namespace counts
     * every beacon's id: a page path, or (invalid) when it cannot be stored.
     */
    FuzzCase badBeacon() {
      String id = r.nextBoolean() ? goodId() : badIdText();
      return http("beacon", pick(HttpMethod.GET, HttpMethod.POST), "/v1/beacon/" + pick("downloads", "likes") + "/"
        + enc(id), List.of(), new byte[0], Set.of(404, 414));
    }

    /** Bodies over limits.maxBodyBytes on every route that reads a body. */
    FuzzCase oversizedBody() {
      int size = MAX_BODY + 1 + (r.nextInt(4) == 0 ? r.nextInt(200_000) : r.nextInt(2_000));
      byte[] body = switch (r.nextInt(5)) {
        case 0 -> padded("{\"delta\":1,\"pad\":\"", "\"}", size);
        case 1 -> {
          StringBuilder items = new StringBuilder("[");
          while (items.length() < size) {
            items.append("{\"type\":\"likes\",\"id\":\"fz").append(items.length()).append("\",\"delta\":1},");
          }
          items.setCharAt(items.length() - 1, ']');
          yield items.toString().getBytes(StandardCharsets.UTF_8);
        }
        case 2 -> randomBytes(size);
        case 3 -> ("[" + "1,".repeat(size / 2) + "1]").getBytes(StandardCharsets.UTF_8);
        default -> padded("{\"delta\":", "1}", size);
      };
      String path = switch (r.nextInt(3)) {
        case 0 -> "/v1/counters/" + ns() + "/" + enc(goodId()) + "/increments" + maybeAck();
        case 1 -> "/v1/increments" + maybeAck();
        default -> "/v1/beacon/" + PUBLIC_NAMESPACE + "/" + enc(goodId());
      };
      return http("body-too-large", HttpMethod.POST, path, writeAuth(), body, Set.of(413));
    }

    // ---------------------------------------------------------------- raw socket

    FuzzCase raw() {
      int kind = r.nextInt(13);
      String target = "/v1/counters/" + ns() + "/" + enc(goodId()) + "/increments";
      // framing cases get a body that cannot be read as a chunk size either, so no reading of it waits for more bytes
      byte[] body = kind == 3 || kind == 4 ? utf8("{\"delta\":0.5}") : badSingleBodyBytes();
      String std = "Host: 127.0.0.1\r\nAuthorization: Bearer " + WRITE_TOKEN + "\r\nContent-Type: application/json\r\nConnection: close\r\n";
      String message = switch (kind) {
        case 0 -> pick("GARBAGE", "GET", "GET /", "/v1/increments HTTP/1.1", "POST  " + target + "  HTTP/1.1",
          "POST " + target + " HTTP/1.1 extra", "POST\t" + target + "\tHTTP/1.1", "HTTP/1.1 200 OK", "P\u0000ST " + target
          + " HTTP/1.1", randomAscii(1 + r.nextInt(60)), "POST " + target, " POST " + target + " HTTP/1.1",
          "POST " + target + " HTTP/1.1 HTTP/1.1") + "\r\n" + std + contentLength(body) + "\r\n";
        case 1 -> "POST " + target + " " + pick("HTTP/2.0", "HTTP/3", "HTTP/3.0", "HTTP/0.9", "HTTP/1.10", "http/1.1",
          "HTTP/1.1\u0001", "HTTP/", "HTTP/x.y", "HTCPCP/1.0", "HTTP/1.1/1.1", "HTTPS/1.1", "HTTP/11.1", "HTTP/-1.1",
          "HTTP/1.", "HTTP 1.1", "HTTP/1.1.1", "FOO/1.1") + "\r\n" + std + contentLength(body) + "\r\n";
        case 2 -> "POST " + target + " HTTP/1.1\r\n" + std + pick("Host localhost", "X-Foo", "NoColonHeader value", ":",
          ": empty-name", "X Foo: bar", "X-Foo : bar", "\tX-Folded: bar", " X-Folded: bar", "X-Foo:\u0000bar",
          "X-\u0001: v", "X-Foo: a\rb", "X-Foo\u00e9: v", "(X-Foo): v", "X-Foo:: v", "[]: v", "X-Foo: bar\r\n  folded")
          + "\r\n" + contentLength(body) + "\r\n";
        case 3 -> "POST " + target + " HTTP/1.1\r\n" + std + pick("Content-Length: abc", "Content-Length: -1",
          "Content-Length: 1, 2", "Content-Length: 99999999999999999999", "Content-Length: 0x10", "Content-Length: +5",
          "Content-Length: " + body.length + "\r\nContent-Length: " + (body.length + 1), "Content-Length: " + body.length
          + "\r\nTransfer-Encoding: chunked", "Transfer-Encoding: gzip", "Transfer-Encoding: chunked, chunked",
          "Transfer-Encoding: identity", "Transfer-Encoding: xchunked", "Content-Length: 1.0", "Content-Length:")
          + "\r\n\r\n";
        case 4 -> "POST " + target + " HTTP/1.1\r\n" + std + "Transfer-Encoding: chunked\r\n\r\n" + pick("zz", "-1",
          "FFFFFFFFFFFFFFFFFFFF", "1;ext=\u0000", " ", "0x5", "g") + "\r\nabcde\r\n0\r\n\r\n";
        case 5 -> "POST /" + "a".repeat(MAX_LINE + r.nextInt(3 * MAX_LINE)) + " HTTP/1.1\r\n" + std + contentLength(body)
          + "\r\n";
        case 6 -> {
          StringBuilder headers = new StringBuilder();
          if (r.nextBoolean()) {
            headers.append("X-Big: ").append("b".repeat(MAX_HEADERS + r.nextInt(2 * MAX_HEADERS))).append("\r\n");
          } else {
            while (headers.length() <= MAX_HEADERS + 1_000) {
              headers.append("X-Many-").append(headers.length()).append(": ").append(randomAscii(20 + r.nextInt(80)))
                .append("\r\n");
            }
          }
          yield "POST " + target + " HTTP/1.1\r\n" + std + headers + contentLength(body) + "\r\n";
        }
        // not pageviews: a public namespace's reads and resets take any page path
        case 7 -> pick("POST", "GET", "DELETE") + " /v1/counters/" + pick("downloads", "likes") + "/" + pick("caf\u00e9", "a b", "a\u0001b",
          "a\u007fb", "a\"b", "a<b>", "a{b}", "a|b", "a\\b", "a^b", "a`b", "\u4e2d\u6587", "a\u0000b", "a%zz", "%",
          "a\u00a0b") + (r.nextBoolean() ? "/increments" : "") + " HTTP/1.1\r\n" + std + contentLength(body) + "\r\n";
        case 8 -> pick("POST http://127.0.0.1" + target, "OPTIONS *", "CONNECT 127.0.0.1:80", "CONNECT " + target,
          "POST ?ack=x", "POST v1/increments", "POST //" + target, "POST http://[::1" + target, "POST \\v1\\increments",
          "GET *", "POST " + target + "#frag", "POST " + target + "?ack=commit#x", "POST https://evil.example" + target)
          + " HTTP/1.1\r\n" + std + contentLength(body) + "\r\n";
        case 9 -> pick("post", "Post", "FOO", "PROPFIND", "CONNECT", "PRI", "GET\u0000", "POS", "P" + "O".repeat(
          100 + r.nextInt(2000)) + "ST", "TRACE", "HEAD\u0001") + " " + target + " HTTP/1.1\r\n" + std
          + contentLength(body) + "\r\n";
        case 10 -> "POST " + target + " HTTP/" + pick("1.0", "1.1") + "\r\n" + pick("", "Host: a\r\nHost: b\r\n",
          "Host: \r\n", "Host: a b\r\n", "Host: [::1\r\n", "Host: " + "h".repeat(300) + "\r\n", "Host: 127.0.0.1:99999\r\n")
          + "Authorization: Bearer " + WRITE_TOKEN + "\r\nConnection: close\r\n" + pick("", "Expect: 100-continue\r\n",
          "Expect: garbage\r\n") + contentLength(body) + "\r\n";
        case 11 -> "POST " + target + " HTTP/1.1\r\n" + std.replace("\r\n", pick("\n", "\r\n", "\n\r")) + contentLength(body)
          + pick("\n", "\r\n");
        default -> {
          // a valid body, but no valid token: odd bytes in the Authorization header
          body = goodSingleBody();
          yield "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: " + pick(
            "Bearer " + WRITE_TOKEN + "\u00a0", "Bearer\u00a0" + WRITE_TOKEN, "Bearer " + WRITE_TOKEN + "\u0000",
            "Bearer " + WRITE_TOKEN.replace('0', '\u00d8'), "Bearer \u202e" + WRITE_TOKEN, "\u00c2\u00a0Bearer " + WRITE_TOKEN,
            "Bearer " + WRITE_TOKEN + "\r\n\tcontinued", "Bearer " + WRITE_TOKEN.substring(1))
            + "\r\n" + contentLength(body) + "\r\n";
        }
      };
      byte[] head = message.getBytes(StandardCharsets.UTF_8);
      if (kind == 7 && r.nextBoolean()) {
        head = message.getBytes(StandardCharsets.ISO_8859_1); // raw Latin-1 bytes instead of UTF-8
      }
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      bytes.writeBytes(head);
      if (kind != 4) {
        bytes.writeBytes(body); // for the framing cases: whatever the server makes of the length, this is what follows
      }
      if (kind == 3) {
        bytes.writeBytes(utf8("\r\n")); // ends the line, should the server read the body as a chunk size
      }
      Set<Integer> expected = switch (kind) {
        case 5 -> Set.of(414);
        case 6 -> Set.of(431);
        case 12 -> Set.of(400, 401);
        default -> ANY;
      };
      FuzzCase.Allowance allowance = switch (kind) {
        case 1 -> FuzzCase.Allowance.CORE_501;
        case 3, 4 -> FuzzCase.Allowance.CLOSE_ON_BAD_CHUNK;
        default -> FuzzCase.Allowance.NONE;
      };
      return FuzzCase.raw(index, "raw-" + rawKind(kind), bytes.toByteArray(), expected, allowance);
    }

    private String rawKind(int kind) {
      return List.of("request-line", "version", "header-syntax", "framing", "chunked", "line-too-long",
        "headers-too-large", "raw-path", "target-form", "method", "host", "line-endings", "auth").get(kind);
    }

    // ---------------------------------------------------------------- bodies

    /** A body the single-increment route must refuse. Never empty: an empty body means delta 1. */
    byte[] badSingleBodyBytes() {
      return switch (r.nextInt(15)) {
        case 0, 1, 2 -> utf8(deltaObject(badDelta()));
        case 3 -> utf8(pick("{", "}", "{\"delta\"}", "{\"delta\":}", "{delta:1}", "{'delta':1}", "{\"delta\":1,}",
          "{\"delta\":1}}", "{\"delta\":1} x", "{\"delta\":1}{\"delta\":1}", "{\"delta\" 1}", "{\"delta\":1 \"x\":2}",
          "\"delta\":1", "delta=1", "{\"delta\":[1,]}", "{\"delta\":tru}", "{\"delta\":nul}", "{\"delta\":\"open}",
          "{\"delta\":\"\\x41\"}", "{\"delta\":\"\\u12\"}", "\u0000", "{\"delta\":1]", "[\"delta\":1}", "{,}",
          "{\"delta\":1,,}", "{\"delta\"::1}", "{\"delta\":1}/*", "{\"delta\":1}//x\n]", "{\"\\delta\":1}",
          "{\"delta\":1}\u0000", "{\"delta\":--1}", "\"\"", "{\"delta\":1 /* open"));
        case 4 -> garbage();
        case 5 -> truncated("{\"delta\": " + (1 + r.nextInt(1000)) + "}");
        case 6 -> utf8(pick("null", "true", "false", "0", "1", "-5", "1.5", "\"delta\"", "[]", "[{\"delta\":1}]", "[1]",
          "\"{\\\"delta\\\":1}\"", "   ", "\n", "\t\r\n", "1 2", "[]{}", "{\"delta\":1}[]"));
        case 7 -> utf8(deltaObject(wrongTypeValue(3)));
        case 8 -> deepNesting();
        case 9 -> {
          int count = 1 + r.nextInt(r.nextBoolean() ? 50 : 30_000);
          yield utf8("{\"delta\":[" + "1,".repeat(count - 1) + "1]}");
        }
        case 10 -> unknownField();
        case 11 -> duplicateDelta();
        case 12 -> utf8("{\"delta\":" + pick("NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "inf", "+1", "01",
          "00", "-01", "0x10", ".5", "1.", "-.5", "1e", "1e+", "--1", "1_000", "1,5", "١", "１", "1 000", "0b1", "0o7",
          "\u0661", "1L", "1n", "2i", "undefined", "Ox1") + "}");
        case 13 -> badEncoding();
        default -> utf8(pick("\ufeff", "\ufeff\ufeff", "") + deltaObject(badDelta()));
      };
    }

    /** A batch body the batch route must refuse: one bad item among good ones, empty, too many, or not JSON. */
    byte[] badBatchBytes() {
      switch (r.nextInt(10)) {
        case 0, 1, 2, 3 -> {
          List<String> items = goodItems(r.nextInt(r.nextInt(4) == 0 ? 200 : 10));
          items.add(r.nextInt(items.size() + 1), badItem());
          return batchBody(items);
        }
        case 4 -> {
          return utf8(pick("", " ", "\n", "\r\n\r\n", "[]", "[ ]", " [] ", "\n\n\n", "\t", "[\n]", "[/* */]",
            "// comment\n", "/* c */"));
        }
        case 5 -> {
          int count = MAX_ITEMS + 1 + r.nextInt(2_000);
          String item = pick("{}", "1", "null");
          return utf8(r.nextBoolean() && item.equals("{}") ? (item + "\n").repeat(count)
            : "[" + (item + ",").repeat(count - 1) + item + "]");
        }
        case 6 -> {
          return utf8(pick("{}", "\"x\"", "1", "true", "null", "[null]", "[[]]", "[{}]", "{\"type\":\"likes\"}",
            "[{\"type\":\"likes\",\"id\":\"a\"}] [1]", "[{\"type\":\"likes\",\"id\":\"a\"}],", "[1]]", "[[1]",
            "{\"increments\":[{\"type\":\"likes\",\"id\":\"a\"}]}", "[{\"type\":\"likes\",\"id\":\"a\"}]{}",
            "{\"type\":\"likes\",\"id\":\"a\"}{\"type\":\"likes\",\"id\":\"b\"}", "[\"{\\\"type\\\":\\\"likes\\\"}\"]"));
        }
        case 7 -> {
          List<String> items = goodItems(1 + r.nextInt(20));
          String body = new String(batchBody(items), StandardCharsets.UTF_8);
          return truncatedBatch(body);
        }
        case 8 -> {
          return r.nextBoolean() ? garbage() : deepNesting();
        }
        default -> {
          List<String> lines = goodItems(r.nextInt(30));
          lines.add(r.nextInt(lines.size() + 1), pick("not json", "{", "{\"type\":", "[", "[]", "1", "null", "\"x\"",
            "{\"type\":\"likes\",\"id\":\"a\"} trailing", "{\"type\":\"likes\" \"id\":\"a\"}", "\u0000", "}{",
            "{\"type\":\"likes\",\"id\":\"a\",\"delta\":NaN}", new String(garbage(), StandardCharsets.UTF_8)
              .replace('\n', ' ').replace('\r', ' ')));
          return utf8(String.join(pick("\n", "\r\n"), lines) + pick("", "\n"));
        }
      }
    }

    /** One increment item that must be refused. */
    String badItem() {
      String ns = quote(ns());
      String id = quote(goodId());
      return switch (r.nextInt(11)) {
        // (an array item must hold a bad element too: alone on an NDJSON "line" it is a whole JSON-array batch)
        case 0 -> pick("1", "\"x\"", "null", "true", "[]", "[{\"type\":\"likes\",\"id\":\"a\"},1]", "-1", "{}");
        case 1 -> "{\"id\":" + id + "}";
        case 2 -> "{\"type\":" + pick("1", "null", "true", "[\"likes\"]", "{\"name\":\"likes\"}", "\"\"") + ",\"id\":" + id + "}";
        case 3 -> "{\"type\":" + quote(badNamespace()) + ",\"id\":" + id + "}";
        case 4 -> "{\"type\":" + ns + "}";
        case 5 -> "{\"type\":" + ns + ",\"id\":" + pick("1", "null", "true", "[\"a\"]", "{}", "\"\"", "1.5") + "}";
        case 6 -> "{\"type\":" + ns + ",\"id\":" + quote(badIdText()) + "}";
        case 7, 8 -> "{\"type\":" + ns + ",\"id\":" + id + ",\"delta\":" + (r.nextBoolean() ? badDelta() : wrongTypeValue(2)) + "}";
        case 9 -> "{\"type\":" + ns + ",\"id\":" + id + "," + quote(unknownFieldName()) + ":1}";
        default -> "{\"type\":" + ns + ",\"id\":" + id + ",\"delta\":" + pick("NaN", "Infinity", "+1", "01", ".5", "0x1")
          + "}";
      };
    }

    /** A delta, as JSON text, that the rules refuse: a fraction (close to zero too), out of range, or not a number. */
    String badDelta() {
      long max = 1_000_000;
      return switch (r.nextInt(12)) {
        case 0 -> pick("0.5", "-0.5", "0.001", "-0.001", "5e-1", "1E-5", "0.0001e0", "1e-400", "-1e-400", "1e-10", "0.1e0");
        case 1 -> (r.nextBoolean() ? "-" : "") + r.nextInt(1_000_000) + "." + (1 + r.nextInt(999)) ;
        case 2 -> pick("15e-1", "1e-1", "1.5e0", "123456789e-4", "-25E-1", "5e-7", "1.0000001e0", "999999.5");
        case 3 -> pick("1e7", "2e6", "-2E6", "1e400", "-1e400", "1E+19", "9.9e18", "1000001.0", "1.000001e6", "1e1000",
          "-1.0000001e6", "1e999999999", "-1e999999999", "1e-999999999", "1e2147483648", "1E-2147483649", "1.5e999999999",
          "1e+2147483647");
        case 4 -> Long.toString(max + 1 + (long) r.nextInt(Integer.MAX_VALUE));
        case 5 -> "-" + (max + 1 + (long) r.nextInt(Integer.MAX_VALUE));
        case 6 -> pick("1000001", "-1000001", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
          "-9223372036854775808", "-9223372036854775809", "18446744073709551616");
        case 7 -> (r.nextBoolean() ? "-" : "") + (1 + r.nextInt(9)) + digits(19 + r.nextInt(r.nextBoolean() ? 30 : 1_200));
        case 8 -> pick("1.0000000000000001", "0.99999999999999999", "999999.99999999999", "1000000.0000000001",
          "2.00000000000000000001", "-0.99999999999999999999", "4.9999999999999999999", "1.00000000000000000000001e0",
          "100.000000000000000000001", "1e-30", "12345.000000000000000000001", "-7.0000000000000000001");
        case 9 -> (1 + r.nextInt(1000)) + "." + "0".repeat(16 + r.nextInt(40)) + (1 + r.nextInt(9));
        case 10 -> pick("\"1\"", "\"0x1\"", "\"\"", "\"NaN\"", "\"1e2\"", "\" 1\"", "\"\\u0031\"", "true", "false", "null",
          "[1]", "{}", "{\"value\":1}", "[]", "\"" + "9".repeat(50) + "\"");
        default -> wrongTypeValue(3);
      };
    }

    /** Any JSON value that is not a number. */
    String wrongTypeValue(int depth) {
      int kind = r.nextInt(depth > 0 ? 7 : 4);
      return switch (kind) {
        case 0 -> "null";
        case 1 -> r.nextBoolean() ? "true" : "false";
        case 2 -> quote(r.nextBoolean() ? randomAscii(r.nextInt(20)) : randomUnicode(r.nextInt(10)));
        case 3 -> quote(Integer.toString(r.nextInt()));
        case 4 -> {
          StringBuilder array = new StringBuilder("[");
          for (int i = 0, n = r.nextInt(4); i < n; i++) {
            array.append(i > 0 ? "," : "").append(r.nextBoolean() ? Integer.toString(r.nextInt(100)) : wrongTypeValue(depth - 1));
          }
          yield array.append(']').toString();
        }
        default -> {
          StringBuilder object = new StringBuilder("{");
          for (int i = 0, n = r.nextInt(4); i < n; i++) {
            object.append(i > 0 ? "," : "").append(quote(i == 0 && r.nextBoolean() ? "delta" : randomAscii(1 + r.nextInt(8))))
              .append(':').append(r.nextBoolean() ? Integer.toString(r.nextInt(100)) : wrongTypeValue(depth - 1));
          }
          yield object.append('}').toString();
        }
      };
    }

    String deltaObject(String delta) {
      return pick("{\"delta\":%s}", "{ \"delta\" : %s }", "{\n  \"delta\": %s\n}", "{\"delta\":%s }", "\t{\"delta\":\t%s}\r\n")
        .replace("%s", delta);
    }

    byte[] deepNesting() {
      int depth = 1 + r.nextInt(r.nextBoolean() ? 50 : 5_000);
      String text = switch (r.nextInt(5)) {
        case 0 -> "{\"delta\":" + "[".repeat(depth) + "]".repeat(depth) + "}";
        case 1 -> "{\"delta\":" + "{\"a\":".repeat(depth) + "1" + "}".repeat(depth) + "}";
        case 2 -> "[" + "[".repeat(depth) + "]".repeat(depth) + "]";
        case 3 -> "{\"delta\":" + "[".repeat(depth);
        default -> "{\"a\":".repeat(depth) + "1" + "}".repeat(depth);
      };
      return utf8(text);
    }

    byte[] unknownField() {
      String name = unknownFieldName();
      return utf8(switch (r.nextInt(4)) {
        case 0 -> "{" + quote(name) + ":1}";
        case 1 -> "{\"delta\":" + (1 + r.nextInt(100)) + "," + quote(name) + ":" + wrongTypeValue(1) + "}";
        case 2 -> "{" + quote(name) + ":" + wrongTypeValue(1) + ",\"delta\":" + (1 + r.nextInt(100)) + "}";
        default -> "{\"delta\":2,\"type\":\"likes\",\"id\":\"a\"}";
      });
    }

    String unknownFieldName() {
      String name = switch (r.nextInt(8)) {
        case 0 -> pick("", "Delta", "DELTA", " delta", "delta ", "delta\u0000", "d\u00e9lta", "delta\u200b", "deltas",
          "value", "count", "id", "type", "__proto__", "constructor", "$delta", "delta.value", "delta[]");
        case 1 -> randomAscii(1 + r.nextInt(20));
        case 2 -> randomUnicode(1 + r.nextInt(10));
        case 3 -> "x".repeat(100 + r.nextInt(5_000));
        default -> "f" + r.nextInt(1000);
      };
      return name.equals("delta") ? "deltaX" : name;
    }

    /** The field given twice: refused, since a JSON object's names must be unique and last-wins would hide the first. */
    byte[] duplicateDelta() {
      String first = r.nextBoolean() ? Integer.toString(1 + r.nextInt(1000)) : badDelta();
      String second = r.nextBoolean() ? Integer.toString(1 + r.nextInt(1000)) : badDelta();
      return utf8("{\"delta\":" + first + ",\"delta\":" + second + (r.nextInt(4) == 0 ? ",\"delta\":1" : "") + "}");
    }

    byte[] badEncoding() {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      switch (r.nextInt(7)) {
        case 0 -> {
          out.writeBytes(utf8("{\"delta\":1"));
          out.writeBytes(randomHighBytes(1 + r.nextInt(8)));
          out.writeBytes(utf8("}"));
        }
        case 1 -> {
          out.writeBytes(utf8("{\"delta\":\""));
          out.writeBytes(pickBytes(new byte[] {(byte) 0xc3, 0x28}, new byte[] {(byte) 0xc0, (byte) 0xaf},
            new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, new byte[] {(byte) 0xff}, new byte[] {(byte) 0xf8, (byte) 0x88,
              (byte) 0x80, (byte) 0x80, (byte) 0x80}, new byte[] {(byte) 0xe2, (byte) 0x82}));
          out.writeBytes(utf8("\"}"));
        }
        case 2 -> {
          out.writeBytes(utf8("{\""));
          out.writeBytes(randomHighBytes(1 + r.nextInt(6)));
          out.writeBytes(utf8("\":1}"));
        }
        case 3 -> out.writeBytes(("{\"delta\":" + badDelta() + "}").getBytes(StandardCharsets.UTF_16));
        case 4 -> out.writeBytes(("{\"delta\":" + badDelta() + "}").getBytes(java.nio.charset.Charset.forName("UTF-32")));
        case 5 -> out.writeBytes(utf8("{\"delta\":\"\\ud800\"}"));
        default -> {
          out.writeBytes(new byte[] {(byte) 0xfe, (byte) 0xff});
          out.writeBytes(utf8("{\"delta\":0.5}"));
        }
      }
      return out.toByteArray();
    }

    /** Random bytes that cannot open a JSON object or array (nor a comment before one). */
    byte[] garbage() {
      byte[] bytes = randomBytes(1 + r.nextInt(r.nextBoolean() ? 40 : 4_000));
      while (bytes[0] == '{' || bytes[0] == '[' || bytes[0] == '/' || bytes[0] <= ' ' || (bytes[0] & 0xff) >= 0xef) {
        bytes[0] = (byte) ('A' + r.nextInt(26));
      }
      return bytes;
    }

    byte[] truncated(String json) {
      return utf8(json.substring(0, 1 + r.nextInt(json.length() - 1)));
    }

    /** A prefix of a batch that cannot itself be a complete batch (an array must close, an object line must close). */
    byte[] truncatedBatch(String body) {
      if (body.startsWith("[")) {
        return utf8(body.substring(0, 1 + r.nextInt(body.length() - 1)));
      }
      // NDJSON: cut inside the last line's object
      int lastLine = body.stripTrailing().lastIndexOf('\n') + 1;
      String last = body.substring(lastLine).stripTrailing();
      return utf8(body.substring(0, lastLine) + last.substring(0, 1 + r.nextInt(last.length() - 1)));
    }

    byte[] padded(String head, String tail, int size) {
      return utf8(head + "x".repeat(Math.max(0, size - head.length() - tail.length())) + tail);
    }

    // ---------------------------------------------------------------- valid parts

    byte[] goodSingleBody() {
      return utf8(pick("", "{\"delta\":" + (1 + r.nextInt(1000)) + "}", "{\"delta\":-" + (1 + r.nextInt(1000)) + "}", "{}"));
    }

    List<String> goodItems(int count) {
      List<String> items = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        items.add("{\"type\":" + quote(ns()) + ",\"id\":" + quote(goodId())
          + (r.nextBoolean() ? ",\"delta\":" + (1 + r.nextInt(1000)) : "") + "}");
      }
      return items;
    }

    /** Items as a JSON array or as NDJSON. */
    byte[] batchBody(List<String> items) {
      if (items.isEmpty() || r.nextBoolean()) {
        return utf8("[" + String.join(pick(",", ", ", ",\n"), items) + "]");
      }
      return utf8(String.join(pick("\n", "\r\n", "\n\n"), items) + pick("", "\n"));
    }

    String ns() {
      return NAMESPACES.get(r.nextInt(NAMESPACES.size()));
    }

    /** A valid id; it starts with letters so no dot segment or empty segment can come of it. */
    String goodId() {
      StringBuilder id = new StringBuilder("fz");
      for (int i = 0, n = 1 + r.nextInt(12); i < n; i++) {
        id.append(r.nextInt(4) == 0 ? ID_CHARS.charAt(r.nextInt(ID_CHARS.length())) : ALNUM.charAt(r.nextInt(ALNUM.length())));
      }
      return id.toString();
    }

    String badIdText() {
      return switch (r.nextInt(7)) {
        case 0 -> {
          StringBuilder id = new StringBuilder();
          int length = 256 + (r.nextBoolean() ? r.nextInt(50) : r.nextInt(1_200));
          while (id.length() < length) {
            id.append(ALNUM.charAt(r.nextInt(ALNUM.length())));
          }
          yield id.toString();
        }
        case 1, 2 -> {
          String id = goodId();
          int at = r.nextInt(id.length() + 1);
          yield id.substring(0, at) + BAD_ID_CHARS[r.nextInt(BAD_ID_CHARS.length)] + id.substring(at);
        }
        case 3 -> "fz" + randomUnicode(1 + r.nextInt(8));
        case 4 -> {
          StringBuilder id = new StringBuilder();
          for (int i = 0, n = 1 + r.nextInt(5); i < n; i++) {
            id.append(BAD_ID_CHARS[r.nextInt(BAD_ID_CHARS.length)]);
          }
          yield id.toString();
        }
        case 5 -> pick(" ", "\t") + goodId() + pick("", " ", "\n");
        default -> goodId() + (char) (r.nextBoolean() ? r.nextInt(0x20) : 0x7f + r.nextInt(0x21));
      };
    }

    String badNamespace() {
      String type = switch (r.nextInt(7)) {
        case 0 -> "zz" + randomFrom(ALNUM, 1 + r.nextInt(20));
        case 1 -> {
          char[] chars = ns().toCharArray();
          int at = r.nextInt(chars.length);
          chars[at] = Character.toUpperCase(chars[at]);
          for (int i = 0; i < chars.length; i++) {
            if (r.nextInt(3) == 0) {
              chars[i] = Character.toUpperCase(chars[i]);
            }
          }
          yield new String(chars);
        }
        case 2 -> pick(ns() + "_", "x" + ns(), ns() + ".", "pageview", "likess", "download", ns() + ns(), "-" + ns());
        case 3 -> pick("downl\u043eads", "\uff44ownloads", "likes\u200b", "p\u0430geviews", "likes\u0000", "lik\u00e9s");
        case 4 -> ns() + "x".repeat(60 + r.nextInt(r.nextBoolean() ? 100 : 3_000));
        case 5 -> pick(" " + ns(), ns() + " ", "down loads", "\t" + ns(), ns() + "\n");
        default -> pick("auth", "database", "limits", "namespaces", "http", "metrics", "health", "null", "undefined",
          "counters", "increments", "beacon", "v1", "*", "%", "~");
      };
      return NAMESPACES.contains(type) ? type + "x" : type;
    }

    // ---------------------------------------------------------------- small helpers

    FuzzCase http(String category, HttpMethod method, String uri, List<String[]> headers, byte[] body, Set<Integer> expected) {
      if (method == HttpMethod.GET && uri.startsWith("/v1/counters")
        && headers.stream().noneMatch(header -> header[0].equalsIgnoreCase("Authorization"))) {
        // reads need the read right when auth is on (the write token carries it): fuzz what follows the check
        List<String[]> withToken = new ArrayList<>(headers);
        withToken.add(new String[] {"Authorization", "Bearer " + WRITE_TOKEN});
        headers = withToken;
      }
      if (method == HttpMethod.POST && body.length > 0 && (uri.startsWith("/v1/increments") || uri.startsWith("/v1/counters/"))
        && headers.stream().noneMatch(header -> header[0].equalsIgnoreCase("Content-Type"))) {
        // a JSON client declares its body (one that does not is refused 415 before the body is read): fuzz what follows
        List<String[]> declared = new ArrayList<>(headers);
        declared.add(new String[] {"Content-Type", "application/json"});
        headers = declared;
      }
      return FuzzCase.http(index, category, method, uri, headers, body, expected);
    }

    List<String[]> writeAuth() {
      return bearer(WRITE_TOKEN);
    }

    List<String[]> bearer(String token) {
      return new ArrayList<>(List.<String[]>of(new String[] {"Authorization", "Bearer " + token}));
    }

    void maybeContentType(List<String[]> headers) {
      if (r.nextInt(3) == 0) {
        headers.add(new String[] {"Content-Type", pick("application/json", "text/plain", "application/x-ndjson",
          "application/octet-stream", "application/json; charset=utf-8", "multipart/form-data; boundary=fuzz",
          "application/x-www-form-urlencoded", "x", "application/json; charset=iso-8859-1")});
      }
    }

    String maybeAck() {
      return switch (r.nextInt(4)) {
        case 0 -> "?ack=accepted";
        case 1 -> "?ack=commit";
        default -> "";
      };
    }

    String contentLength(byte[] body) {
      return "Content-Length: " + body.length + "\r\n";
    }

    String junkSegment() {
      return "zz" + randomFrom(ALNUM + "-_~", 1 + r.nextInt(12)) + (r.nextInt(4) == 0 ? enc(randomUnicode(1 + r.nextInt(3))) : "");
    }

    String junkPath(int segments) {
      StringBuilder path = new StringBuilder();
      for (int i = 0; i < segments; i++) {
        path.append('/').append(junkSegment());
      }
      return path.toString();
    }

    String randomFrom(String alphabet, int length) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < length; i++) {
        text.append(alphabet.charAt(r.nextInt(alphabet.length())));
      }
      return text.toString();
    }

    /** Printable ASCII, as a header value can carry it. */
    String randomAscii(int length) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < length; i++) {
        text.append((char) (0x21 + r.nextInt(0x5e)));
      }
      return text.toString();
    }

    /** Printable ASCII for a query value, escaped where a query needs it. */
    String randomAsciiQuery(int length) {
      return enc(randomAscii(length));
    }

    String randomUnicode(int length) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < length; i++) {
        int[][] ranges = {{0xa0, 0xff}, {0x400, 0x4ff}, {0x4e00, 0x4fff}, {0x1f600, 0x1f64f}, {0x300, 0x36f},
          {0x200b, 0x200f}, {0x202a, 0x202e}, {0xfff0, 0xfffd}, {0x80, 0x9f}, {0x0590, 0x05ff}};
        int[] range = ranges[r.nextInt(ranges.length)];
        text.appendCodePoint(range[0] + r.nextInt(range[1] - range[0] + 1));
      }
      return text.toString();
    }

    byte[] randomBytes(int length) {
      byte[] bytes = new byte[length];
      r.nextBytes(bytes);
      return bytes;
    }

    byte[] randomHighBytes(int length) {
      byte[] bytes = new byte[length];
      for (int i = 0; i < length; i++) {
        bytes[i] = (byte) (0x80 + r.nextInt(0x80));
      }
      return bytes;
    }

    String digits(int count) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < count; i++) {
        text.append((char) ('0' + r.nextInt(10)));
      }
      return text.toString();
    }

    @SafeVarargs
    final <T> T pick(T... options) {
      return options[r.nextInt(options.length)];
    }

    HttpMethod pickOr(HttpMethod[] odd, HttpMethod... more) {
      int choice = r.nextInt(odd.length + more.length);
      return choice < odd.length ? odd[choice] : more[choice - odd.length];
    }

    byte[] pickBytes(byte[]... options) {
      return options[r.nextInt(options.length)];
    }
  }

  // ---------------------------------------------------------------- encoding

  static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** Percent-encodes everything but RFC 3986 unreserved characters, from the UTF-8 bytes. */
  static String enc(String text) {
    StringBuilder out = new StringBuilder();
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
        || c == '~') {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
          .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return out.toString();
  }

  /** A JSON string literal; non-ASCII is kept as is, controls are escaped. */
  static String quote(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }

}
