package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Connections killed around COMMIT, on embedded PostgreSQL")
class PostgresConnectionKillIT extends ConnectionKillContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.POSTGRES;
  }
}
