package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("The journal across stops, kills and a full disk, on MariaDB")
class MariaDbJournalIT extends JournalContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.MARIADB;
  }
}
