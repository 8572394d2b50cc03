package io.countergateway.bench;

import io.countergateway.bus.CounterClient;
import io.countergateway.model.ApiError;
import io.vertx.core.Future;

/**
 * The gateway over the event bus, in-process: writers call {@link CounterClient#increment}, whose future completes
 * once the increment is committed. With {@code --bus-window W} each writer keeps W increments in flight.
 */
final class GatewayBus extends GatewayStrategy {
  private CounterClient client;

  GatewayBus(BenchContext ctx) {
    super(ctx, "bench_gw_bus");
  }

  @Override
  public String name() {
    return "gateway-bus";
  }

  @Override
  public String title() {
    int window = ctx.options().busWindow();
    return "gateway, event bus (ack=commit" + (window > 1 ? ", " + window + " in flight per writer" : "") + ")";
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
    return Future.succeededFuture(counters -> client.increment(NAMESPACE, id(counters[0]), 1)
      .recover(failure -> Future.failedFuture(failure instanceof ApiError api && api.status() == 504
        ? new UnknownOutcome(api.getMessage(), api) : failure)));
  }

  @Override
  public Future<Reader> reader() {
    return Future.succeededFuture(() -> client.get(NAMESPACE, id(0)));
  }
}
