package io.countergateway.internal.http;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.zip.GZIPOutputStream;

/**
 * A document of the jar served as it is (the beacon script, the OpenAPI document, the dashboard's files): read once,
 * compressed once, answered from memory with a strong ETag of each representation, so caches revalidate it with a 304
 * instead of downloading it again. A client that accepts gzip gets the compressed copy ({@code Vary: Accept-Encoding});
 * compressing once here, rather than by the server per response, costs the hot routes nothing.
 */
final class StaticDocument {
  private static final CharSequence VARY = HttpHeaders.createOptimized("Vary");
  private static final CharSequence ACCEPT_ENCODING = HttpHeaders.createOptimized("Accept-Encoding");

  private final Buffer content;
  /** Null when compressing does not make the document smaller. */
  private final Buffer gzipped;
  private final String contentType;
  private final String cacheControl;
  private final String etag;
  private final String gzipEtag;

  private StaticDocument(byte[] content, String contentType, String cacheControl) {
    this.content = Buffer.buffer(content);
    byte[] compressed = gzip(content);
    this.gzipped = compressed.length < content.length ? Buffer.buffer(compressed) : null;
    this.contentType = contentType;
    this.cacheControl = cacheControl;
    String digest = sha256(content).substring(0, 32);
    this.etag = "\"" + digest + "\"";
    this.gzipEtag = "\"" + digest + "-gzip\"";
  }

  static StaticDocument of(String resource, String contentType, String cacheControl) {
    try (InputStream in = StaticDocument.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + resource);
      }
      return new StaticDocument(in.readAllBytes(), contentType, cacheControl);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  void serve(RoutingContext ctx) {
    HttpServerResponse response = ctx.response();
    boolean compressed = gzipped != null && acceptsGzip(ctx.request().getHeader(ACCEPT_ENCODING));
    String tag = compressed ? gzipEtag : etag;
    response.putHeader("ETag", tag).putHeader("Cache-Control", cacheControl);
    if (gzipped != null) {
      response.putHeader(VARY, ACCEPT_ENCODING);
    }
    String ifNoneMatch = ctx.request().getHeader("If-None-Match");
    if (ifNoneMatch != null && (ifNoneMatch.contains(tag) || ifNoneMatch.strip().equals("*"))) {
      response.setStatusCode(304).end();
      return;
    }
    response.putHeader("Content-Type", contentType);
    if (compressed) {
      response.putHeader(HttpHeaders.CONTENT_ENCODING, "gzip").end(gzipped);
    } else {
      response.end(content);
    }
  }

  /** Whether {@code Accept-Encoding} names gzip (or {@code *}) without {@code q=0} (RFC 9110 §12.5.3). */
  static boolean acceptsGzip(String acceptEncoding) {
    if (acceptEncoding == null) {
      return false;
    }
    for (String coding : acceptEncoding.split(",")) {
      String[] parts = coding.split(";");
      String name = parts[0].strip().toLowerCase(Locale.ROOT);
      if (!name.equals("gzip") && !name.equals("x-gzip") && !name.equals("*")) {
        continue;
      }
      boolean refused = false;
      for (int i = 1; i < parts.length; i++) {
        String parameter = parts[i].strip().toLowerCase(Locale.ROOT);
        if (parameter.startsWith("q=")) {
          refused = parameter.substring(2).strip().matches("0(\\.0{0,3})?");
        }
      }
      if (!refused) {
        return true;
      }
    }
    return false;
  }

  private static byte[] gzip(byte[] content) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(content.length / 2 + 64);
    try (GZIPOutputStream gzip = new GZIPOutputStream(out)) {
      gzip.write(content);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  private static String sha256(byte[] content) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
