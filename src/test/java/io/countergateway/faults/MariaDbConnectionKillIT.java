package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Connections killed around COMMIT, on embedded MariaDB")
class MariaDbConnectionKillIT extends ConnectionKillFaultTest {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
