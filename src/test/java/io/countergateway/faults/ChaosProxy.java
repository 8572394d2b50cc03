package io.countergateway.faults;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy between the gateway and its database that, in chaos mode, kills proxied connections at the worst
 * moments: after a connection's start-up handshake, each chunk the database sends back is, with probability
 * {@code p}, either dropped (the database did the work, the gateway never hears of it) or forwarded, and then both
 * sides of the connection are closed. On MySQL the answer to a committing statement (a {@code COMMIT}, or the call of
 * the flush procedure) is dropped with probability {@code 2p}.
 * A dropped answer to a committed write is an ambiguous commit: the gateway must retry the same flush and find its
 * flush id, not count it again. On cue it also makes a late copy ({@link #holdNextChunkWith}): a statement held in
 * transit after the gateway gave up on it, delivered later.
 *
 * <p>It also reads just enough of the protocols to count what happened: on PostgreSQL a flush's answer is the tag
 * {@code INSERT 0 n} ({@code n > 0}: committed, {@code n = 0}: its flush id was already there); on MySQL/MariaDB an
 * OK answer to the committing statement the client sent last, and a {@code Duplicate entry} error for a flush id.
 */
final class ChaosProxy {
  /** Answers of the database on a connection that are never touched: authentication and start-up. */
  private static final int HANDSHAKE_CHUNKS = 3;
  private static final byte[] PG_INSERT_TAG = "INSERT 0 ".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] MYSQL_COMMIT = "COMMIT".getBytes(StandardCharsets.US_ASCII);
  /** The start of a flush's rows, as the MySQL store sends them to its flush procedure (JSON arrays). */
  private static final byte[] MYSQL_FLUSH_ROWS = "[[\"".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] MYSQL_DUPLICATE = "Duplicate entry".getBytes(StandardCharsets.US_ASCII);

  private final Vertx vertx;
  private final int targetPort;
  private final boolean postgres;
  private volatile double killProbability;
  private volatile long latencyMs;
  /** Connections opened before the latest {@link #stallOpenConnections()} forward nothing any more. */
  private volatile int stallGeneration;
  private final AtomicBoolean dropNextCommit = new AtomicBoolean();
  /** Bytes that mark the gateway's next chunk to hold (see {@link #holdNextChunkWith}); null when none is wanted. */
  private volatile byte[] holdMarker;
  private final AtomicBoolean holding = new AtomicBoolean();
  private final Queue<Link> heldLinks = new ConcurrentLinkedQueue<>();
  /** Chunks held so far ({@link #holdNextChunkWith}). */
  final AtomicInteger held = new AtomicInteger();
  private volatile Runnable onDroppedCommit = () -> { };
  private NetServer server;
  private NetClient client;

  final AtomicInteger connections = new AtomicInteger();
  /** Connections killed after dropping the database's answer. */
  final AtomicInteger killedDropping = new AtomicInteger();
  /** Connections killed right after forwarding the database's answer. */
  final AtomicInteger killedForwarding = new AtomicInteger();
  /** Dropped answers to a committed write: the database counted the flush, the gateway never heard. */
  final AtomicInteger ambiguousCommits = new AtomicInteger();
  /** Answers that told the gateway its flush id was already committed: a retry that wrote nothing. */
  final AtomicInteger duplicateFlushAnswers = new AtomicInteger();

  ChaosProxy(Vertx vertx, int targetPort, boolean postgres) {
    this.vertx = vertx;
    this.targetPort = targetPort;
    this.postgres = postgres;
  }

  /** Listens on a free port of 127.0.0.1; returns it. */
  Future<Integer> start() {
    client = vertx.createNetClient(new NetClientOptions().setConnectTimeout(2_000).setTcpNoDelay(true));
    server = vertx.createNetServer(new NetServerOptions().setTcpNoDelay(true)).connectHandler(this::accept);
    return server.listen(0, "127.0.0.1").map(NetServer::actualPort);
  }

  /** 0 forwards everything faithfully. */
  void chaos(double probability) {
    killProbability = probability;
  }

  /** Delays every answer of the database by this much (order kept): a slow database, without killing anything. */
  void latency(long millis) {
    latencyMs = millis;
  }

  /**
   * A database host that vanished without closing its sockets (a partition, a dead VM): every connection open now
   * stops forwarding in both directions and is never closed; connections opened later work.
   */
  void stallOpenConnections() {
    stallGeneration++;
  }

  /**
   * The next answer to a committed write is dropped and its connection closed: one ambiguous commit, on cue.
   * {@code then} runs on the proxy's event loop right before the connection is closed.
   */
  void dropNextCommittedAnswer(Runnable then) {
    onDroppedCommit = then;
    dropNextCommit.set(true);
  }

  /**
   * A late copy, on cue: the gateway's next chunk that holds {@code marker} (a counter id in a flush statement) and
   * everything it sends after it on that connection stay in the proxy until {@link #releaseHeld}. The gateway gives up
   * on the attempt and closes its side; the proxy keeps the database side open, forwards the held bytes when
   * released (the statement then runs, its answer going nowhere) and closes it two seconds later.
   */
  void holdNextChunkWith(String marker) {
    holdMarker = marker.getBytes(StandardCharsets.UTF_8);
    holding.set(true);
  }

  /** Forwards what {@link #holdNextChunkWith} held to the database; returns whether anything was held. */
  boolean releaseHeld() {
    boolean any = false;
    for (Link link = heldLinks.poll(); link != null; link = heldLinks.poll()) {
      Link releasing = link;
      releasing.context.runOnContext(v -> releasing.release());
      any = true;
    }
    return any;
  }

  int kills() {
    return killedDropping.get() + killedForwarding.get();
  }

  String summary() {
    return "connections=" + connections + " killedDropping=" + killedDropping + " killedForwarding=" + killedForwarding
      + " ambiguousCommits=" + ambiguousCommits + " duplicateFlushAnswers=" + duplicateFlushAnswers;
  }

  Future<Void> close() {
    return server.close().eventually(client::close);
  }

  private void accept(NetSocket downstream) {
    downstream.pause();
    connections.incrementAndGet();
    client.connect(targetPort, "127.0.0.1").onComplete(connected -> {
      if (connected.failed()) {
        downstream.close();
        return;
      }
      new Link(downstream, connected.result()).run();
    });
  }

  /** One proxied connection; both sockets live on the event loop that accepted it. */
  private final class Link {
    private final NetSocket downstream;
    private final NetSocket upstream;
    private int answers;
    private boolean commitSent;
    private boolean closed;
    private final int generation = stallGeneration;
    private final Context context = vertx.getOrCreateContext();
    /** The gateway's chunks held for a late copy; null when not holding. */
    private List<Buffer> heldChunks;

    Link(NetSocket downstream, NetSocket upstream) {
      this.downstream = downstream;
      this.upstream = upstream;
    }

    private boolean stalled() {
      return generation < stallGeneration;
    }

    void run() {
      downstream.handler(this::fromGateway);
      upstream.handler(this::fromDatabase);
      downstream.closeHandler(v -> close());
      upstream.closeHandler(v -> close());
      downstream.exceptionHandler(e -> close());
      upstream.exceptionHandler(e -> close());
      downstream.resume();
    }

    private void fromGateway(Buffer chunk) {
      if (heldChunks != null) {
        heldChunks.add(chunk);
        return;
      }
      if (closed || stalled()) {
        return;
      }
      byte[] marker = holdMarker;
      if (marker != null && indexOf(chunk, marker, 0) >= 0 && holding.compareAndSet(true, false)) {
        heldChunks = new ArrayList<>();
        heldChunks.add(chunk);
        held.incrementAndGet();
        heldLinks.add(this);
        return;
      }
      if (!postgres && (indexOf(chunk, MYSQL_COMMIT, 0) >= 0 || indexOf(chunk, MYSQL_FLUSH_ROWS, 0) >= 0)) {
        commitSent = true;
      }
      upstream.write(chunk);
    }

    private void fromDatabase(Buffer chunk) {
      if (closed || stalled()) {
        return;
      }
      answers++;
      if (answers > HANDSHAKE_CHUNKS && answersCommittedWrite(chunk) && dropNextCommit.compareAndSet(true, false)) {
        killedDropping.incrementAndGet();
        ambiguousCommits.incrementAndGet();
        onDroppedCommit.run();
        close();
        return;
      }
      double p = killProbability;
      // On MySQL most chunks answer prepares, reads and statements inside a transaction; the answer to a committing
      // statement is the one that makes a write ambiguous, so it gets twice the odds and is always dropped.
      boolean commitAnswer = !postgres && commitSent;
      double odds = commitAnswer ? 2 * p : p;
      if (answers > HANDSHAKE_CHUNKS && p > 0 && ThreadLocalRandom.current().nextDouble() < odds) {
        if (commitAnswer || ThreadLocalRandom.current().nextBoolean()) {
          killedDropping.incrementAndGet();
          if (answersCommittedWrite(chunk)) {
            ambiguousCommits.incrementAndGet();
          }
        } else {
          killedForwarding.incrementAndGet();
          forward(chunk);
        }
        close();
        return;
      }
      forward(chunk);
    }

    private void forward(Buffer chunk) {
      if (postgres ? pgInsertTag(chunk, true) : indexOf(chunk, MYSQL_DUPLICATE, 0) >= 0) {
        duplicateFlushAnswers.incrementAndGet();
      }
      commitSent = false;
      long delay = latencyMs;
      if (delay > 0) {
        // timers of one event loop with the same delay fire in the order they were set
        vertx.setTimer(delay, id -> {
          if (!closed) {
            downstream.write(chunk);
          }
        });
      } else {
        downstream.write(chunk);
      }
    }

    /** PostgreSQL: the flush's insert tag; MySQL: an OK packet (header 4 bytes, then 0x00) to a committing statement. */
    private boolean answersCommittedWrite(Buffer chunk) {
      return postgres ? pgInsertTag(chunk, false) : commitSent && chunk.length() > 4 && chunk.getByte(4) == 0;
    }

    /** Sends the held chunks to the database as they came; its answers go nowhere; the connection ends soon after. */
    void release() {
      List<Buffer> chunks = heldChunks;
      heldChunks = null;
      closed = true;
      downstream.close();
      chunks.forEach(upstream::write);
      vertx.setTimer(2_000, id -> upstream.close());
    }

    private void close() {
      if (heldChunks != null) {
        // the gateway gave up on the held attempt: the database side stays open for the late copy
        closed = true;
        downstream.close();
        return;
      }
      if (!closed) {
        closed = true;
        downstream.close();
        if (!stalled()) {
          // a vanished host never tells the database either: its session (and on MySQL its row locks) stays
          // until the server gives up on it, or the proxy closes
          upstream.close();
        }
      }
    }
  }

  /** Whether the chunk holds the tag {@code INSERT 0 n\0} with n = 0 ({@code zero}) or n > 0. */
  private static boolean pgInsertTag(Buffer chunk, boolean zero) {
    for (int at = indexOf(chunk, PG_INSERT_TAG, 0); at >= 0; at = indexOf(chunk, PG_INSERT_TAG, at + 1)) {
      int digits = at + PG_INSERT_TAG.length;
      if (digits + 1 < chunk.length()) {
        boolean isZero = chunk.getByte(digits) == '0' && chunk.getByte(digits + 1) == 0;
        if (isZero == zero) {
          return true;
        }
      }
    }
    return false;
  }

  private static int indexOf(Buffer chunk, byte[] needle, int from) {
    outer:
    for (int i = from; i <= chunk.length() - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (chunk.getByte(i + j) != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
