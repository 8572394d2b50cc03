package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Stopping the gateway under load, on MariaDB")
class MariaDbStopUnderLoadIT extends StopUnderLoadContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
