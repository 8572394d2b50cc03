package io.countergateway.internal.ingest;

import io.countergateway.internal.bus.Addresses;
import io.countergateway.internal.bus.BusClient;
import io.countergateway.internal.bus.IncrementConsumer;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.http.HttpApi;
import io.countergateway.internal.http.ServerCertificates;
import io.countergateway.internal.metrics.HttpRouteMeters;
import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.internal.store.UniqueSketches;
import io.countergateway.internal.uniques.UniqueVisitors;
import io.countergateway.internal.write.Coalescer;
import io.countergateway.internal.write.IdempotentIncrements;
import io.countergateway.internal.write.WritePath;
import io.countergateway.internal.write.journal.Journal;
import io.countergateway.internal.write.journal.JournalTarget;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * One per core by default, each on its own event loop: composes one {@link WritePath} (its coalescer, flush writer and
 * keyed writes) with the two doors that feed it, an HTTP server share and an event-bus consumer. Everything runs on this
 * verticle's event loop, so the coalescer needs no locks.
 */
public class IngestVerticle extends VerticleBase {
  private static final Logger LOG = LoggerFactory.getLogger(IngestVerticle.class);

  private final GatewayServices services;
  private final int index;
  private final IntSupplier lane;
  private final int instances;
  private WritePath writes;
  private MessageConsumer<Object> consumer;
  private HttpServer server;
  private UniqueSketches sketches;
  private UniqueVisitors uniques;

  /** {@code instances}: how many ingest verticles the gateway runs (a journal replay inherits the streams of others). */
  public IngestVerticle(GatewayServices services, int index, IntSupplier lane, int instances) {
    this.services = services;
    this.index = index;
    this.lane = lane;
    this.instances = instances;
  }

  /**
   * Opens the journal and replays it before anything else (src/DESIGN.md §4 "Journal"): the coalescer holds what it
   * carried over before the HTTP server listens, and readiness waits until the carried-over flushes settle.
   */
  @Override
  public Future<?> start() {
    GatewayConfig config = services.config();
    if (!config.getJournal().isEnabled()) {
      return vertx.executeBlocking(() -> {
        Journal.refuseIfHeld(config.getJournal());
        return null;
      }).compose(checked -> start(null));
    }
    return Journal.open(vertx, config.getJournal(), JournalTarget.of(config, services.state().databaseId()), index,
        instances, full -> services.state().writerShedding(full))
      .onSuccess(journal -> {
        boolean holdsWork = !journal.recovered().pending().isEmpty() || !journal.recovered().unsettled().isEmpty();
        if (holdsWork && journal.writtenFor().databaseId() != null) {
          services.state().journalHoldsWorkFor(journal.writtenFor().databaseId());
        }
      })
      .compose(this::start);
  }

  private Future<?> start(Journal journal) {
    GatewayConfig config = services.config();
    // one connection per flush in flight, and one for the flush fence's transaction (about once a second), so a
    // flush never waits for a connection behind it: such a wait can run past the pool's connection timeout under
    // load, which the writer takes for a database outage (readiness 503)
    CounterStore store = SqlStores.create(vertx, config.getDatabase(), "writes", config.getBatching().getMaxInFlight() + 1,
      config.getBatching().getWriteTimeoutMs());
    Coalescer coalescer = new Coalescer(vertx, store, config, services.state(), index, lane, System::nanoTime, journal);
    coalescer.registerMetrics(services.registry(), index);
    if (journal != null) {
      journal.registerMetrics(services.registry(), Tags.of("verticle", Integer.toString(index)));
      journal.failure().onSuccess(services.state()::journalFailed);
      coalescer.restore(journal.recovered());
    }
    coalescer.start();
    BusClient counters = BusClient.inProcess(vertx, config.getLimits().getRequestTimeoutMs());
    writes = new WritePath(coalescer,
      new IdempotentIncrements(vertx, config, services.state().keysInFlight(), services.registry()), counters, store,
      services.state().taken());
    if (config.hasUniques()) {
      // one connection: one merge at a time per verticle
      sketches = new UniqueSketches(vertx, config.getDatabase(), 1, config.getBatching().getWriteTimeoutMs());
      uniques = new UniqueVisitors(vertx, sketches, config, services.clock(), lane, services.registry(), index);
      uniques.start();
    }
    consumer = vertx.eventBus().consumer(Addresses.INCREMENT,
      new IncrementConsumer(writes, services.rules(), config.getLimits().getMaxBatchIncrements()));
    HttpServerOptions options = new HttpServerOptions()
      .setHost(config.getHttp().getHost()).setPort(config.getHttp().listenPort())
      .setTcpNoDelay(true).setCompressionSupported(false)
      // the gateway serves no WebSockets: without these Vert.x puts Netty's WebSocket compression handler on every
      // HTTP/1 connection, which throws past 128 pipelined requests, and Http1xServerConnection.exceptionCaught then
      // NPEs (as in eclipse-vertx/vert.x#4188; reproduced on a plain Vert.x 5.0.10 server), some 27 log lines each;
      // the options can go back to their defaults once that path no longer throws
      .setPerMessageWebSocketCompressionSupported(false).setPerFrameWebSocketCompressionSupported(false)
      // HTTP/1.1 only unless http.h2c: with cleartext HTTP/2 on, Vert.x waits for a connection's first bytes to tell the
      // protocols apart before it reports the connection, so a silent connection escapes the connection caps and the
      // header deadline (docs/security.md)
      .setHttp2ClearTextEnabled(config.getHttp().isH2c())
      .setMaxHeaderSize(config.getLimits().getMaxHeaderBytes())
      .setMaxInitialLineLength(Math.max(512, config.getLimits().getMaxHeaderBytes() / 2))
      .setIdleTimeout(config.getLimits().getIdleTimeoutSeconds()).setIdleTimeoutUnit(TimeUnit.SECONDS);
    HttpRouteMeters meters = new HttpRouteMeters(services.registry());
    return consumer.completion()
      .compose(registered -> ServerCertificates.configure(vertx, services, options))
      .compose(secured -> HttpApi.serve(vertx.createHttpServer(secured), vertx, services, writes, meters, uniques)
        .listen())
      .onSuccess(listening -> {
        server = listening;
        ServerCertificates.track(vertx, services, listening);
      });
  }

  /** The port this verticle's HTTP server is bound to, once started. */
  public int actualPort() {
    return server.actualPort();
  }

  /** Stops intake, answers the requests in flight, writes everything held, then closes the pools. */
  @Override
  public Future<?> stop() {
    long timeoutMs = services.config().getShutdownTimeoutMs();
    int heldAtStop = writes.countersHeld();
    Future<Void> drained = writes.drain()
      .timeout(timeoutMs, TimeUnit.MILLISECONDS)
      .onComplete(done -> {
        int held = writes.countersHeld();
        if (held > 0 && writes.journalUnreachable()) {
          // held only in memory and in files removed from journal.dir: a restart finds none of it
          services.state().drained(heldAtStop - held, 0);
          services.state().lostAtStop(held);
        } else if (done.succeeded() && writes.leftInJournal()) {
          services.state().drained(heldAtStop - held, 0);
          services.state().leftInJournal(held);
        } else {
          services.state().drained(heldAtStop - held, held);
        }
      })
      .onFailure(e -> LOG.error("shutdown: {} counters (or requests with idempotency keys) could not be written within "
        + "{} ms: {}", writes.countersHeld(), timeoutMs, e.toString()));
    if (server != null) {
      ServerCertificates.forget(vertx, services, server);
    }
    Future<Void> closed = server == null ? Future.succeededFuture() : server.shutdown(timeoutMs, TimeUnit.MILLISECONDS);
    // sketches drain once the server answers no more beacons: every visit it answered is merged, within the stop's bound
    Future<Void> sketchesDrained = uniques == null ? Future.succeededFuture() : closed.transform(shut -> uniques.drain())
      .timeout(timeoutMs, TimeUnit.MILLISECONDS)
      .onFailure(e -> LOG.error("shutdown: {} visitor sketches could not be merged within {} ms: {}",
        uniques.pendingSketches(), timeoutMs, e.toString()));
    return consumer.unregister()
      .transform(unregistered -> Future.join(drained, closed, sketchesDrained))
      .eventually(() -> sketches == null ? writes.close() : Future.join(writes.close(), sketches.close()).mapEmpty());
  }
}
