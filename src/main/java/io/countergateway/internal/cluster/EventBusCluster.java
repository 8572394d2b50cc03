package io.countergateway.internal.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.KubernetesConfig;
import com.hazelcast.config.NetworkConfig;
import io.countergateway.config.ClusterOptions;
import io.countergateway.config.ConfigException;
import io.countergateway.config.TlsFiles;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;

import java.util.ArrayList;
import java.util.List;

/**
 * Starts a Vert.x whose event bus spans the cluster: Hazelcast keeps the membership and who consumes which
 * address, Vert.x carries the messages over its own TCP connections. Gateways and the applications that send
 * to them join it the same way, so {@code CounterClient} works unchanged from another JVM.
 */
public final class EventBusCluster {
  private EventBusCluster() {
  }

  /**
   * A clustered Vert.x joined to the cluster {@code options} describe; failed, naming the key, when they lack the
   * cluster's certificate or secret (an application joining to send is held to the same rule as a gateway).
   */
  public static Future<Vertx> join(ClusterOptions options) {
    return join(options, new VertxOptions());
  }

  public static Future<Vertx> join(ClusterOptions options, VertxOptions vertxOptions) {
    try {
      options.requireMembersOnly();
    } catch (ConfigException e) {
      return Future.failedFuture(e);
    }
    vertxOptions.setEventBusOptions(eventBusOptions(options));
    return Vertx.builder().with(vertxOptions)
      .withClusterManager(new RepublishingClusterManager(hazelcastConfig(options), options.getMemberTimeoutSeconds()))
      .buildClustered();
  }

  /**
   * Every event-bus connection is TLS with certificates both ways: a member accepts only a peer whose certificate
   * chains to the cluster's CA, and connects only to such a peer. So a process that reaches the ports without the
   * certificate can neither send to a gateway nor be sent to: it never sees an increment, and no answer of its
   * acknowledges one, even if it got into Hazelcast's membership. That membership is held by the secret
   * ({@link #hazelcastConfig}).
   */
  static EventBusOptions eventBusOptions(ClusterOptions options) {
    TlsFiles tls = options.getTls();
    return new EventBusOptions()
      .setHost(options.getHost()).setPort(options.getBusPort())
      .setClusterPublicHost(options.getHost())
      .setSsl(true)
      .setKeyCertOptions(new PemKeyCertOptions().setCertPath(tls.getCertFile()).setKeyPath(tls.getKeyFile()))
      .setTrustOptions(new PemTrustOptions().addCertPath(tls.getCaFile()))
      .setClientAuth(ClientAuth.REQUIRED)
      .setTrustAll(false);
  }

  /**
   * Vert.x's own Hazelcast defaults (the maps holding subscriptions, each with a backup on another member) with
   * our network: one address, an explicit join, never multicast, and failure detection in seconds rather than
   * Hazelcast's minute, so a dead gateway's consumers leave the routing table while senders still wait. The cluster
   * name is derived from the secret ({@link ClusterOptions#getMembershipName()}): Hazelcast's open-source edition
   * admits a joining member, and a client, on that name alone, and runs no operation a non-member sends, so a process
   * without the secret can neither join nor read the maps (docs/security.md "Clustered event bus: members only").
   */
  static Config hazelcastConfig(ClusterOptions options) {
    Config config = ConfigUtil.loadConfig();
    config.setClusterName(options.getMembershipName());
    config.setProperty("hazelcast.logging.type", "slf4j");
    // Hazelcast prefixes every line with the cluster name, which admits its holders: the lines go without it
    config.setProperty("hazelcast.logging.details.enabled", "false");
    config.setProperty("hazelcast.phone.home.enabled", "false");
    // the gateway's own SIGTERM handler drains first, then closes Vert.x, which leaves the cluster
    config.setProperty("hazelcast.shutdownhook.enabled", "false");
    config.setProperty("hazelcast.wait.seconds.before.join", "0");
    // leaving waits for partition backups to move; with the other members gone it would wait ten minutes
    config.setProperty("hazelcast.graceful.shutdown.max.wait", "10");
    config.setProperty("hazelcast.local.localAddress", options.getHost());
    config.setProperty("hazelcast.socket.bind.any", "false");
    config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    // the cluster holds only event-bus subscriptions: 31 partitions (not 271) make joins and departures cheap
    config.setProperty("hazelcast.partition.count", "31");
    config.setProperty("hazelcast.health.monitoring.level", "OFF");
    config.setProperty("hazelcast.max.no.heartbeat.seconds", Integer.toString(options.getMemberTimeoutSeconds()));
    // after a network split each side goes on as a cluster of its own; only the split-brain merge check joins them
    // again, and by default it first runs 5 minutes after start, then every 2: a healed split would leave the
    // members apart (each side's consumers unreachable from the other) for minutes. Checked every member timeout,
    // a split heals within a few seconds of the network healing (docs/scaling.md "Network partitions").
    String mergeCheckSeconds = Integer.toString(options.getMemberTimeoutSeconds());
    config.setProperty("hazelcast.merge.first.run.delay.seconds", mergeCheckSeconds);
    config.setProperty("hazelcast.merge.next.run.delay.seconds", mergeCheckSeconds);

    NetworkConfig network = config.getNetworkConfig();
    network.setPort(options.getPort()).setPortAutoIncrement(false);
    network.setPublicAddress(options.getHost() + ":" + options.getPort());
    JoinConfig join = network.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    if (options.getJoin() == ClusterOptions.Join.KUBERNETES) {
      join.getTcpIpConfig().setEnabled(false);
      KubernetesConfig kubernetes = join.getKubernetesConfig().setEnabled(true);
      if (!options.getKubernetesServiceDns().isEmpty()) {
        kubernetes.setProperty("service-dns", options.getKubernetesServiceDns());
      } else {
        setIfPresent(kubernetes, "service-name", options.getKubernetesServiceName());
        setIfPresent(kubernetes, "namespace", options.getKubernetesNamespace());
      }
    } else {
      List<String> members = new ArrayList<>(options.getMembers());
      members.add(options.getHost() + ":" + options.getPort());
      join.getTcpIpConfig().setEnabled(true).setConnectionTimeoutSeconds(2).setMembers(members);
    }
    return config;
  }

  private static void setIfPresent(KubernetesConfig kubernetes, String property, String value) {
    if (!value.isEmpty()) {
      kubernetes.setProperty(property, value);
    }
  }
}
