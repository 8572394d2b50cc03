package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Recovery after kills, stops and pruned flush sources, on embedded PostgreSQL")
class PostgresRecoveryIT extends RecoveryContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.POSTGRES;
  }
}
