package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Flush sources closed, idle and restarted, on MariaDB")
class MariaDbFlushSourceIT extends FlushSourceContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
