package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("Flush sources closed, idle and restarted, on embedded PostgreSQL")
class PostgresFlushSourceIT extends FlushSourceContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.POSTGRES;
  }
}
