package io.countergateway.config;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("The journal's options")
class JournalOptionsTest {
  private static GatewayConfig fromYaml(String journal) {
    Map<String, Object> parsed = new Yaml(new SafeConstructor(new LoaderOptions()))
      .load("namespaces:\n  likes: {}\njournal:\n" + journal);
    return GatewayConfig.fromJson(new JsonObject(parsed));
  }

  @Test
  @DisplayName("fsync: off written unquoted, which YAML reads as false, is off as written")
  void unquotedOff() {
    assertThat(fromYaml("  fsync: off\n").getJournal().getFsync()).isEqualTo(JournalOptions.Fsync.OFF);
    assertThat(fromYaml("  fsync: 'off'\n").getJournal().getFsync()).isEqualTo(JournalOptions.Fsync.OFF);
    assertThat(fromYaml("  fsync: everyMs\n").getJournal().getFsync()).isEqualTo(JournalOptions.Fsync.EVERY_MS);
  }

  @Test
  @DisplayName("fsync: on (YAML true) is no policy: refused naming journal.fsync and the choices")
  void unquotedOn() {
    assertThatThrownBy(() -> fromYaml("  fsync: on\n")).isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("journal.fsync: must be one of always, everyMs, off, got 'true'");
  }
}
