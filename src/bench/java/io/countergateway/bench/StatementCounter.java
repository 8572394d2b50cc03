package io.countergateway.bench;

import io.vertx.core.VertxOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.spi.VertxMetricsFactory;
import io.vertx.core.spi.metrics.ClientMetrics;
import io.vertx.core.spi.metrics.VertxMetrics;

import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the statements every SQL (and Redis) client of the bench's Vert.x sends, the gateway's own pools
 * included, through the Vert.x metrics SPI: the SQL clients report each query they send to the server with its
 * text. Plain reads ({@code SELECT} without {@code FOR UPDATE}, Redis {@code GET}/{@code MGET}) are counted apart
 * from the statements that write.
 */
public final class StatementCounter implements VertxMetricsFactory {
  private final LongAdder writes = new LongAdder();
  private final LongAdder reads = new LongAdder();

  /** Statements that write (or lock for writing) so far. */
  public long writes() {
    return writes.sum();
  }

  /** Plain reads so far. */
  public long reads() {
    return reads.sum();
  }

  @Override
  public VertxMetrics metrics(VertxOptions options) {
    return new VertxMetrics() {
      @Override
      public ClientMetrics<?, ?, ?> createClientMetrics(SocketAddress remoteAddress, String type, String namespace) {
        if (!"sql".equals(type) && !"redis".equals(type)) {
          return null;
        }
        return new ClientMetrics<Object, Object, Object>() {
          @Override
          public Object requestBegin(String uri, Object request) {
            (isRead(uri) ? reads : writes).increment();
            return null;
          }
        };
      }
    };
  }

  static boolean isRead(String statement) {
    if (statement == null) {
      return false;
    }
    String s = statement.stripLeading();
    if (s.regionMatches(true, 0, "get", 0, 3) || s.regionMatches(true, 0, "mget", 0, 4)) {
      return s.length() <= 4 || !Character.isLetter(s.charAt(s.regionMatches(true, 0, "get", 0, 3) ? 3 : 4));
    }
    return s.regionMatches(true, 0, "select", 0, 6) && !s.toLowerCase(Locale.ROOT).contains("for update");
  }
}
