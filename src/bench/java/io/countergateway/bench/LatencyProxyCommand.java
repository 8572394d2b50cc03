package io.countergateway.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code java -jar target/counter-gateway-bench.jar latency-proxy --target 127.0.0.1:5432 --port 15432 --delay 250us}:
 * a database on loopback as if it were a network hop away (this machine's kernel has no netem), for the commit-path
 * benchmarks at 0.5 ms and 2 ms round trip.
 */
@Command(name = "latency-proxy", mixinStandardHelpOptions = true, sortOptions = false,
  description = "Forwards TCP connections to a target (a database), holding the bytes a fixed time in each direction, "
    + "in order and with backpressure, until killed. A round trip through it takes twice the delay longer.")
public final class LatencyProxyCommand implements Callable<Integer> {
  @Spec
  private CommandLine.Model.CommandSpec spec;

  @Option(names = "--target", required = true, paramLabel = "HOST:PORT", description = "where to forward, e.g. 127.0.0.1:5432")
  private String target;

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "address to listen on (default: ${DEFAULT-VALUE})")
  private String host;

  @Option(names = "--port", defaultValue = "15432", description = "port to listen on (default: ${DEFAULT-VALUE})")
  private int port;

  @Option(names = "--delay", defaultValue = "0", converter = DelayConverter.class, paramLabel = "DELAY",
    description = "one-way delay, each direction: 250us, 0.25ms, 1ms, 0 (default: ${DEFAULT-VALUE}: forward at once)")
  private long delayNanos;

  @Option(names = "--threads", defaultValue = "1", description = "event loops (default: ${DEFAULT-VALUE})")
  private int threads;

  @Override
  public Integer call() throws Exception {
    InetSocketAddress to = hostAndPort(target);
    LatencyProxy proxy = LatencyProxy.start(new InetSocketAddress(host, port), to, delayNanos, threads);
    System.err.printf(Locale.ROOT, "latency proxy on %s:%d -> %s, %.3f ms each way (%.3f ms round trip)%n", host,
      proxy.port(), target, delayNanos / 1e6, 2 * delayNanos / 1e6);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      long[] late = proxy.lateness();
      System.err.printf(Locale.ROOT, "latency proxy: %d connections, %d bytes forwarded, at most %d bytes held by one "
        + "direction; %d holds ended %d µs late on average, %d µs at the most, %d of them more than 100 µs late%n",
        proxy.connections(), proxy.forwardedBytes(), proxy.peakQueuedBytes(), late[0], late[1], late[2], late[3]);
      proxy.close();
      stopped.countDown();
    }));
    stopped.await();
    return 0;
  }

  private InetSocketAddress hostAndPort(String value) {
    int colon = value.lastIndexOf(':');
    try {
      if (colon > 0) {
        return new InetSocketAddress(value.substring(0, colon), Integer.parseInt(value.substring(colon + 1)));
      }
    } catch (IllegalArgumentException e) {
      // a port that is not a number or out of range: the message below
    }
    throw new CommandLine.ParameterException(spec.commandLine(), "--target must be HOST:PORT, got '" + value + "'");
  }

  /** {@code 250us}, {@code 0.25ms}, {@code 1ms}, {@code 0.001s}, or a number of milliseconds; in nanoseconds. */
  static final class DelayConverter implements CommandLine.ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      String v = value.trim().toLowerCase(Locale.ROOT);
      double unitNanos = 1e6;
      String number = v;
      if (v.endsWith("us") || v.endsWith("µs")) {
        unitNanos = 1e3;
        number = v.substring(0, v.length() - 2);
      } else if (v.endsWith("ms")) {
        number = v.substring(0, v.length() - 2);
      } else if (v.endsWith("s")) {
        unitNanos = 1e9;
        number = v.substring(0, v.length() - 1);
      }
      try {
        double nanos = Double.parseDouble(number) * unitNanos;
        if (nanos < 0 || Double.isNaN(nanos) || nanos > 60e9) {
          throw new CommandLine.TypeConversionException("the delay must be between 0 and 60 s, got '" + value + "'");
        }
        return Math.round(nanos);
      } catch (NumberFormatException e) {
        throw new CommandLine.TypeConversionException("'" + value + "' is not a delay like 250us, 0.25ms or 1ms");
      }
    }
  }
}
