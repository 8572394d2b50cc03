package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("A database outage under load, on embedded MariaDB")
class MariaDbDatabaseOutageIT extends DatabaseOutageFaultTest {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
