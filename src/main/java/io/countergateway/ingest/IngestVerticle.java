package io.countergateway.ingest;

import io.countergateway.GatewayServices;
import io.countergateway.batch.Ack;
import io.countergateway.batch.Coalescer;
import io.countergateway.bus.Addresses;
import io.countergateway.bus.BusErrors;
import io.countergateway.config.GatewayConfig;
import io.countergateway.http.HttpApi;
import io.countergateway.model.ApiError;
import io.countergateway.model.IncrementBatch;
import io.countergateway.store.CounterStore;
import io.countergateway.store.SqlStores;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * One per core by default, each on its own event loop: an HTTP server share, an event-bus consumer and the {@link Coalescer} they both feed,
 * all on this verticle's event loop, so the coalescer needs no locks.
 */
public class IngestVerticle extends VerticleBase {
  private static final Logger LOG = LoggerFactory.getLogger(IngestVerticle.class);

  private final GatewayServices services;
  private final int index;
  private final IntSupplier lane;
  private CounterStore store;
  private Coalescer coalescer;
  private MessageConsumer<Object> consumer;
  private HttpServer server;

  public IngestVerticle(GatewayServices services, int index, IntSupplier lane) {
    this.services = services;
    this.index = index;
    this.lane = lane;
  }

  @Override
  public Future<?> start() {
    GatewayConfig config = services.config();
    store = SqlStores.create(vertx, config.getDatabase(), config.getBatching().getMaxInFlight(),
      config.getBatching().isExactlyOnce(), config.getBatching().getWriteTimeoutMs());
    coalescer = new Coalescer(vertx, store, config, services.state(), index, lane);
    coalescer.registerMetrics(services.registry(), index);
    coalescer.start();
    consumer = vertx.eventBus().consumer(Addresses.INCREMENT, this::onIncrement);
    HttpServerOptions options = new HttpServerOptions()
      .setHost(config.getHttp().getHost()).setPort(config.getHttp().getPort())
      .setTcpNoDelay(true).setCompressionSupported(false)
      .setMaxHeaderSize(config.getLimits().getMaxHeaderBytes())
      .setMaxInitialLineLength(Math.max(512, config.getLimits().getMaxHeaderBytes() / 2))
      .setIdleTimeout(config.getLimits().getIdleTimeoutSeconds()).setIdleTimeoutUnit(TimeUnit.SECONDS);
    return consumer.completion()
      .compose(registered -> vertx.createHttpServer(options)
        .requestHandler(HttpApi.router(vertx, services, coalescer))
        .invalidRequestHandler(HttpApi::invalidRequest)
        .listen())
      .onSuccess(listening -> server = listening);
  }

  /** Stops intake, answers the requests in flight, flushes everything pending, then closes the pool. */
  @Override
  public Future<?> stop() {
    long timeoutMs = services.config().getShutdownTimeoutMs();
    int pendingAtStop = coalescer.pendingKeys();
    Future<Void> drained = coalescer.drain()
      .timeout(timeoutMs, TimeUnit.MILLISECONDS)
      .onComplete(done -> services.state().drained(pendingAtStop - coalescer.pendingKeys(), coalescer.pendingKeys()))
      .onFailure(e -> LOG.error("shutdown: {} counters could not be flushed within {} ms: {}",
        coalescer.pendingKeys(), timeoutMs, e.toString()));
    Future<Void> closed = server == null ? Future.succeededFuture() : server.shutdown(timeoutMs, TimeUnit.MILLISECONDS);
    return consumer.unregister()
      .transform(unregistered -> Future.join(drained, closed))
      .eventually(() -> store.close());
  }

  /** A JSON object is one increment, a JSON array a batch taken whole or not at all. */
  private void onIncrement(Message<Object> message) {
    if (!message.isSend()) {
      // a publish reaches every ingest verticle and would be counted once per verticle
      LOG.warn("ignored an increment published to {}: use send or request", Addresses.INCREMENT);
      return;
    }
    boolean waitForCommit = message.replyAddress() != null;
    List<Ack> acks;
    try {
      if (message.body() instanceof JsonArray items) {
        IncrementBatch batch = IncrementBatch.of(items.stream().toList(), services.rules(),
          services.config().getLimits().getMaxBatchIncrements());
        acks = coalescer.addAll(batch.perCounter(), waitForCommit);
      } else if (message.body() instanceof JsonObject json) {
        Ack ack = coalescer.add(services.rules().increment(json, ""), waitForCommit);
        acks = ack == null ? List.of() : List.of(ack);
      } else {
        throw ApiError.badRequest("invalid_request", "body", "the body must be {\"type\",\"id\",\"delta\"} or an array of them");
      }
    } catch (ApiError e) {
      if (waitForCommit) {
        BusErrors.fail(message, e);
      }
      return;
    }
    if (!waitForCommit) {
      return;
    }
    Future.join(acks.stream().map(Ack::future).toList()).onComplete(done -> {
      if (done.succeeded()) {
        message.reply(new JsonObject().put("committed", true));
      } else {
        BusErrors.fail(message, acks.stream().map(Ack::future).filter(Future::failed).findFirst()
          .map(Future::cause).orElse(done.cause()));
      }
    });
  }
}
