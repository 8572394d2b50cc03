package io.countergateway.bench;

import io.countergateway.CounterClient;
import io.countergateway.CounterException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;

/**
 * The gateway over the event bus, in-process: writers call {@link CounterClient#increment}, whose future completes
 * once the increment is committed. With {@code --bus-window W} each writer keeps W increments in flight. With a
 * batch above 1 ({@code gateway-bus-batch}), each message is a JSON array of increments ({@link
 * CounterClient#incrementAll}), the way to feed the gateway at high rates.
 *
 * <p>{@code gateway-bus-accepted} is the fire-and-forget increment paced by its answer: each writer calls {@link
 * CounterClient#incrementTaken} and sends the next once the gateway has taken the last (the HTTP API's 202 with
 * {@code ack=accepted}), so a writer waits for the gateway as a Redis writer waits for its INCRBY, and what it holds
 * stays bounded by what the gateway takes (a 503 when full counts as failed, not counted). Its SUM is read after
 * the gateway stopped, that is after it flushed what it had taken.
 */
final class GatewayBus extends GatewayStrategy {
  private final int batch;
  private final boolean accepted;
  private CounterClient client;

  GatewayBus(BenchContext ctx, int batch) {
    this(ctx, batch, false);
  }

  private GatewayBus(BenchContext ctx, int batch, boolean accepted) {
    super(ctx, accepted ? "bench_gw_bus_accepted" : batch > 1 ? "bench_gw_bus_batch" : "bench_gw_bus");
    this.batch = batch;
    this.accepted = accepted;
  }

  /** Single increments answered once taken rather than committed. */
  static GatewayBus accepted(BenchContext ctx) {
    return new GatewayBus(ctx, 1, true);
  }

  @Override
  public String name() {
    return accepted ? "gateway-bus-accepted" : batch > 1 ? "gateway-bus-batch" : "gateway-bus";
  }

  @Override
  public String title() {
    int window = ctx.options().busWindow();
    return "gateway, event bus" + (batch > 1 ? " batch of " + batch : "") + (accepted ? " (ack=accepted" : " (ack=commit")
      + (window > 1 ? ", " + window + " in flight per writer" : "") + ")";
  }

  @Override
  public int incrementsPerOperation() {
    return batch;
  }

  @Override
  public int writerLoops(int concurrency) {
    return concurrency * ctx.options().busWindow();
  }

  @Override
  public Future<Void> setup() {
    return super.setup().onSuccess(started -> client = new CounterClient(ctx.vertx(), 30_000));
  }

  @Override
  public Future<Writer> writer() {
    return Future.succeededFuture(counters -> send(counters)
      .recover(failure -> Future.failedFuture(failure instanceof CounterException api && api.status() == 504
        ? new UnknownOutcome(api.getMessage(), api) : failure)));
  }

  private Future<Void> send(int[] counters) {
    if (accepted) {
      return client.incrementTaken(NAMESPACE, id(counters[0]), 1);
    }
    if (batch == 1) {
      return client.increment(NAMESPACE, id(counters[0]), 1);
    }
    JsonArray increments = new JsonArray(new ArrayList<>(counters.length));
    for (int counter : counters) {
      increments.add(new JsonObject().put("type", NAMESPACE).put("id", id(counter)).put("delta", 1));
    }
    return client.incrementAll(increments);
  }

  @Override
  public Future<Reader> reader() {
    return Future.succeededFuture(() -> client.get(NAMESPACE, id(0)));
  }
}
