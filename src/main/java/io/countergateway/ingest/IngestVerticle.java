package io.countergateway.ingest;

import io.countergateway.GatewayServices;
import io.countergateway.batch.Ack;
import io.countergateway.batch.Coalescer;
import io.countergateway.bus.Addresses;
import io.countergateway.bus.BusErrors;
import io.countergateway.bus.CounterClient;
import io.countergateway.config.GatewayConfig;
import io.countergateway.http.HttpApi;
import io.countergateway.idempotency.IdempotentIncrements;
import io.countergateway.metrics.HttpRouteMeters;
import io.countergateway.model.ApiError;
import io.countergateway.model.Increment;
import io.countergateway.model.IncrementBatch;
import io.countergateway.store.CounterStore;
import io.countergateway.store.SqlStores;
import io.countergateway.store.UniqueSketches;
import io.countergateway.uniques.UniqueVisitors;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
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

  private static final JsonObject COMMITTED = new JsonObject().put("committed", true);

  private final GatewayServices services;
  private final int index;
  private final IntSupplier lane;
  private CounterStore store;
  private Coalescer coalescer;
  private MessageConsumer<Object> consumer;
  private HttpServer server;
  private CounterClient counters;
  private IdempotentIncrements keyed;
  private UniqueSketches sketches;
  private UniqueVisitors uniques;

  public IngestVerticle(GatewayServices services, int index, IntSupplier lane) {
    this.services = services;
    this.index = index;
    this.lane = lane;
  }

  @Override
  public Future<?> start() {
    GatewayConfig config = services.config();
    // one connection per flush in flight, and one for the flush fence's transaction (about once a second), so a
    // flush never waits for a connection behind it: under mixed read and commit load such a wait ran past the pool's
    // connection timeout, and each time the gateway reported a database outage (readiness 503) for nothing
    store = SqlStores.create(vertx, config.getDatabase(), "writes", config.getBatching().getMaxInFlight() + 1,
      config.getBatching().isExactlyOnce(), config.getBatching().getWriteTimeoutMs());
    coalescer = new Coalescer(vertx, store, config, services.state(), index, lane);
    coalescer.registerMetrics(services.registry(), index);
    coalescer.start();
    counters = new CounterClient(vertx, config.getLimits().getRequestTimeoutMs());
    keyed = new IdempotentIncrements(vertx, services);
    if (config.hasUniques()) {
      // one connection: one merge at a time per verticle
      sketches = new UniqueSketches(vertx, config.getDatabase(), 1, config.getBatching().getWriteTimeoutMs());
      uniques = new UniqueVisitors(vertx, sketches, config, services.clock(), lane, services.registry(), index);
      uniques.start();
    }
    consumer = vertx.eventBus().consumer(Addresses.INCREMENT, this::onIncrement);
    HttpServerOptions options = new HttpServerOptions()
      .setHost(config.getHttp().getHost()).setPort(config.getHttp().listenPort())
      .setTcpNoDelay(true).setCompressionSupported(false)
      .setMaxHeaderSize(config.getLimits().getMaxHeaderBytes())
      .setMaxInitialLineLength(Math.max(512, config.getLimits().getMaxHeaderBytes() / 2))
      .setIdleTimeout(config.getLimits().getIdleTimeoutSeconds()).setIdleTimeoutUnit(TimeUnit.SECONDS);
    HttpRouteMeters meters = new HttpRouteMeters(services.registry());
    return consumer.completion()
      .compose(registered -> vertx.createHttpServer(options)
        .requestHandler(HttpApi.requestHandler(vertx, services, coalescer, keyed, meters, uniques))
        .invalidRequestHandler(HttpApi.invalidRequestHandler(meters))
        .listen())
      .onSuccess(listening -> server = listening);
  }

  /** The port this verticle's HTTP server is bound to, once started. */
  public int actualPort() {
    return server.actualPort();
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
    Future<Void> keyedDrained = keyed.drain().timeout(timeoutMs, TimeUnit.MILLISECONDS)
      .onFailure(e -> LOG.error("shutdown: requests with idempotency keys still in flight after {} ms: {}", timeoutMs, e.toString()));
    Future<Void> sketchesDrained = uniques == null ? Future.succeededFuture() : uniques.drain()
      .timeout(timeoutMs, TimeUnit.MILLISECONDS)
      .onFailure(e -> LOG.error("shutdown: {} visitor sketches could not be merged within {} ms: {}",
        uniques.pendingSketches(), timeoutMs, e.toString()));
    return consumer.unregister()
      .transform(unregistered -> Future.join(drained, closed, keyedDrained, sketchesDrained))
      .eventually(() -> sketches == null ? store.close() : Future.join(store.close(), sketches.close()).mapEmpty());
  }

  /** A JSON object is one increment, a JSON array a batch taken whole or not at all. */
  private void onIncrement(Message<Object> message) {
    if (!message.isSend()) {
      // a publish reaches every ingest verticle and would be counted once per verticle
      LOG.warn("ignored an increment published to {}: use send or request", Addresses.INCREMENT);
      return;
    }
    boolean waitForCommit = message.replyAddress() != null;
    List<Increment> increments;
    String returned = null;
    String idempotencyKey;
    try {
      if (message.body() instanceof JsonArray items) {
        increments = IncrementBatch.of(items.stream().toList(), services.rules(),
          services.config().getLimits().getMaxBatchIncrements()).perCounter();
      } else if (message.body() instanceof JsonObject json) {
        JsonObject fields = json;
        if (json.containsKey("return")) {
          // a send gets no reply, so its "return" is checked but asks for nothing
          boolean returnsValue = services.rules().returnsValue(json.getValue("return"), true) && waitForCommit;
          returned = returnsValue && json.getValue("id") instanceof String id ? id : null;
          fields = json.copy();
          fields.remove("return");
        }
        increments = List.of(services.rules().increment(fields, ""));
      } else {
        throw ApiError.badRequest("invalid_request", "body", "the body must be {\"type\",\"id\",\"delta\"} or an array of them");
      }
      idempotencyKey = IdempotentIncrements.key(message.headers().get(Addresses.IDEMPOTENCY_KEY), Addresses.IDEMPOTENCY_KEY);
    } catch (ApiError e) {
      if (waitForCommit) {
        BusErrors.fail(message, e);
      }
      return;
    }
    String valueOf = returned;
    if (idempotencyKey != null) {
      keyed.submit(idempotencyKey, increments, waitForCommit, 200, COMMITTED.encode()).onComplete(answer -> {
        if (waitForCommit && answer.failed()) {
          BusErrors.fail(message, answer.cause());
        } else if (waitForCommit) {
          DeliveryOptions headers = answer.result().replayed()
            ? new DeliveryOptions().addHeader(Addresses.IDEMPOTENT_REPLAYED, "true") : new DeliveryOptions();
          reply(message, valueOf, new JsonObject(answer.result().body()), headers);
        }
      });
      return;
    }
    List<Ack> acks;
    try {
      acks = coalescer.addAll(increments, waitForCommit);
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
        reply(message, valueOf, COMMITTED.copy(), new DeliveryOptions());
      } else {
        BusErrors.fail(message, acks.stream().map(Ack::future).filter(Future::failed).findFirst()
          .map(Future::cause).orElse(done.cause()));
      }
    });
  }

  /** With add-and-get ({@code valueOf} set), the answer carries the value read after the commit. */
  private void reply(Message<Object> message, String valueOf, JsonObject answer, DeliveryOptions headers) {
    if (valueOf == null) {
      message.reply(answer, headers);
      return;
    }
    counters.valueAfterCommit(((JsonObject) message.body()).getString("type"), valueOf)
      .onComplete(value -> message.reply(answer.put("value", value.result()), headers));
  }

}
