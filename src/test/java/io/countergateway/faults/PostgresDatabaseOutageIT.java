package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("A database outage under load, on embedded PostgreSQL")
class PostgresDatabaseOutageIT extends DatabaseOutageContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.POSTGRES;
  }
}
