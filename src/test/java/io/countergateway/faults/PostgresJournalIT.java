package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("The journal across stops, kills and a full disk, on embedded PostgreSQL")
class PostgresJournalIT extends JournalContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.POSTGRES;
  }
}
