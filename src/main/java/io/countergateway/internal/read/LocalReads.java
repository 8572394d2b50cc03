package io.countergateway.internal.read;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.bus.BusErrors;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.IncrementRules;
import io.countergateway.internal.runtime.GatewayServices;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Plain-counter reads of this gateway's own HTTP routes, handed straight to a read verticle's {@link CounterReader}
 * on that verticle's event loop, without the event bus: no request and reply objects to build, copy and time out per
 * read (measured under commit load: the bus hop and its JSON were about a fifth of a hot read's CPU). The reader is the
 * same one {@code counters.get} uses, so a read still shares a query only with reads that arrived before that query
 * was sent, and sees every commit acknowledged before it arrived. The answers, errors included, are those of
 * {@code counters.get}: a read waits at most {@code limits.requestTimeout} (then 504 {@code timeout}, as a bus request
 * that ran out of time), and a failure is the read verticle's ({@link ReadVerticle#readFailure}).
 * One per gateway ({@code GatewayState#shared}); empty until a read verticle has started, and then the routes use the
 * event bus.
 */
public final class LocalReads {
  private record Reader(Context context, CounterReader reader) {
  }

  /** What a bus request that ran out of time answers. */
  private static final ApiError TIMED_OUT =
    BusErrors.toApiError(new ReplyException(ReplyFailure.TIMEOUT, "the read did not answer in time"));
  private final List<Reader> readers = new CopyOnWriteArrayList<>();
  private final AtomicInteger next = new AtomicInteger();
  private final GatewayConfig config;
  private final IncrementRules rules;
  private final int maxReadIds;
  private final long timeoutMs;

  public LocalReads(GatewayConfig config, IncrementRules rules) {
    this.config = config;
    this.rules = rules;
    this.maxReadIds = config.getLimits().getMaxReadIds();
    this.timeoutMs = config.getLimits().getRequestTimeoutMs();
  }

  /** The gateway's one instance. */
  public static LocalReads of(GatewayServices services) {
    return services.state().shared(LocalReads.class, () -> new LocalReads(services.config(), services.rules()));
  }

  void add(Context context, CounterReader reader) {
    readers.add(new Reader(context, reader));
  }

  void remove(CounterReader reader) {
    readers.removeIf(registered -> registered.reader == reader);
  }

  /** Whether a read verticle serves reads here now: otherwise the event bus is the way to one. */
  public boolean serving() {
    return !readers.isEmpty();
  }

  /**
   * Whether {@link #read} answers reads of {@code type} as {@code counters.get} would: a declared namespace that is not
   * windowed (a windowed one's reads are range reads, {@code WindowedReads}) and a read verticle serving.
   */
  public boolean takes(String type) {
    if (readers.isEmpty()) {
      return false;
    }
    NamespaceOptions namespace = config.namespace(type);
    return namespace != null && !namespace.isWindowed();
  }

  /**
   * The values of {@code asked} (ids as the request named them, each once in the answer) of the plain namespace
   * {@code type} (see {@link #takes}), completed on the caller's context; a failure is the {@link ApiError} to answer.
   * Called on an event loop.
   */
  public Future<Map<String, Long>> read(String type, List<String> asked) {
    Context caller = Vertx.currentContext();
    List<String> ids;
    try {
      NamespaceOptions namespace = rules.namespace(type);
      if (asked.isEmpty() || asked.size() > maxReadIds) {
        throw ReadVerticle.invalidIds(maxReadIds);
      }
      ids = new ArrayList<>(asked.size());
      for (String id : asked) {
        ids.add(rules.readId(namespace, id));
      }
    } catch (ApiError refused) {
      return Future.failedFuture(refused);
    }
    List<Reader> now = readers;
    if (now.isEmpty()) {
      return Future.failedFuture(BusErrors.toApiError(new ReplyException(ReplyFailure.NO_HANDLERS, "no read verticle")));
    }
    Reader reader = now.get(Math.floorMod(next.getAndIncrement(), now.size()));
    Promise<Map<String, Long>> answer = Promise.promise();
    // the answer's deadline, as a bus request's: on the caller's event loop, where the answer completes too
    long deadline = caller.owner().setTimer(timeoutMs, fired -> answer.tryFail(TIMED_OUT));
    reader.context.runOnContext(v -> reader.reader.read(type, ids).onComplete(result -> caller.runOnContext(back -> {
      caller.owner().cancelTimer(deadline);
      if (result.succeeded()) {
        answer.tryComplete(keyedAsAsked(result.result(), asked, ids));
      } else {
        answer.tryFail(ReadVerticle.readFailure(type, ids, result.cause()));
      }
    })));
    return answer.future();
  }

  /** The values by the ids as asked (a public namespace's page id may be stored as another text). */
  private static Map<String, Long> keyedAsAsked(Map<String, Long> byStored, List<String> asked, List<String> stored) {
    if (asked.equals(stored)) {
      return byStored;
    }
    Map<String, Long> byAsked = new LinkedHashMap<>();
    for (int i = 0; i < asked.size(); i++) {
      byAsked.put(asked.get(i), byStored.get(stored.get(i)));
    }
    return byAsked;
  }
}
