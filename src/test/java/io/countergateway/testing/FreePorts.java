package io.countergateway.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntSupplier;

/**
 * Ports for the servers a test starts on a port it must know before the server binds it: a Hazelcast member (each
 * member lists the others), a gateway in its own JVM, a test MariaDB, PgBouncer, a second PostgreSQL. Such a port is
 * picked free and bound later, so it must stay free in between, whatever else runs on the machine:
 * <ul>
 *   <li>It lies between {@value #FROM} and the start of Linux's ephemeral range (32768 by default, read from
 *   {@code /proc/sys/net/ipv4/ip_local_port_range}). A port from {@code new ServerSocket(0)} is an ephemeral one, and
 *   any outgoing connection of any process (a database connection, a Hazelcast member connecting to the members it
 *   lists) may be given it before the server binds it; no outgoing connection is ever given a port below the range.</li>
 *   <li>It is handed out once per JVM, and reserved across the machine by a lock on a file named after it (under
 *   {@code java.io.tmpdir}), held until the JVM exits: two test JVMs side by side (two builds, or a build and a
 *   benchmark) never pick the same one, and a server stopped for an outage test finds its port free again.</li>
 *   <li>Nothing listens on it when it is picked.</li>
 * </ul>
 */
public final class FreePorts {
  static final int FROM = 20_000;
  private static final int TO = ephemeralStart();
  private static final Path LOCKS = Paths.get(System.getProperty("java.io.tmpdir"), "counter-gateway-test-ports");
  private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();
  /** The reservations: a lock lives as long as its channel, so the channels are kept until the JVM exits. */
  private static final List<FileChannel> RESERVED = new CopyOnWriteArrayList<>();

  private FreePorts() {
  }

  /** A port of {@value #FROM} up to Linux's ephemeral range, reserved for this JVM, that nothing listens on now. */
  public static int take() {
    return take(() -> ThreadLocalRandom.current().nextInt(FROM, TO));
  }

  /** The first of {@code candidates} (each in the range) that is not handed out, not reserved, and not listened on. */
  static int take(IntSupplier candidates) {
    for (int attempt = 0; attempt < 1_000; attempt++) {
      int candidate = candidates.getAsInt();
      if (HANDED_OUT.add(candidate) && reserve(candidate) && nothingListens(candidate)) {
        return candidate;
      }
    }
    throw new IllegalStateException("no free port between " + FROM + " and " + TO);
  }

  /** Whether this JVM has handed {@code port} out (or passed over it). */
  static boolean handedOut(int port) {
    return HANDED_OUT.contains(port);
  }

  /** Where a port is below: the start of Linux's ephemeral range. */
  static int end() {
    return TO;
  }

  /** The file whose lock reserves {@code port}. */
  static Path lockFile(int port) {
    return LOCKS.resolve(port + ".lock");
  }

  /**
   * Whether this JVM now holds the machine-wide reservation of {@code port}: false when another test JVM (or another
   * holder in this one) does.
   */
  private static boolean reserve(int port) {
    try {
      Files.createDirectories(LOCKS);
      FileChannel channel = FileChannel.open(lockFile(port), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException heldHere) {
        lock = null;
      }
      if (lock == null) {
        channel.close();
        return false;
      }
      RESERVED.add(channel);
      return true;
    } catch (IOException unwritable) {
      // a directory another user made: no reservation across JVMs, the port is still below the ephemeral range
      return true;
    }
  }

  /** Whether nothing listens on {@code port}, on any address: a bind of every address would succeed now. */
  private static boolean nothingListens(int port) {
    try (ServerSocket probe = new ServerSocket()) {
      probe.setReuseAddress(true); // a connection of an earlier server still in TIME_WAIT does not keep a server off it
      probe.bind(new InetSocketAddress(port), 1);
      return true;
    } catch (IOException taken) {
      return false;
    }
  }

  /** The first port of Linux's ephemeral range (32768 where the range cannot be read). */
  private static int ephemeralStart() {
    try {
      String range = Files.readString(Paths.get("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      int first = Integer.parseInt(range.split("\\s+")[0]);
      return first > FROM + 1_000 ? first : 32_768;
    } catch (IOException | RuntimeException unreadable) {
      return 32_768;
    }
  }
}
