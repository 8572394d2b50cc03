package io.countergateway.fuzz;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;

@DisplayName("Fuzzing the HTTP API of the gateway on embedded PostgreSQL")
class PostgresHttpFuzzIT extends HttpFuzzTest {
  @Override
  JsonObject database() {
    return TestDatabases.postgres();
  }

  @Override
  int defaultCases() {
    return 12_000;
  }
}
