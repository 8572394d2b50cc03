package io.countergateway.internal.http;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Peers that forward clients without being trusted proxies")
class ForwardedPeersTest {
  private final Logger logger = (Logger) LoggerFactory.getLogger(ForwardedPeers.class);
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

  @BeforeEach
  void capture() {
    logged.start();
    logger.addAppender(logged);
  }

  @AfterEach
  void release() {
    logger.detachAppender(logged);
  }

  @Test
  @DisplayName("a peer forwarding many distinct clients is named once in the log, with the key to set, and in the summary")
  void warnsOnceNamingTheKey() {
    ForwardedPeers peers = new ForwardedPeers();
    for (int round = 0; round < 3; round++) {
      for (int client = 0; client < 50; client++) {
        peers.seen("10.1.2.3", "198.51.100." + client);
      }
    }
    assertThat(logged.list).hasSize(1);
    assertThat(logged.list.get(0).getFormattedMessage()).contains("10.1.2.3").contains("http.trustedProxies: [10.1.2.3]");
    JsonObject peer = peers.summary().getJsonObject(0);
    assertThat(peer.getString("peer")).isEqualTo("10.1.2.3");
    assertThat(peer.getLong("requests")).isEqualTo(150);
    assertThat(peer.getInteger("forwardedClients")).isEqualTo(ForwardedPeers.DISTINCT_CLIENTS_TO_WARN);
  }

  @Test
  @DisplayName("a client repeating one forwarded address is not a proxy: no warning, not listed")
  void oneClientIsNoProxy() {
    ForwardedPeers peers = new ForwardedPeers();
    for (int i = 0; i < 100; i++) {
      peers.seen("192.0.2.9", "203.0.113.7");
    }
    assertThat(logged.list).isEmpty();
    assertThat(peers.summary()).isEmpty();
  }

  @Test
  @DisplayName("holds at most a bounded number of peers, however many forward")
  void bounded() {
    ForwardedPeers peers = new ForwardedPeers();
    for (int peer = 0; peer < 1_000; peer++) {
      peers.seen("peer-" + peer, "a");
      peers.seen("peer-" + peer, "b");
    }
    assertThat(peers.summary().size()).isEqualTo(ForwardedPeers.MAX_PEERS);
  }
}
