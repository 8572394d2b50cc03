package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Connections killed around COMMIT, on MariaDB")
class MariaDbConnectionKillIT extends ConnectionKillContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
