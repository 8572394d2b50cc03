package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("A database outage under load, on MariaDB")
class MariaDbDatabaseOutageIT extends DatabaseOutageContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
