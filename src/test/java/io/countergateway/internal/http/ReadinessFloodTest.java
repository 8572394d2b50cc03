package io.countergateway.internal.http;

import io.countergateway.internal.bus.Addresses;
import io.countergateway.config.GatewayConfig;
import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.runtime.GatewayState;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.countergateway.testing.Eventually;
import io.countergateway.testing.VirtualTimers;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /health/ready} under a flood of anonymous requests: the database is asked once for all of them, so the
 * kubelet's probe among them reads what the database says, not a queue of pings timing out. The database's answer is
 * played by a consumer of the ping address, at once or when the test says; how long an answer stands is read on
 * virtual time, which the test moves.
 */
@DisplayName("Readiness under a flood")
class ReadinessFloodTest {
  private Vertx vertx;
  private WebClient client;
  private int port;
  private final AtomicInteger pings = new AtomicInteger();
  /** Readiness requests the router has taken (each asked for the database's state as it was taken). */
  private final AtomicInteger asked = new AtomicInteger();
  /** The database thinks until the test lets it answer (else it answers at once). */
  private final AtomicBoolean holding = new AtomicBoolean();
  /** Pings the database has not answered yet. */
  private final Queue<Message<Object>> unanswered = new ConcurrentLinkedQueue<>();
  private final VirtualTimers timers = new VirtualTimers();

  @BeforeEach
  void serve() {
    vertx = Vertx.vertx();
    vertx.eventBus().consumer(Addresses.PING, message -> {
      pings.incrementAndGet();
      if (holding.get()) {
        unanswered.add(message);
      } else {
        message.reply(new JsonObject());
      }
    });
    JsonObject config = new JsonObject().put("namespaces", new JsonObject().put("pageviews", new JsonObject()));
    GatewayServices services = new GatewayServices(GatewayConfig.fromJson(config), new GatewayState(), new SimpleMeterRegistry());
    Router router = HttpApi.router(vertx, services, null, timers);
    HttpServer server = await(vertx.createHttpServer().requestHandler(request -> {
      router.handle(request);
      asked.incrementAndGet();
    }).listen(0, "127.0.0.1"));
    port = server.actualPort();
    client = WebClient.create(vertx, new io.vertx.ext.web.client.WebClientOptions(), new PoolOptions().setHttp1MaxSize(500));
  }

  @AfterEach
  void close() {
    await(vertx.close());
  }

  @Test
  @DisplayName("500 readiness requests at once ask the database once, and all of them read 200; the answer stands a second")
  void oneDatabasePingForAFlood() {
    List<Future<HttpResponse<Buffer>>> answers = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      answers.add(client.get(port, "127.0.0.1", "/health/ready").send());
    }
    for (HttpResponse<Buffer> answer : await(Future.all(answers)).<HttpResponse<Buffer>>list()) {
      assertThat(answer.statusCode()).isEqualTo(200);
    }
    assertThat(pings.get()).as("pings sent for 500 readiness requests within a second").isEqualTo(1);

    timers.advance(Duration.ofMillis(999));
    assertThat(await(client.get(port, "127.0.0.1", "/health/ready").send()).statusCode()).isEqualTo(200);
    assertThat(pings.get()).as("pings within the second the answer stands").isEqualTo(1);

    // past the second, the database is asked again: the requests that come while it thinks share that one ping
    timers.advance(Duration.ofMillis(2));
    holding.set(true);
    int before = asked.get();
    List<Future<HttpResponse<Buffer>>> whileItThinks = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      whileItThinks.add(client.get(port, "127.0.0.1", "/health/ready").send());
    }
    Eventually.until("50 readiness requests taken while the database thinks", () -> asked.get() == before + 50);
    assertThat(pings.get()).as("pings once the answer is a second old").isEqualTo(2);
    answerPings();
    for (HttpResponse<Buffer> answer : await(Future.all(whileItThinks)).<HttpResponse<Buffer>>list()) {
      assertThat(answer.statusCode()).isEqualTo(200);
    }
  }

  /** The database answers every ping asked so far. */
  private void answerPings() {
    for (Message<Object> ping; (ping = unanswered.poll()) != null; ) {
      ping.reply(new JsonObject());
    }
  }
}
