package io.countergateway.frontdoor;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;

@DisplayName("The tracker endpoints on embedded PostgreSQL")
class PostgresTrackersIT extends TrackersContractTest {
  @Override
  JsonObject database() {
    return TestDatabases.postgres();
  }
}
