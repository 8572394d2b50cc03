package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Failures nobody listed, silent connections and split flushes, on embedded MariaDB")
class MariaDbUnforeseenFailureIT extends UnforeseenFailureFaultTest {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
