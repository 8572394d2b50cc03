package io.countergateway.faults;

import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A concurrent HTTP load of single increments of 1, each to a counter id of its own ({@code prefix + n}), so that the
 * table tells for every request whether it was counted (1), not counted (0), or counted twice (2). Each client sends
 * one request after another; the last {@code acceptedClients} clients use {@code ack=accepted}, the others
 * {@code ack=commit}. Bounded in requests per client and in time; it ends early when {@link #finish()} is called.
 */
final class IncrementLoad {
  /** What one request got: an HTTP status, or 0 when no answer came (connection refused or lost, client timeout). */
  static final class Outcome {
    final String id;
    final boolean accepted;
    volatile int status = -1;
    volatile String error;
    /** {@link System#nanoTime()} when the request was sent. */
    volatile long sentAt;
    /** {@link System#nanoTime()} when the answer (or the failure) came. */
    volatile long answeredAt;

    Outcome(String id, boolean accepted) {
      this.id = id;
      this.accepted = accepted;
    }
  }

  private static final Buffer BODY = Buffer.buffer("{\"delta\":1}");
  /** Far above the gateway's own request timeout: a request the gateway never answers shows up as status 0. */
  private static final long CLIENT_TIMEOUT_MS = 30_000;

  final String type;
  final String prefix;
  private final Vertx vertx;
  private final WebClient client;
  private final WebClient probe;
  private final int clients;
  private final int acceptedClients;
  private final int maxPerClient;
  private final long maxNanos;
  private final AtomicLong sequence = new AtomicLong();
  private final Queue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
  private volatile boolean finishing;
  private long deadline;

  IncrementLoad(Vertx vertx, int gatewayPort, String type, String prefix, int clients, int acceptedClients,
                int maxPerClient, long maxMillis) {
    this.vertx = vertx;
    this.type = type;
    this.prefix = prefix;
    this.clients = clients;
    this.acceptedClients = acceptedClients;
    this.maxPerClient = maxPerClient;
    this.maxNanos = TimeUnit.MILLISECONDS.toNanos(maxMillis);
    this.client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(gatewayPort)
      .setKeepAlive(true).setConnectTimeout(2_000), new PoolOptions().setHttp1MaxSize(clients));
    this.probe = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(gatewayPort)
      .setKeepAlive(true).setConnectTimeout(2_000), new PoolOptions().setHttp1MaxSize(4));
  }

  /** Starts every client; the future completes when all have stopped (never fails). */
  Future<Void> start() {
    deadline = System.nanoTime() + maxNanos;
    List<Future<Void>> done = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      Promise<Void> promise = Promise.promise();
      boolean accepted = c >= clients - acceptedClients;
      vertx.runOnContext(v -> next(accepted, 0, promise));
      done.add(promise.future());
    }
    return Future.all(done).mapEmpty();
  }

  /**
   * Waits until {@code count} requests sent from now on were answered 200, and as many 202 when the load has
   * accepted clients, or until {@code maxMillis}: a phase of the load as long as what the test holds it to needs
   * (traffic through each door before a fault, traffic answered again after a heal), and no longer.
   */
  void awaitAnswered(int count, long maxMillis) {
    long since = System.nanoTime();
    boolean committing = acceptedClients < clients;
    boolean accepting = acceptedClients > 0;
    while (Faults.millisSince(since) < maxMillis) {
      int committed = 0;
      int accepted = 0;
      for (Outcome outcome : outcomes) {
        if (outcome.sentAt - since > 0) {
          committed += outcome.status == 200 ? 1 : 0;
          accepted += outcome.status == 202 ? 1 : 0;
        }
      }
      if ((!committing || committed >= count) && (!accepting || accepted >= count)) {
        return;
      }
      Faults.sleep(50);
    }
  }

  /** Clients send no new request after this; the ones under way finish. */
  void finish() {
    finishing = true;
  }

  /** Every request sent, with what it got; read once the load has ended. */
  List<Outcome> outcomes() {
    return new ArrayList<>(outcomes);
  }

  /** The outcomes held against the table by the suite's one oracle ({@link Ledger}). */
  static Ledger.Verdict verdict(String label, List<Outcome> outcomes, Map<String, Long> sums) {
    return ledger(label, outcomes).against(sums);
  }

  /** The outcomes recorded in a ledger of the suite's one oracle. */
  static Ledger ledger(String label, List<Outcome> outcomes) {
    Ledger ledger = Ledger.named(label);
    outcomes.forEach(o -> ledger.http(o.id, o.accepted ? Ledger.Door.ACCEPTED : Ledger.Door.COMMIT, o.status, o.error));
    return ledger;
  }

  /** A client of its own for /health and /metrics, so that probes never queue behind the load's connections. */
  WebClient probe() {
    return probe;
  }

  private void next(boolean accepted, int sent, Promise<Void> done) {
    if (finishing || sent >= maxPerClient || System.nanoTime() - deadline > 0) {
      done.complete();
      return;
    }
    Outcome outcome = new Outcome(prefix + sequence.incrementAndGet(), accepted);
    outcomes.add(outcome);
    outcome.sentAt = System.nanoTime();
    client.post("/v1/counters/" + type + "/" + outcome.id + "/increments" + (accepted ? "?ack=accepted" : ""))
      .timeout(CLIENT_TIMEOUT_MS).putHeader("Content-Type", "application/json")
      .sendBuffer(BODY)
      .onComplete(result -> {
        long pauseMs;
        outcome.answeredAt = System.nanoTime();
        if (result.succeeded()) {
          outcome.error = errorCode(result.result());
          outcome.status = result.result().statusCode();
          // a refused client backs off a little, as Retry-After asks; accepted clients are paced lightly
          pauseMs = outcome.status == 503 ? 20 : accepted ? 2 : 0;
        } else {
          outcome.error = result.cause().toString();
          outcome.status = 0;
          pauseMs = 20;
        }
        if (pauseMs == 0) {
          next(accepted, sent + 1, done);
        } else {
          vertx.setTimer(pauseMs, id -> next(accepted, sent + 1, done));
        }
      });
  }

  /** The {@code error} code of a JSON error body; null for a success. */
  static String errorCode(HttpResponse<Buffer> response) {
    if (response.statusCode() < 400) {
      return null;
    }
    try {
      return new JsonObject(response.bodyAsString()).getString("error");
    } catch (RuntimeException e) {
      return "unparsable body: " + response.bodyAsString();
    }
  }
}
