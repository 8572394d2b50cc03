package io.countergateway.frontdoor;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;

@DisplayName("The trackers' own scripts in headless Chromium, counted on embedded PostgreSQL")
class PostgresBrowserTrackersIT extends BrowserTrackersTest {
  @Override
  JsonObject database() {
    return TestDatabases.postgres();
  }
}
