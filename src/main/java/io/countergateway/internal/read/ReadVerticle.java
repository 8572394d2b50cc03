package io.countergateway.internal.read;

import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.bus.Addresses;
import io.countergateway.internal.bus.BusErrors;
import io.countergateway.config.BatchingOptions;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.IncrementRules;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.Failures;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.internal.store.UniqueSketches;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Serves {@code counters.get}, {@code counters.reset} and {@code counters.ping}; the HTTP GETs come through here. */
public class ReadVerticle extends VerticleBase {
  private static final Logger LOG = LoggerFactory.getLogger(ReadVerticle.class);
  /** Ids one read query asks for; the MySQL store's largest prepared IN list is 1024. */
  private static final int IDS_PER_QUERY = 1000;
  private final GatewayServices services;
  private final boolean prunesFlushIds;
  private long pruneTimer = -1;
  private CounterStore store;
  /** The readiness check's own connection: never queued behind reads. */
  private CounterStore health;
  private HeavyReads heavy;
  private UniqueSketches sketches;
  private CounterReader reader;
  /** Where this gateway's HTTP routes find {@link #reader} without the event bus. */
  private LocalReads local;
  private IncrementRules rules;
  private WindowedReads windows;
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();

  /** {@code prunesFlushIds}: one read verticle per gateway deletes old flush ids on a schedule. */
  public ReadVerticle(GatewayServices services, boolean prunesFlushIds) {
    this.services = services;
    this.prunesFlushIds = prunesFlushIds;
  }

  @Override
  public Future<?> start() {
    int poolSize = services.config().getDatabase().getReadPoolSize();
    // a read nobody waits for any more is not worth a connection: bounded like the requests that ask for it
    // a read that times out fails that read; it does not replace the pool under the other reads (src/DESIGN.md §10)
    store = SqlStores.createForReads(vertx, services.config().getDatabase(), "reads", poolSize,
      services.config().getLimits().getRequestTimeoutMs());
    health = SqlStores.create(vertx, services.config().getDatabase(), "health", 1,
      Math.min(5_000, services.config().getLimits().getRequestTimeoutMs()));
    heavy = new HeavyReads(services.config().getReads().getMaxHeavyPerNamespace(),
      services.config().getReads().getCacheMillis(), System::nanoTime);
    reader = new CounterReader(store, poolSize, IDS_PER_QUERY,
      services.config().getReads().getCacheMillis(), services.config().getMemoryBounds().readCacheMaxCounters());
    rules = services.rules();
    local = LocalReads.of(services);
    local.add(context, reader);
    if (services.config().hasUniques()) {
      sketches = new UniqueSketches(vertx, services.config().getDatabase(), poolSize,
        services.config().getLimits().getRequestTimeoutMs());
    }
    windows = new WindowedReads(store, sketches, services.config(), services.clock());
    consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.GET, this::onGet));
    consumers.add(vertx.eventBus().<JsonObject>consumer(Addresses.RESET, this::onReset));
    consumers.add(vertx.eventBus().consumer(Addresses.PING, this::onPing));
    BatchingOptions batching = services.config().getBatching();
    if (prunesFlushIds) {
      pruneTimer = vertx.setPeriodic(batching.getPruneIntervalSeconds() * 1000L, id -> pruneFlushIds(batching));
    }
    return Future.all(consumers.stream().map(MessageConsumer::completion).toList());
  }

  private void pruneFlushIds(BatchingOptions batching) {
    store.pruneFlushIds(batching.getFlushIdRetentionSeconds()).onComplete(result -> {
      if (result.succeeded()) {
        LOG.debug("pruned {} flush ids older than {} s", result.result(), batching.getFlushIdRetentionSeconds());
      } else {
        LOG.warn("pruning flush ids failed, will try again: {}", result.cause().toString());
      }
    });
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(pruneTimer);
    local.remove(reader);
    return Future.all(consumers.stream().map(MessageConsumer::unregister).toList())
      .eventually(() -> sketches == null ? Future.join(store.close(), health.close()).mapEmpty()
        : Future.join(store.close(), health.close(), sketches.close()).mapEmpty());
  }

  private void onGet(Message<JsonObject> message) {
    try {
      JsonObject body = message.body();
      String type = body.getString("type");
      NamespaceOptions namespace = rules.namespace(type);
      if (WindowedReads.applies(namespace, body)) {
        onWindowedGet(message, namespace, body);
        return;
      }
      List<String> ids = idsOf(namespace, body);
      List<String> asked = askedIds(body);
      // "fresh": asked right after a commit (add-and-get); neither the cache nor a read already in flight may answer
      Future<Map<String, Long>> read = Boolean.TRUE.equals(body.getBoolean("fresh"))
        ? store.sum(type, ids).map(sums -> exactValues(ids, sums)) : reader.read(type, ids);
      read.onComplete(result -> {
        if (result.succeeded()) {
          JsonObject values = new JsonObject();
          result.result().forEach(values::put);
          message.reply(keyedAsAsked(new JsonObject().put("type", type).put("values", values), asked, ids));
        } else {
          BusErrors.fail(message, readFailure(type, ids, result.cause()));
        }
      });
    } catch (ApiError e) {
      BusErrors.fail(message, e);
    } catch (ClassCastException e) {
      BusErrors.fail(message, ApiError.badRequest("invalid_request", "ids", "type must be a string and ids a list of strings"));
    }
  }

  /**
   * What a failed read answers (of {@code ids}, or of a window when none are named), here and on the HTTP routes' own
   * way to the reader ({@link LocalReads}).
   */
  static ApiError readFailure(String type, List<String> ids, Throwable cause) {
    if (cause instanceof ArithmeticException overflow) {
      return new ApiError(500, "counter_overflow", overflow.getMessage(), null);
    }
    if (isTimeout(cause)) {
      return READ_TIMEOUT;
    }
    String what = ids.isEmpty() ? type : type + " " + (ids.size() == 1 ? ids.get(0) : ids.size() + " ids");
    LOG.warn("read of {} failed: {}", what, cause.toString());
    return ApiError.unavailable("database_unavailable", "the database did not answer the read");
  }

  /** A read of no ids, or of more than {@code limits.maxReadIds}. */
  static ApiError invalidIds(int maxReadIds) {
    return ApiError.badRequest("invalid_ids", "id", "give between 1 and " + maxReadIds + " ids");
  }

  /** Range, totals and top-N reads: checked whole before anything is read (see {@link WindowedReads}). */
  private void onWindowedGet(Message<JsonObject> message, NamespaceOptions namespace, JsonObject body) {
    String type = namespace.getName();
    if (WindowedReads.isPlainTop(namespace, body)) {
      int top = windows.top(body);
      heavy.read(type, body, () -> windows.plainTop(type, top)).onComplete(result -> {
        if (result.succeeded()) {
          message.reply(result.result());
        } else {
          replyReadFailure(message, type, result.cause());
        }
      });
      return;
    }
    boolean unique = WindowedReads.unique(namespace, body);
    WindowedReads.Range range = windows.range(namespace, body);
    Future<JsonObject> read;
    if (body.containsKey("top")) {
      int top = windows.top(body);
      read = heavy.read(type, body, () -> windows.top(type, top, range, unique));
    } else if (body.containsKey("ids")) {
      List<String> ids = idsOf(namespace, body);
      List<String> asked = askedIds(body);
      read = (HeavyReads.isHeavy(body) ? heavy.read(type, body, () -> windows.totals(type, ids, range, unique))
        : windows.totals(type, ids, range, unique)).map(reply -> keyedAsAsked(reply, asked, ids));
    } else {
      String asked = body.getString("id");
      String id = rules.readId(namespace, asked);
      read = (HeavyReads.isHeavy(body) ? heavy.read(type, body, () -> windows.one(type, id, range, unique))
        : windows.one(type, id, range, unique)).map(reply -> keyedAsAsked(reply, List.of(asked), List.of(id)));
    }
    read.onComplete(result -> {
      if (result.succeeded()) {
        message.reply(result.result());
      } else {
        replyReadFailure(message, type, result.cause());
      }
    });
  }

  private static void replyReadFailure(Message<JsonObject> message, String type, Throwable cause) {
    BusErrors.fail(message, cause instanceof ApiError refused ? refused : readFailure(type, List.of(), cause));
  }

  /** A read that ran out of time failed; the database is not down for that (no pool was replaced). */
  private static final ApiError READ_TIMEOUT = ApiError.unavailable("read_timeout",
    "the database did not answer the read within limits.requestTimeout");

  private static boolean isTimeout(Throwable cause) {
    return cause instanceof java.util.concurrent.TimeoutException || Failures.isStatementTimeout(cause);
  }

  /** A SUM beyond 64 bits fails the read (counter_overflow), as in {@link CounterReader}. */
  private static Map<String, Long> exactValues(List<String> ids, Map<String, BigInteger> sums) {
    Map<String, Long> values = new LinkedHashMap<>();
    for (String id : ids) {
      values.put(id, Failures.exactLong(sums.getOrDefault(id, BigInteger.ZERO)));
    }
    return values;
  }

  /** The ids of a read, each checked against its namespace's own id rules (those its increments or beacons were checked by). */
  private List<String> idsOf(NamespaceOptions namespace, JsonObject body) {
    List<String> ids = new ArrayList<>();
    JsonArray array = body.getJsonArray("ids");
    if (array == null) {
      ids.add(rules.readId(namespace, body.getString("id")));
    } else {
      for (Object id : array) {
        ids.add(rules.readId(namespace, (String) id));
      }
    }
    if (ids.isEmpty() || ids.size() > services.config().getLimits().getMaxReadIds()) {
      throw invalidIds(services.config().getLimits().getMaxReadIds());
    }
    return ids;
  }

  /** The ids as the request named them, in its order (checked by {@link #idsOf} first). */
  private static List<String> askedIds(JsonObject body) {
    JsonArray array = body.getJsonArray("ids");
    List<String> asked = new ArrayList<>();
    if (array == null) {
      asked.add(body.getString("id"));
    } else {
      array.forEach(id -> asked.add((String) id));
    }
    return asked;
  }

  /**
   * {@code reply}'s values (and unique visitors) keyed by the ids as asked: a public namespace's page id may be
   * stored as another text (its NFC form, or shortened past the column), and the client looks its answer up by the
   * id it sent.
   */
  private static JsonObject keyedAsAsked(JsonObject reply, List<String> asked, List<String> stored) {
    if (asked.equals(stored)) {
      return reply;
    }
    for (String field : List.of("values", "uniques")) {
      JsonObject byStored = reply.getJsonObject(field);
      if (byStored != null) {
        JsonObject byAsked = new JsonObject();
        for (int i = 0; i < asked.size(); i++) {
          if (byStored.containsKey(stored.get(i))) {
            byAsked.put(asked.get(i), byStored.getValue(stored.get(i)));
          }
        }
        reply.put(field, byAsked);
      }
    }
    return reply;
  }

  private void onReset(Message<JsonObject> message) {
    try {
      String type = message.body().getString("type");
      NamespaceOptions namespace = rules.namespace(type);
      CounterKey key = new CounterKey(type, rules.readId(namespace, message.body().getString("id")));
      store.reset(key).onComplete(result -> {
        if (result.succeeded()) {
          message.reply(new JsonObject());
        } else {
          BusErrors.fail(message, ApiError.unavailable("database_unavailable", "the database did not answer"));
        }
      });
    } catch (ApiError e) {
      BusErrors.fail(message, e);
    } catch (ClassCastException e) {
      BusErrors.fail(message, ApiError.badRequest("invalid_request", "id", "type and id must be strings"));
    }
  }

  private void onPing(Message<Object> message) {
    health.ping().onComplete(result -> {
      if (result.succeeded()) {
        message.reply(new JsonObject());
      } else {
        BusErrors.fail(message, ApiError.unavailable("database_unavailable", "the database is not reachable"));
      }
    });
  }
}
