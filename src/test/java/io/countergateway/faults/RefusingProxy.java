package io.countergateway.faults;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A database that cannot be reached at connect: a TCP forwarder to it on a fixed port that can stop listening. While
 * it refuses, every connection attempt is refused (ECONNREFUSED) and the connections it forwarded are closed, so no
 * statement the gateway sends from then on reaches the database, and none is sent: each attempt fails at connect.
 */
final class RefusingProxy {
  private final Vertx vertx;
  private final int target;
  private final int port;
  private final NetClient client;
  private final Set<NetSocket> open = ConcurrentHashMap.newKeySet();
  private NetServer server;

  RefusingProxy(Vertx vertx, int target, int port) {
    this.vertx = vertx;
    this.target = target;
    this.port = port;
    this.client = vertx.createNetClient();
  }

  int port() {
    return port;
  }

  /** Forwards every connection to the database from now on. */
  Future<Void> listen() {
    server = vertx.createNetServer().connectHandler(front -> {
      front.pause();
      client.connect(target, "127.0.0.1").onComplete(connected -> {
        if (connected.failed()) {
          front.close();
          return;
        }
        NetSocket back = connected.result();
        open.add(front);
        open.add(back);
        front.closeHandler(v -> open.remove(front));
        back.closeHandler(v -> open.remove(back));
        front.pipeTo(back);
        back.pipeTo(front);
        front.resume();
      });
    });
    return server.listen(port, "127.0.0.1").mapEmpty();
  }

  /** Stops listening and closes what it forwarded: the database is unreachable at connect until {@link #listen}. */
  Future<Void> refuse() {
    NetServer listening = server;
    server = null;
    List<Future<Void>> closing = new java.util.ArrayList<>();
    if (listening != null) {
      closing.add(listening.close());
    }
    open.forEach(socket -> closing.add(socket.close()));
    return Future.join(closing).mapEmpty();
  }

  Future<Void> close() {
    return refuse().eventually(client::close);
  }
}
