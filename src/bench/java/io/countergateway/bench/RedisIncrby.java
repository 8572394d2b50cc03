package io.countergateway.bench;

import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A non-durable reference: {@code INCRBY key 1} on a Redis server (one connection per writer), with keys of this
 * run only. Skipped when no Redis answers. Whether Redis keeps anything across a crash depends on its persistence
 * settings; an acknowledged INCRBY is not on disk.
 */
final class RedisIncrby implements Strategy {
  private static final int CHUNK = 1_000;

  private final BenchContext ctx;
  private final String prefix;
  private Redis redis;

  RedisIncrby(BenchContext ctx) {
    this.ctx = ctx;
    this.prefix = "counter-gateway-bench:" + ctx.runId() + ":c";
  }

  @Override
  public String name() {
    return "redis";
  }

  @Override
  public String title() {
    return "Redis INCRBY (NOT durable)";
  }

  @Override
  public boolean durable() {
    return false;
  }

  private String key(int counter) {
    return prefix + counter;
  }

  @Override
  public Future<Void> setup() {
    int connections = ctx.options().concurrency() + ctx.options().readers() + 2;
    redis = Redis.createClient(ctx.vertx(), new RedisOptions().setConnectionString(ctx.options().redisUri())
      .setMaxPoolSize(connections).setMaxPoolWaiting(connections * 4));
    return redis.send(Request.cmd(Command.PING))
      .timeout(3, TimeUnit.SECONDS)
      .recover(failure -> Future.failedFuture(new Skipped("Redis not reachable at " + ctx.options().redisUri()
        + ": " + failure.getMessage())))
      .compose(pong -> deleteKeys(redis));
  }

  @Override
  public Future<Writer> writer() {
    return redis.connect().map(conn -> new Writer() {
      @Override
      public Future<Void> increment(int[] counters) {
        return conn.send(Request.cmd(Command.INCRBY).arg(key(counters[0])).arg(1L)).transform(result ->
          result.succeeded() ? Future.succeededFuture()
            : Future.failedFuture(new UnknownOutcome(String.valueOf(result.cause().getMessage()), result.cause())));
      }

      @Override
      public Future<Void> close() {
        return conn.close();
      }
    });
  }

  @Override
  public Future<Reader> reader() {
    return redis.connect().map(conn -> new Reader() {
      @Override
      public Future<Long> read() {
        return conn.send(Request.cmd(Command.GET).arg(key(0))).map(RedisIncrby::asLong);
      }

      @Override
      public Future<Void> close() {
        return conn.close();
      }
    });
  }

  private static long asLong(Response response) {
    return response == null ? 0L : response.toLong();
  }

  @Override
  public Future<Map<Integer, Long>> values(List<Integer> counters) {
    Request mget = Request.cmd(Command.MGET);
    counters.forEach(c -> mget.arg(key(c)));
    return redis.send(mget).map(response -> {
      Map<Integer, Long> values = new HashMap<>();
      for (int i = 0; i < counters.size(); i++) {
        values.put(counters.get(i), asLong(response.get(i)));
      }
      return values;
    });
  }

  @Override
  public Future<Long> total() {
    Future<Long> sum = Future.succeededFuture(0L);
    for (int from = 0; from < ctx.options().counters(); from += CHUNK) {
      List<Integer> chunk = new ArrayList<>();
      for (int c = from; c < Math.min(ctx.options().counters(), from + CHUNK); c++) {
        chunk.add(c);
      }
      sum = sum.compose(s -> values(chunk).map(v -> s + v.values().stream().mapToLong(Long::longValue).sum()));
    }
    return sum;
  }

  private Future<Void> deleteKeys(Redis client) {
    Future<?> chain = Future.succeededFuture();
    for (int from = 0; from < ctx.options().counters(); from += CHUNK) {
      Request del = Request.cmd(Command.DEL);
      for (int c = from; c < Math.min(ctx.options().counters(), from + CHUNK); c++) {
        del.arg(key(c));
      }
      chain = chain.compose(done -> client.send(del));
    }
    return chain.mapEmpty();
  }

  @Override
  public Future<Void> close() {
    if (redis == null) {
      return Future.succeededFuture();
    }
    Redis client = redis;
    redis = null;
    return deleteKeys(client).recover(e -> Future.succeededFuture()).eventually(client::close);
  }
}
