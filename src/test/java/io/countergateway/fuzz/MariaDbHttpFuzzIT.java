package io.countergateway.fuzz;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;

@DisplayName("Fuzzing the HTTP API of the gateway on MariaDB")
class MariaDbHttpFuzzIT extends HttpFuzzTest {
  @Override
  JsonObject database() {
    return TestDatabases.mariadb();
  }

  /** The stream is the same HTTP layer over another store; fewer cases keep the pair of runs short. */
  @Override
  int defaultCases() {
    return 4_000;
  }
}
