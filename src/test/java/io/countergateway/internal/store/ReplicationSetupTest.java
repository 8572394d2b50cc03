package io.countergateway.internal.store;

import io.countergateway.config.ConfigException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ReplicationSetupTest {
  @Test
  @DisplayName("PostgreSQL with a synchronous standby and the server at synchronous_commit local: none lost, the gateway's sessions raised to on")
  void synchronousStandbyBelowOn() {
    ReplicationSetup setup = ReplicationSetup.postgres("local", "FIRST 1 (standby1)", 1, 1, 0);
    assertThat(setup.kind()).isEqualTo(ReplicationSetup.Kind.NONE_LOST);
    assertThat(setup.commitLevel()).isEqualTo("on");
    assertThat(setup.line()).contains("loses none", "synchronous_commit on (the server's is local)");
  }

  @Test
  @DisplayName("PostgreSQL with a synchronous standby: remote_write and off are raised to on, on and remote_apply are kept")
  void levelsRaisedOnlyBelowOn() {
    assertThat(ReplicationSetup.postgres("remote_write", "*", 1, 1, 0).commitLevel()).isEqualTo("on");
    assertThat(ReplicationSetup.postgres("off", "*", 1, 1, 0).commitLevel()).isEqualTo("on");
    assertThat(ReplicationSetup.postgres("on", "*", 1, 1, 0).commitLevel()).isNull();
    assertThat(ReplicationSetup.postgres("remote_apply", "*", 2, 1, 0).commitLevel()).isNull();
  }

  @Test
  @DisplayName("PostgreSQL with a quorum standby beside an asynchronous one: none lost by the synchronous, the asynchronous named as the risk")
  void quorumBesideAsynchronous() {
    ReplicationSetup setup = ReplicationSetup.postgres("on", "ANY 1 (a, b)", 2, 1, 0);
    assertThat(setup.kind()).isEqualTo(ReplicationSetup.Kind.NONE_LOST);
    assertThat(setup.line()).contains("1 synchronous standby(s) of 2", "one to an asynchronous standby can lose");
  }

  @Test
  @DisplayName("PostgreSQL with only asynchronous standbys: increments answered in the last moments can be lost, the level kept")
  void asynchronousStandbys() {
    ReplicationSetup setup = ReplicationSetup.postgres("on", "", 2, 0, 0);
    assertThat(setup.kind()).isEqualTo(ReplicationSetup.Kind.RECENT_LOST);
    assertThat(setup.commitLevel()).isNull();
    assertThat(setup.line()).contains("2 asynchronous standby(s)", "last moments", "synchronous_standby_names");
  }

  @Test
  @DisplayName("PostgreSQL with asynchronous standbys and database.keepUntilReplicated: the line says a failover loses no 202, and no 200 while the gateway runs on; without it, that it can lose both and how to keep them")
  void asynchronousStandbysKept() {
    ReplicationSetup kept = ReplicationSetup.postgres("on", "", 1, 0, 0, true);
    assertThat(kept.kind()).isEqualTo(ReplicationSetup.Kind.KEPT_UNTIL_REPLICATED);
    assertThat(kept.commitLevel()).isNull();
    assertThat(kept.line()).contains("1 asynchronous standby(s)", "database.keepUntilReplicated holds each flush",
      "loses no 202, and no 200 while this gateway runs on");
    assertThat(ReplicationSetup.postgres("on", "", 1, 0, 0, false).line())
      .contains("200 and 202 alike", "database.keepUntilReplicated");
    assertThat(ReplicationSetup.postgres("on", "s1", 2, 1, 0, true).line())
      .as("a synchronous standby beside an asynchronous one").contains("one to an asynchronous standby loses none either");
  }

  @Test
  @DisplayName("database.keepUntilReplicated with standbys whose positions the user cannot see is refused naming the key and pg_monitor")
  void keptButUnseenIsRefused() {
    assertThatThrownBy(() -> ReplicationSetup.postgres("on", "", 1, 0, 1, true))
      .isInstanceOf(ConfigException.class)
      .hasMessageContaining("database.keepUntilReplicated").hasMessageContaining("pg_monitor");
  }

  @Test
  @DisplayName("PostgreSQL with no standby: nothing to promote, and synchronous_commit off named as a crash risk")
  void noStandby() {
    ReplicationSetup setup = ReplicationSetup.postgres("off", "", 0, 0, 0);
    assertThat(setup.kind()).isEqualTo(ReplicationSetup.Kind.NO_STANDBY);
    assertThat(setup.commitLevel()).isNull();
    assertThat(setup.line()).contains("no standby", "synchronous_commit off");
  }

  @Test
  @DisplayName("PostgreSQL standbys whose sync_state the user cannot see: unseen, pg_monitor named, the level kept")
  void unseenStandbys() {
    ReplicationSetup setup = ReplicationSetup.postgres("local", "s1", 1, 0, 1);
    assertThat(setup.kind()).isEqualTo(ReplicationSetup.Kind.UNSEEN);
    assertThat(setup.commitLevel()).isNull();
    assertThat(setup.line()).contains("pg_monitor");
  }

  @Test
  @DisplayName("MariaDB: Galera and acknowledging semi-synchronous replicas lose none, binlog replicas the last commits, none seen says so")
  void mariadb() {
    assertThat(ReplicationSetup.mysql(Map.of("wsrep_on", "ON"), Map.of(), 0).kind())
      .isEqualTo(ReplicationSetup.Kind.NONE_LOST);
    ReplicationSetup semiSync = ReplicationSetup.mysql(Map.of("wsrep_on", "OFF", "rpl_semi_sync_master_enabled", "ON",
      "rpl_semi_sync_master_timeout", "10000"), Map.of("rpl_semi_sync_master_clients", "1"), 1);
    assertThat(semiSync.kind()).isEqualTo(ReplicationSetup.Kind.NONE_LOST);
    assertThat(semiSync.line()).contains("10000 ms");
    assertThat(ReplicationSetup.mysql(Map.of("rpl_semi_sync_master_enabled", "ON"),
      Map.of("rpl_semi_sync_master_clients", "0"), 1).kind()).isEqualTo(ReplicationSetup.Kind.RECENT_LOST);
    ReplicationSetup none = ReplicationSetup.mysql(Map.of(), Map.of(), 0);
    assertThat(none.kind()).isEqualTo(ReplicationSetup.Kind.NO_STANDBY);
    assertThat(none.line()).contains("PROCESS", "asynchronous replica can lose");
    assertThat(none.commitLevel()).isNull();
  }
}
