package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Failures nobody listed, silent connections and split flushes, on embedded PostgreSQL")
class PostgresUnforeseenFailureIT extends UnforeseenFailureContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.POSTGRES;
  }
}
