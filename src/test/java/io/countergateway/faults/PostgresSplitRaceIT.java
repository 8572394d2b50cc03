package io.countergateway.faults;

import org.junit.jupiter.api.DisplayName;

@DisplayName("A split racing a late copy of its first attempt, on embedded PostgreSQL")
class PostgresSplitRaceIT extends SplitRaceContract {
  @Override
  FaultDatabase database() {
    return FaultDatabase.POSTGRES;
  }
}
