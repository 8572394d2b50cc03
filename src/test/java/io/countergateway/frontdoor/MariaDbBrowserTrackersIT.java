package io.countergateway.frontdoor;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;

@DisplayName("The trackers' own scripts in headless Chromium, counted on MariaDB")
class MariaDbBrowserTrackersIT extends BrowserTrackersTest {
  @Override
  JsonObject database() {
    return TestDatabases.mariadb();
  }
}
