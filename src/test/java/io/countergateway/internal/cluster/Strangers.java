package io.countergateway.internal.cluster;

import com.hazelcast.config.Config;
import io.countergateway.config.ClusterOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

/**
 * Clustered Vert.x instances that {@link EventBusCluster#join} refuses to build, as a process outside the gateway's
 * control would start them: Vert.x's own Hazelcast cluster manager, the gateway's network settings, a plain-TCP
 * event bus on loopback.
 */
final class Strangers {
  private Strangers() {
  }

  /**
   * A member of the cluster {@code member} describes (its Hazelcast configuration, the secret included) whose event bus
   * has no certificate: it is in the membership, and holds nothing the bus's TLS accepts.
   */
  static Future<Vertx> withoutCertificate(ClusterOptions member) {
    return join(EventBusCluster.hazelcastConfig(member));
  }

  /**
   * A process that knows everything of {@code member}'s configuration but the secret and the certificate: it joins by
   * the cluster's name ({@code cluster.name}, e.g. the default {@code counter-gateway}) as a Vert.x of its own would.
   */
  static Future<Vertx> byNameOnly(ClusterOptions member) {
    Config config = EventBusCluster.hazelcastConfig(member);
    config.setClusterName(member.getName());
    return join(config);
  }

  private static Future<Vertx> join(Config hazelcast) {
    EventBusOptions plain = new EventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1");
    return Vertx.builder().with(new VertxOptions().setEventBusOptions(plain))
      .withClusterManager(new HazelcastClusterManager(hazelcast)).buildClustered();
  }
}
