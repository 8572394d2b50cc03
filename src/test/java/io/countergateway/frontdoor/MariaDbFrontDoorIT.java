package io.countergateway.frontdoor;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;

@DisplayName("The front door on MariaDB")
class MariaDbFrontDoorIT extends FrontDoorContractTest {
  @Override
  JsonObject database() {
    return TestDatabases.mariadb();
  }
}
