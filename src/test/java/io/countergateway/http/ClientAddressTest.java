package io.countergateway.http;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("The key a per-client limit counts under")
class ClientAddressTest {
  @Test
  @DisplayName("is an IPv4 address itself, and an IPv6 address's /64, however it is written")
  void keys() {
    assertThat(ClientAddress.key("198.51.100.7")).isEqualTo("198.51.100.7");
    assertThat(ClientAddress.key("2001:db8:1:2:aaaa::1")).isEqualTo("2001:db8:1:2::/64");
    assertThat(ClientAddress.key("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).isEqualTo("2001:db8:1:2::/64");
    assertThat(ClientAddress.key("2001:db8:1:3::1")).isNotEqualTo(ClientAddress.key("2001:db8:1:2::1"));
    assertThat(ClientAddress.key(null)).isEmpty();
  }
}
