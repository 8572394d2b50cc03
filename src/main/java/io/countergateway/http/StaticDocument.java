package io.countergateway.http;

import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RoutingContext;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A document of the jar served as it is (the beacon script, the OpenAPI document): read once, answered from memory
 * with a strong ETag of its content, so caches revalidate it with a 304 instead of downloading it again.
 */
final class StaticDocument {
  private final Buffer content;
  private final String contentType;
  private final String cacheControl;
  private final String etag;

  private StaticDocument(byte[] content, String contentType, String cacheControl) {
    this.content = Buffer.buffer(content);
    this.contentType = contentType;
    this.cacheControl = cacheControl;
    this.etag = "\"" + sha256(content).substring(0, 32) + "\"";
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
    ctx.response().putHeader("ETag", etag).putHeader("Cache-Control", cacheControl);
    String ifNoneMatch = ctx.request().getHeader("If-None-Match");
    if (ifNoneMatch != null && (ifNoneMatch.contains(etag) || ifNoneMatch.strip().equals("*"))) {
      ctx.response().setStatusCode(304).end();
      return;
    }
    ctx.response().putHeader("Content-Type", contentType).end(content);
  }

  private static String sha256(byte[] content) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
