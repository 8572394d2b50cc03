package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import java.util.concurrent.TimeUnit;

import static io.countergateway.faults.Faults.await;

/**
 * What every fault test class shares: one database per subclass, started before the first test, and a Vert.x of
 * the test's own for its load, probes and direct SQL, never the gateway's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FaultSuite {
  /**
   * Requests answered through each door that make a phase of a load ({@link IncrementLoad#awaitAnswered}): before a
   * fault, the gateway is writing and flushing; after a heal, it is answering again.
   */
  static final int ANSWERED = 100;

  Vertx tools;

  abstract FaultDatabase database();

  @BeforeAll
  void startDatabase() {
    database().config();
    tools = Vertx.vertx();
  }

  @AfterAll
  void closeTools() {
    await(tools.close(), 30);
  }

  /** Stops a gateway in a finally block: a test that failed half-way must not hang on it, nor hide its failure. */
  static void stopQuietly(GatewayFixture fixture) {
    fixture.stopGateway().toCompletionStage().toCompletableFuture().orTimeout(60, TimeUnit.SECONDS)
      .exceptionally(e -> null).join();
  }
}
