package io.countergateway.bench;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("the latency proxy")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LatencyProxyTest {
  private static final long MS = 1_000_000;
  private final List<AutoCloseable> open = new ArrayList<>();
  private ServerSocket echo;

  /** A blocking echo server, one thread per connection: what it reads it writes back, until the client closes. */
  @BeforeEach
  void startEcho() throws IOException {
    echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(() -> {
      while (!echo.isClosed()) {
        try {
          Socket s = echo.accept();
          s.setTcpNoDelay(true);
          Thread worker = new Thread(() -> {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
              in.transferTo(out);
            } catch (IOException e) {
              // the client went away
            }
          });
          worker.setDaemon(true);
          worker.start();
        } catch (IOException e) {
          return;
        }
      }
    });
    acceptor.setDaemon(true);
    acceptor.start();
  }

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
    echo.close();
  }

  private LatencyProxy proxy(long oneWayDelayNanos) throws InterruptedException {
    LatencyProxy proxy = LatencyProxy.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
      new InetSocketAddress(InetAddress.getLoopbackAddress(), echo.getLocalPort()), oneWayDelayNanos, 1);
    open.add(proxy);
    return proxy;
  }

  private Socket connect(int port) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setTcpNoDelay(true);
    open.add(socket);
    return socket;
  }

  /** Sends one byte and waits for its echo: the round trip in nanoseconds. */
  private static long roundTrip(Socket socket) throws IOException {
    long start = System.nanoTime();
    socket.getOutputStream().write(42);
    socket.getOutputStream().flush();
    assertThat(socket.getInputStream().read()).isEqualTo(42);
    return System.nanoTime() - start;
  }

  @Test
  @DisplayName("adds twice its one-way delay to every round trip, not less and not much more, and says how late it was")
  void roundTripTakesTwiceTheDelay() throws Exception {
    LatencyProxy proxy = proxy(20 * MS);
    Socket socket = connect(proxy.port());
    roundTrip(socket);
    long best = Long.MAX_VALUE;
    for (int i = 0; i < 10; i++) {
      long rtt = roundTrip(socket);
      // never early: each direction holds the bytes its full delay
      assertThat(rtt).isGreaterThanOrEqualTo(40 * MS);
      best = Math.min(best, rtt);
    }
    long[] late = proxy.lateness();
    assertThat(late[0]).as("holds").isEqualTo(22);
    // a busy machine may release a hold late, and the proxy says by how much: beyond that, nothing is added
    assertThat(best).isLessThan(55 * MS + 2 * late[2] * 1000);
    assertThat(late[2]).as("longest µs late").isGreaterThanOrEqualTo(late[1]);
  }

  @Test
  @DisplayName("at a delay of 0 forwards at once")
  void noDelay() throws Exception {
    Socket socket = connect(proxy(0).port());
    roundTrip(socket);
    long best = Long.MAX_VALUE;
    for (int i = 0; i < 10; i++) {
      best = Math.min(best, roundTrip(socket));
    }
    // well under a round trip through a proxy that holds each direction 10 ms: a busy machine may still delay a read
    assertThat(best).isLessThan(20 * MS);
  }

  @ParameterizedTest(name = "one-way delay {0} ns")
  @ValueSource(longs = {0, MS})
  @DisplayName("delivers every byte unchanged and in order, both ways, and passes a half-close on after the last byte")
  void bytesUnchanged(long delayNanos) throws Exception {
    byte[] sent = new byte[8 << 20];
    new Random(7).nextBytes(sent);
    Socket socket = connect(proxy(delayNanos).port());
    CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
      try {
        ByteArrayOutputStream all = new ByteArrayOutputStream(sent.length);
        socket.getInputStream().transferTo(all);
        return all.toByteArray();
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    });
    OutputStream out = socket.getOutputStream();
    Random chunks = new Random(11);
    for (int at = 0; at < sent.length; ) {
      int n = Math.min(sent.length - at, 1 + chunks.nextInt(64 * 1024));
      out.write(sent, at, n);
      at += n;
    }
    out.flush();
    socket.shutdownOutput();
    // the echo server sees the close behind the last byte, echoes everything and closes: the proxy passes that on
    byte[] got = received.get(30, TimeUnit.SECONDS);
    assertThat(got.length).isEqualTo(sent.length);
    assertThat(Arrays.mismatch(got, sent)).as("the first byte that differs").isEqualTo(-1);
  }

  @Test
  @DisplayName("stops reading from a side whose bytes the other side does not take, holding about its high-water mark")
  void backpressure() throws Exception {
    LatencyProxy proxy = proxy(1 * MS);
    Socket socket = connect(proxy.port());
    // the client writes but never reads: the echo server's answers back up into the proxy, which must stop reading
    // them (and so the echo server stops reading, and the client's writes block) instead of buffering all of them
    byte[] chunk = new byte[64 * 1024];
    CompletableFuture<Long> written = CompletableFuture.supplyAsync(() -> {
      long total = 0;
      try {
        OutputStream out = socket.getOutputStream();
        for (int i = 0; i < 1024; i++) {
          out.write(chunk);
          total += chunk.length;
        }
      } catch (IOException e) {
        // the socket was closed at the end of the test while a write was blocked
      }
      return total;
    });
    Thread.sleep(2_000);
    assertThat(written).isNotDone();
    assertThat(proxy.peakQueuedBytes()).isLessThanOrEqualTo(LatencyProxy.HIGH_WATER_BYTES + 256 * 1024);
    socket.close();
  }
}
