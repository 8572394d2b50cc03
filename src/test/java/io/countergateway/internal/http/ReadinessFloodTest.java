package io.countergateway.internal.http;

import io.countergateway.internal.bus.Addresses;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.runtime.GatewayState;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /health/ready} under a flood of anonymous requests: the database is asked once for all of them, so the
 * kubelet's probe among them reads what the database says, not a queue of pings timing out. The database's answer is
 * played by a consumer of the ping address that takes 300 ms.
 */
@DisplayName("Readiness under a flood")
class ReadinessFloodTest {
  private Vertx vertx;
  private WebClient client;
  private int port;
  private final AtomicInteger pings = new AtomicInteger();

  @BeforeEach
  void serve() {
    vertx = Vertx.vertx();
    vertx.eventBus().consumer(Addresses.PING, message -> {
      pings.incrementAndGet();
      vertx.setTimer(300, id -> message.reply(new JsonObject()));
    });
    JsonObject config = new JsonObject().put("namespaces", new JsonObject().put("pageviews", new JsonObject()));
    GatewayServices services = new GatewayServices(GatewayConfig.fromJson(config), new GatewayState(), new SimpleMeterRegistry());
    HttpServer server = await(vertx.createHttpServer().requestHandler(HttpApi.router(vertx, services, null))
      .listen(0, "127.0.0.1"));
    port = server.actualPort();
    client = WebClient.create(vertx, new io.vertx.ext.web.client.WebClientOptions(), new PoolOptions().setHttp1MaxSize(500));
  }

  @AfterEach
  void close() {
    await(vertx.close());
  }

  @Test
  @DisplayName("500 readiness requests at once share one ping, and all of them read 200")
  void oneDatabasePingForAFlood() {
    List<Future<HttpResponse<Buffer>>> answers = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      answers.add(client.get(port, "127.0.0.1", "/health/ready").send());
    }
    for (HttpResponse<Buffer> answer : await(Future.all(answers)).<HttpResponse<Buffer>>list()) {
      assertThat(answer.statusCode()).isEqualTo(200);
    }
    assertThat(pings.get()).as("pings the database answered").isLessThanOrEqualTo(2);
    // an answer stands for a second, then the next request asks again
    await(vertx.timer(1_100));
    assertThat(await(client.get(port, "127.0.0.1", "/health/ready").send()).statusCode()).isEqualTo(200);
    assertThat(pings.get()).isLessThanOrEqualTo(3);
  }
}
