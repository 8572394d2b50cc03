package io.countergateway.config;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("Knobs for tests and measurements are system properties, not configuration")
class KnobsTest {
  @AfterEach
  void clear() {
    System.clearProperty(Knobs.LANES_ENABLED);
  }

  @Test
  @DisplayName("lanes are leased unless -Dcountergateway.lanes.enabled=false says otherwise")
  void lanesByDefault() {
    assertThat(Knobs.lanesEnabled()).isTrue();
    System.setProperty(Knobs.LANES_ENABLED, "false");
    assertThat(Knobs.lanesEnabled()).isFalse();
  }

  @Test
  @DisplayName("a knob set to something else than true or false is refused naming the property")
  void badValueIsRefused() {
    System.setProperty(Knobs.LANES_ENABLED, "no");
    assertThatThrownBy(Knobs::lanesEnabled).isInstanceOf(ConfigException.class)
      .hasMessage("-Dcountergateway.lanes.enabled: must be true or false, got 'no'");
  }

  @Test
  @DisplayName("lanes.enabled is no configuration key")
  void notAKey() {
    assertThat(ConfigDef.find("lanes.enabled")).isNull();
  }
}
