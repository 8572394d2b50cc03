package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Flush sources closed, idle and restarted, on embedded MariaDB")
class MariaDbFlushSourceIT extends FlushSourceFaultTest {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
