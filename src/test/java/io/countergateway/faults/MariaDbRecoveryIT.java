package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Recovery after kills, stops and pruned flush sources, on MariaDB")
class MariaDbRecoveryIT extends RecoveryContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
