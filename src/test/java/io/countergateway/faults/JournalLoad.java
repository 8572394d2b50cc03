package io.countergateway.faults;

import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import static io.countergateway.faults.Faults.await;

/**
 * Loads that fill a gateway's journal with {@code ack=accepted} increments, every outcome recorded in a {@link Ledger}:
 * large batches (one large frame each, to grow segments to {@code journal.segmentBytes} in seconds) and single
 * increments (one small frame each, many frames in a segment).
 */
final class JournalLoad {
  private final WebClient client;
  private final String type;
  final Ledger ledger;

  JournalLoad(Vertx vertx, int port, String type, Ledger ledger) {
    this.client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port)
      .setKeepAlive(true).setConnectTimeout(2_000), new PoolOptions().setHttp1MaxSize(16));
    this.type = type;
    this.ledger = ledger;
  }

  /**
   * {@code count} batches, {@code concurrency} at a time, each of delta 1 on the same {@code ids} counters (so the
   * table stays small while the journal grows by a frame of about {@code ids} x the id's length per batch).
   */
  void batches(String prefix, int count, int ids, int idLength, int concurrency) {
    List<String> names = names(prefix, ids, idLength);
    Buffer encoded = body(names);
    run(count, concurrency, n -> batch(names, encoded));
  }

  /** As {@link #batches}, each batch on {@code ids} counters of its own: what the gateway holds grows with each. */
  void freshBatches(String prefix, int count, int ids, int idLength, int concurrency) {
    run(count, concurrency, n -> {
      List<String> names = names(prefix + n + "-", ids, idLength);
      return batch(names, body(names));
    });
  }

  private static List<String> names(String prefix, int ids, int idLength) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < ids; i++) {
      String id = prefix + i + "-";
      names.add(id + "x".repeat(Math.max(0, idLength - id.length())));
    }
    return names;
  }

  private Buffer body(List<String> names) {
    JsonArray body = new JsonArray();
    names.forEach(id -> body.add(new JsonObject().put("type", type).put("id", id).put("delta", 1)));
    return body.toBuffer();
  }

  private Future<Void> batch(List<String> names, Buffer encoded) {
    return client.post("/v1/increments").addQueryParam("ack", "accepted").timeout(30_000)
      .putHeader("Content-Type", "application/json").sendBuffer(encoded)
      .map(response -> {
        String error = IncrementLoad.errorCode(response);
        names.forEach(id -> ledger.http(id, Ledger.Door.ACCEPTED, response.statusCode(), error));
        return (Void) null;
      })
      .recover(failed -> {
        names.forEach(id -> ledger.http(id, Ledger.Door.ACCEPTED, 0, failed.toString()));
        return Future.succeededFuture();
      });
  }

  /** {@code count} single increments of 1 with {@code ack=accepted}, each on a counter of its own ({@code prefix + n}). */
  void singles(String prefix, int count, int concurrency) {
    run(count, concurrency, n -> {
      String id = prefix + n;
      return client.post("/v1/counters/" + type + "/" + id + "/increments").addQueryParam("ack", "accepted")
        .timeout(30_000).putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer("{\"delta\":1}"))
        .map(response -> {
          ledger.http(id, Ledger.Door.ACCEPTED, response.statusCode(), IncrementLoad.errorCode(response));
          return (Void) null;
        })
        .recover(failed -> {
          ledger.http(id, Ledger.Door.ACCEPTED, 0, failed.toString());
          return Future.succeededFuture();
        });
    });
  }

  private static void run(int count, int concurrency, IntFunction<Future<Void>> send) {
    AtomicInteger next = new AtomicInteger();
    List<Future<Void>> senders = new ArrayList<>();
    for (int s = 0; s < concurrency; s++) {
      senders.add(sendNext(count, next, send));
    }
    await(Future.all(senders), 180);
  }

  private static Future<Void> sendNext(int count, AtomicInteger next, IntFunction<Future<Void>> send) {
    int n = next.getAndIncrement();
    if (n >= count) {
      return Future.succeededFuture();
    }
    return send.apply(n).compose(v -> sendNext(count, next, send));
  }

  void close() {
    client.close();
  }
}
