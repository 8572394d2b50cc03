package io.countergateway.internal.beacon;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;

@DisplayName("Beacon limits on MariaDB")
class MariaDbBeaconLimitsIT extends BeaconLimitsContract {
  @Override
  JsonObject database() {
    return TestDatabases.mariadb();
  }
}
