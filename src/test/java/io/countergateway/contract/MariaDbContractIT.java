package io.countergateway.contract;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;

@DisplayName("The gateway on MariaDB")
class MariaDbContractIT extends GatewayContractTest {
  @Override
  JsonObject database() {
    return TestDatabases.mariadb();
  }
}
