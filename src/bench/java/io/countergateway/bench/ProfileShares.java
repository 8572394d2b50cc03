package io.countergateway.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Where a CPU profile's samples went, by the part of the request path that spent them: a collapsed-stack file
 * (async-profiler's {@code collapsed} output: {@code frame;frame;…;leaf count} per line) read into a share per
 * {@link Part}. Each sample belongs to one part: the part of the frame nearest its leaf that names one, Vert.x's and
 * Netty's general machinery (pipeline, buffers, header maps, futures) counting only where nothing else does — so the
 * CRC the journal computes is the journal's, the header map the request parser fills is the parser's, and the one the
 * gateway reads is the gateway's. The JVM's own threads (collection, compilation) are recognised by their roots.
 */
final class ProfileShares {
  /** The parts, in the order a table lists them. Frames are matched with {@code .} between package names. */
  enum Part {
    HTTP_PARSING("HTTP request parsing (Netty/Vert.x codec)", "io.netty.handler.codec.http.HttpObjectDecoder",
      "io.netty.handler.codec.http.HttpRequestDecoder", "io.vertx.core.http.impl.VertxHttpRequestDecoder",
      "io.netty.handler.codec.http.HttpServerCodec$HttpServerRequestDecoder"),
    HTTP_RESPONSE("HTTP response writing (Vert.x response, Netty encoder)", "io.netty.handler.codec.http.HttpObjectEncoder",
      "io.netty.handler.codec.http.HttpResponseEncoder", "io.vertx.core.http.impl.Http1xServerResponse",
      "io.vertx.core.http.impl.VertxHttpResponseEncoder"),
    ROUTING("routing (Vert.x Web router)", "io.vertx.ext.web."),
    BOT_FILTER("bot filter and limits", "io.countergateway.internal.beacon.", "ua_parser.", "io.countergateway.internal.http.ClientAddress",
      "io.countergateway.internal.http.EdgeLimits", "io.countergateway.internal.http.ConnectionGuard", "io.countergateway.internal.http.BearerAuth",
      "io.countergateway.internal.http.CrossSiteWrites"),
    METRICS("metrics (HttpRouteMeters, Micrometer)", "io.countergateway.internal.metrics.", "io.micrometer.",
      "io.vertx.micrometer."),
    JSON("JSON bodies (Jackson)", "com.fasterxml.jackson.", "io.vertx.core.json.", "io.countergateway.internal.http.JsonBodies"),
    JOURNAL("journal", "io.countergateway.internal.write.journal."),
    COALESCER("coalescer and flush writer", "io.countergateway.internal.write.Coalescer", "io.countergateway.internal.write.FlushWriter",
      "io.countergateway.internal.write.SlotPicker", "io.countergateway.internal.write.KeysInFlight", "io.countergateway.internal.write.Ack",
      "io.countergateway.internal.write.CommittedValues"),
    SQL("SQL client and store", "io.vertx.sqlclient.", "io.vertx.pgclient.", "io.vertx.mysqlclient.",
      "io.countergateway.internal.store."),
    GATEWAY("the gateway's other request code (doors, answer rule, model)", "io.countergateway."),
    SOCKET("socket reads and writes", "io.netty.channel.unix.", "sun.nio.ch.SocketChannelImpl", "sun.nio.ch.SocketDispatcher",
      "sun.nio.ch.IOUtil", ".doReadBytes", ".doWriteBytes", ".doWriteSingle", ".doWriteMultiple", ".writeBytesMultiple"),
    EVENT_LOOP_WAIT("event-loop waits and wake-ups (epoll_wait, eventfd)", "io.netty.channel.epoll.Native.epoll",
      "io.netty.channel.epoll.Native.eventFd", "io.netty.channel.epoll.EpollIoHandler.epollWait",
      "io.netty.channel.epoll.EpollIoHandler.wakeup", "sun.nio.ch.EPoll", "sun.nio.ch.SelectorImpl"),
    FRAMEWORK("Vert.x/Netty machinery (pipeline, buffers, contexts, futures)", "io.netty.", "io.vertx."),
    GC("garbage collection (VM thread, GC threads)"),
    JIT("JIT compilation"),
    JVM("JVM, other (interpreter, runtime stubs, safepoints)"),
    OTHER("other (JDK, libc, kernel outside the above)");

    final String title;
    private final String[] patterns;

    Part(String title, String... patterns) {
      this.title = title;
      this.patterns = patterns;
    }

    boolean matches(String frame) {
      for (String pattern : patterns) {
        if (frame.contains(pattern)) {
          return true;
        }
      }
      return false;
    }
  }

  /** Roots of the JVM's own threads: samples under them are not a request's code. */
  private static final String[] GC_ROOTS = {"VMThread::", "GCTaskThread", "ConcurrentGCThread", "WorkerThread::run",
    "G1ConcurrentRefineThread", "G1ServiceThread"};
  private static final String[] JIT_ROOTS = {"CompileBroker::", "CompilerThread"};

  private final Map<Part, Long> samples = new EnumMap<>(Part.class);
  private final Map<String, Long> leaves = new HashMap<>();
  private final Map<String, Long> threads = new HashMap<>();
  private long total;

  /** Reads a collapsed-stack file. */
  static ProfileShares read(Path collapsed) throws IOException {
    ProfileShares shares = new ProfileShares();
    stacks(collapsed, shares::add);
    return shares;
  }

  /** Calls {@code each} with every stack of a collapsed-stack file and its count; lines without a count are skipped. */
  private static void stacks(Path collapsed, BiConsumer<String, Long> each) throws IOException {
    try (BufferedReader in = Files.newBufferedReader(collapsed, StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        int space = line.lastIndexOf(' ');
        if (space <= 0) {
          continue;
        }
        try {
          each.accept(line.substring(0, space), Long.parseLong(line.substring(space + 1).trim()));
        } catch (NumberFormatException e) {
          // not a line of samples
        }
      }
    }
  }

  /**
   * Adds {@code count} samples of one stack ({@code root;…;leaf}); a first frame {@code [name tid=N]} (the profiler's
   * {@code threads} option) names the thread, counted by {@link #thread(String) its kind}.
   */
  void add(String stack, long count) {
    String[] frames = stack.split(";");
    if (frames.length > 1 && frames[0].startsWith("[") && frames[0].endsWith("]")) {
      threads.merge(thread(frames[0]), count, Long::sum);
      frames = Arrays.copyOfRange(frames, 1, frames.length);
    }
    for (int i = 0; i < frames.length; i++) {
      frames[i] = frame(frames[i]);
    }
    samples.merge(classify(frames), count, Long::sum);
    leaves.merge(frames[frames.length - 1], count, Long::sum);
    total += count;
  }

  /**
   * A thread's kind from its frame {@code [vert.x-eventloop-thread-1 tid=4711]}: the name without its numbers and hash
   * codes ({@code vert.x-eventloop-thread-*}), so the threads of one pool add up.
   */
  static String thread(String frame) {
    String name = frame.substring(1, frame.length() - 1).replaceFirst(" tid=\\d+$", "");
    return name.replaceAll("\\b(?=[0-9a-f]*[0-9])[0-9a-f]{6,16}\\b", "*").replaceAll("[0-9]+", "*");
  }

  /** The share of all samples taken on threads of each kind (empty without thread frames), largest first. */
  Map<String, Double> threadShares() {
    Map<String, Double> shares = new LinkedHashMap<>();
    threads.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
      .forEach(e -> shares.put(e.getKey(), e.getValue() / (double) total));
    return shares;
  }

  /** A frame as written by the profiler, with {@code .} between package names and no {@code _[j]}-style mark. */
  static String frame(String raw) {
    String f = raw;
    if (f.endsWith("]") && f.lastIndexOf("_[") > 0) {
      f = f.substring(0, f.lastIndexOf("_["));
    }
    return f.replace('/', '.');
  }

  /** The part a stack (root first) belongs to. */
  static Part classify(String[] frames) {
    for (String frame : frames) {
      if (startsAny(frame, GC_ROOTS)) {
        return Part.GC;
      }
      if (startsAny(frame, JIT_ROOTS)) {
        return Part.JIT;
      }
    }
    for (int i = frames.length - 1; i >= 0; i--) {
      for (Part part : Part.values()) {
        if (part != Part.FRAMEWORK && part.matches(frames[i])) {
          return part;
        }
      }
    }
    if (Arrays.stream(frames).anyMatch(Part.FRAMEWORK::matches)) {
      return Part.FRAMEWORK;
    }
    return Arrays.stream(frames).anyMatch(f -> f.contains("::") || f.contains("Interpreter")) ? Part.JVM : Part.OTHER;
  }

  private static boolean startsAny(String frame, String[] roots) {
    for (String root : roots) {
      if (frame.startsWith(root) || frame.contains(" " + root)) {
        return true;
      }
    }
    return false;
  }

  long total() {
    return total;
  }

  /** The share of all samples spent in {@code part}, 0 to 1. */
  double share(Part part) {
    return total == 0 ? 0 : samples.getOrDefault(part, 0L) / (double) total;
  }

  /** The share of all samples whose stack has a frame containing {@code pattern} (inclusive time). */
  static double inclusiveShare(Path collapsed, String pattern) throws IOException {
    long[] withAndAll = new long[2];
    stacks(collapsed, (stack, count) -> {
      withAndAll[1] += count;
      if (stack.replace('/', '.').contains(pattern)) {
        withAndAll[0] += count;
      }
    });
    return withAndAll[1] == 0 ? 0 : withAndAll[0] / (double) withAndAll[1];
  }

  /** The {@code n} leaf frames with the most samples, with their shares. */
  List<Map.Entry<String, Double>> topLeaves(int n) {
    return leaves.entrySet().stream()
      .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
      .limit(n)
      .map(e -> Map.entry(e.getKey(), e.getValue() / (double) total))
      .toList();
  }

  static String percent(double share) {
    return String.format(Locale.ROOT, "%.1f %%", 100 * share);
  }
}
