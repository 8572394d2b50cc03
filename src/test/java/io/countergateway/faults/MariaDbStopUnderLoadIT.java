package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Stopping the gateway under load, on embedded MariaDB")
class MariaDbStopUnderLoadIT extends StopUnderLoadFaultTest {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
