package io.countergateway.internal.cluster;

import com.hazelcast.config.Config;
import io.vertx.core.Completable;
import io.vertx.core.Vertx;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Vert.x's Hazelcast cluster manager, which also puts this member's event-bus registrations back into the cluster's
 * subscription map every {@code republishSeconds}. After a network split heals, Hazelcast merges the two sides, and a
 * member of the larger side can come out of the merge with its registrations gone from that map (NetworkPartitionIT
 * heals a split 2 | 1 into this state): every sender then skips a gateway that is alive and reachable, until it
 * restarts. The map holds a set per address, so
 * putting a registration that is there already changes nothing and tells no one; putting one that went missing
 * makes every member route to it again.
 */
final class RepublishingClusterManager extends HazelcastClusterManager {
  private final long republishMillis;
  private final Map<String, Set<RegistrationInfo>> own = new ConcurrentHashMap<>();
  private Vertx vertx;
  private long timer = -1;

  RepublishingClusterManager(Config config, int republishSeconds) {
    super(config);
    this.republishMillis = republishSeconds * 1_000L;
  }

  @Override
  public void init(Vertx vertx) {
    super.init(vertx);
    this.vertx = vertx;
  }

  @Override
  public void join(Completable<Void> promise) {
    super.join((joined, failure) -> {
      if (failure == null) {
        timer = vertx.setPeriodic(republishMillis, republishMillis, id -> republish());
      }
      promise.complete(joined, failure);
    });
  }

  @Override
  public void addRegistration(String address, RegistrationInfo registration, Completable<Void> promise) {
    if (!registration.localOnly()) {
      own.computeIfAbsent(address, a -> ConcurrentHashMap.newKeySet()).add(registration);
    }
    super.addRegistration(address, registration, promise);
  }

  @Override
  public void removeRegistration(String address, RegistrationInfo registration, Completable<Void> promise) {
    own.computeIfPresent(address, (a, registrations) -> {
      registrations.remove(registration);
      return registrations.isEmpty() ? null : registrations;
    });
    super.removeRegistration(address, registration, promise);
  }

  private void republish() {
    if (!isActive()) {
      return;
    }
    own.forEach((address, registrations) -> registrations.forEach(registration ->
      super.addRegistration(address, registration, (done, failure) -> {
        // a failure here is a cluster still re-forming: the next round puts it again
      })));
  }

  @Override
  public void leave(Completable<Void> promise) {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    own.clear();
    super.leave(promise);
  }
}
