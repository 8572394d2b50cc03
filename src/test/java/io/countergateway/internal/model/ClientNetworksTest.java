package io.countergateway.internal.model;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("The client and network keys a per-client limit counts under")
class ClientNetworksTest {
  @Test
  @DisplayName("an IPv4 address is itself and its /24; an IPv6 address its /64, /56 and /48, however it is written")
  void keys() {
    assertThat(ClientNetworks.of("198.51.100.7")).containsExactly("198.51.100.7", "198.51.100.0/24");
    assertThat(ClientNetworks.of("2001:db8:1:2aa:aaaa::1")).containsExactly("2001:db8:1:2aa::/64", "2001:db8:1:200::/56",
      "2001:db8:1::/48");
    assertThat(ClientNetworks.of("2001:0db8:0001:02aa:ffff:ffff:ffff:ffff")).containsExactly("2001:db8:1:2aa::/64",
      "2001:db8:1:200::/56", "2001:db8:1::/48");
    assertThat(ClientNetworks.client("2001:db8:1:3::1")).isNotEqualTo(ClientNetworks.client("2001:db8:1:2::1"));
    assertThat(ClientNetworks.of("::ffff:198.51.100.7")).as("IPv4-mapped").containsExactly("198.51.100.7",
      "198.51.100.0/24");
    assertThat(ClientNetworks.of(null)).containsExactly("");
    assertThat(ClientNetworks.of("not an address")).containsExactly("not an address");
  }

  @Test
  @DisplayName("a network gets clientsPerNetwork clients' worth, a /56 a quarter of it, a client one")
  void shares() {
    assertThat(ClientNetworks.share(0, 2, 16)).isEqualTo(1);
    assertThat(ClientNetworks.share(1, 2, 16)).isEqualTo(16);
    assertThat(ClientNetworks.share(1, 3, 16)).isEqualTo(4);
    assertThat(ClientNetworks.share(2, 3, 16)).isEqualTo(16);
    assertThat(ClientNetworks.share(1, 3, 2)).isEqualTo(1);
  }
}
