package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.math.BigInteger;
import java.util.UUID;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.millisSince;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * src/DESIGN.md §4 "Exactly once", a split racing a late copy of its first attempt: the first attempt of a flush is
 * held in transit (the chaos proxy) past batching.writeTimeout; the retry, on the slots of a new round, overflows one counter,
 * so the flush is split under new ids and the other counter is written and answered 200; then the held first attempt
 * reaches the database under the original id, on slots where nothing overflows. It must write nothing.
 *
 * <p>Slots: one ingest verticle, {@code maxInFlight} 1 and a namespace of 2 slots, so a coalescer's first flush takes
 * slot 1 and its retry slot 0 ({@code SlotPicker}). The overflowing counter holds nearly the maximum on slot 0 only.
 * On MariaDB the held statement is inside the transaction that inserted the flush id, whose row lock keeps the retry
 * waiting until the late copy is gone: the race cannot happen there, and the test shows that it does not.
 */
abstract class SplitRaceContract extends FaultSuite {
  private static final String TYPE = "split";
  private static final long NEAR_MAX = Long.MAX_VALUE - 5;

  @Test
  @DisplayName("a split flush and a late copy of its first attempt: the late copy writes nothing, the 200 is counted once")
  void splitRacingALateFirstAttempt() {
    FaultDatabase db = database();
    boolean postgres = db == FaultDatabase.POSTGRES;
    JsonObject direct = db.config();
    ChaosProxy proxy = new ChaosProxy(tools, direct.getInteger("port"), postgres);
    int proxyPort = await(proxy.start(), 30);
    String table = "fault_split_" + UUID.randomUUID().toString().substring(0, 6);
    JsonObject config = GatewayFixture.baseConfig(direct.copy().put("port", proxyPort), table);
    config.getJsonObject("http").put("instances", 1);
    config.getJsonObject("limits").put("requestTimeout", "20s");
    config.getJsonObject("namespaces").put(TYPE, new JsonObject().put("slots", 2));
    // a pending increment waits a second for company, so the committing request joins the accepted one's flush
    config.put("batching", new JsonObject().put("maxInFlight", 1).put("maxDelay", "1s").put("writeTimeout", "1s")
      .put("retryBackoff", "50ms").put("retryBackoffMax", "200ms"));
    GatewayFixture fixture = GatewayFixture.start(config);
    boolean gatewayStopped = false;
    WebClient client = WebClient.create(tools, new WebClientOptions().setDefaultHost("127.0.0.1")
      .setDefaultPort(fixture.gateway.port()));
    try {
      String suffix = UUID.randomUUID().toString().substring(0, 8);
      String written = "a-" + suffix;
      String overflowing = "b-" + suffix;
      await(fixture.sql().preparedQuery("INSERT INTO " + table + " (record_type, record_id, slot, count) VALUES ("
        + marks(postgres, 4) + ")").execute(Tuple.of(TYPE, overflowing, (short) 0, NEAR_MAX)), 30);

      proxy.holdNextChunkWith(written);
      HttpResponse<Buffer> accepted = await(client.post("/v1/counters/" + TYPE + "/" + overflowing + "/increments?ack=accepted")
        .sendJsonObject(new JsonObject().put("delta", 10)), 30);
      Future<HttpResponse<Buffer>> committing = client.post("/v1/counters/" + TYPE + "/" + written + "/increments")
        .timeout(60_000).sendJsonObject(new JsonObject().put("delta", 1));
      long sentAt = System.nanoTime();
      while (!committing.isComplete() && millisSince(sentAt) < 6_000) {
        sleep(20);
      }
      // the first attempt, held since it was sent, reaches the database now
      boolean released = proxy.releaseHeld();
      HttpResponse<Buffer> answer = await(committing, 60);
      sleep(2_000);
      double refusedRows = Faults.metric(client, "gateway_flush_refused_rows_total");
      await(fixture.stopGateway(), 60);
      gatewayStopped = true;

      BigInteger writtenSum = sum(table, written);
      BigInteger overflowingSum = sum(table, overflowing);
      System.out.println(db.label + " split race: accepted " + accepted.statusCode() + ", committing " + answer.statusCode()
        + " " + answer.bodyAsString() + ", held " + proxy.held + ", released " + released + ", refused rows "
        + (long) refusedRows + ", SUM written " + writtenSum + ", SUM overflowing " + overflowingSum.subtract(
          BigInteger.valueOf(NEAR_MAX)) + " above its start");

      assertThat(accepted.statusCode()).isEqualTo(202);
      assertThat(released).as("the first attempt was held in transit").isTrue();
      assertThat(answer.statusCode()).as("the committing request").isEqualTo(200);
      assertThat(writtenSum).as("SUM of the counter answered 200 once").isEqualTo(BigInteger.ONE);
      if (postgres) {
        assertThat(refusedRows).as("the retry overflowed and the flush was split").isPositive();
        assertThat(overflowingSum).as("the overflowing counter: its increment refused, the late copy wrote nothing")
          .isEqualTo(BigInteger.valueOf(NEAR_MAX));
      } else {
        assertThat(overflowingSum).as("the overflowing counter: refused, or written once with its whole flush")
          .isIn(BigInteger.valueOf(NEAR_MAX), BigInteger.valueOf(NEAR_MAX).add(BigInteger.TEN));
      }
    } finally {
      if (!gatewayStopped) {
        stopQuietly(fixture);
      }
      await(fixture.vertx.close(), 30);
      await(proxy.close(), 30);
    }
  }

  private static String marks(boolean postgres, int count) {
    StringBuilder marks = new StringBuilder();
    for (int i = 1; i <= count; i++) {
      marks.append(i > 1 ? ", " : "").append(postgres ? "$" + i : "?");
    }
    return marks.toString();
  }

  /** SUM(count) over the counter's slots, exactly: it may lie beyond the 64-bit range. */
  private BigInteger sum(String table, String id) {
    String query = "SELECT CAST(COALESCE(SUM(count), 0) AS CHAR(40)) FROM " + table + " WHERE record_type = '" + TYPE
      + "' AND record_id = '" + id + "'";
    return await(database().connect(tools).compose(conn -> conn.query(query).execute()
      .map(rows -> new BigInteger(rows.iterator().next().getValue(0).toString().trim())).eventually(conn::close)), 30);
  }
}
