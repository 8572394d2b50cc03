package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Failures nobody listed, silent connections and split flushes, on MariaDB")
class MariaDbUnforeseenFailureIT extends UnforeseenFailureContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
