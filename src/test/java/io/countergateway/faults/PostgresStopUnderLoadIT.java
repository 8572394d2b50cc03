package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Stopping the gateway under load, on embedded PostgreSQL")
class PostgresStopUnderLoadIT extends StopUnderLoadContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.POSTGRES;
  }
}
