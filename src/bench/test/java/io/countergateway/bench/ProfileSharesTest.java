package io.countergateway.bench;

import io.countergateway.bench.ProfileShares.Part;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

@DisplayName("the profile's shares")
class ProfileSharesTest {
  private static final String LOOP = "java/lang/Thread.run;io/netty/util/concurrent/SingleThreadEventExecutor$5.run;"
    + "io/netty/channel/SingleThreadIoEventLoop.run;io/netty/channel/epoll/EpollIoHandler.run;"
    + "io/netty/channel/epoll/AbstractEpollStreamChannel$EpollStreamUnsafe.epollInReady;"
    + "io/netty/channel/DefaultChannelPipeline.fireChannelRead;io/netty/handler/codec/ByteToMessageDecoder.channelRead";

  private static Part part(String stack) {
    String[] frames = stack.split(";");
    for (int i = 0; i < frames.length; i++) {
      frames[i] = ProfileShares.frame(frames[i]);
    }
    return ProfileShares.classify(frames);
  }

  @Test
  @DisplayName("gives a sample to the part of the frame nearest its leaf, whatever called it")
  void nearestPartWins() {
    assertThat(part(LOOP + ";io/netty/handler/codec/http/HttpObjectDecoder.decode;"
      + "io/vertx/core/http/impl/headers/HeadersMultiMap.add0_[j]")).isEqualTo(Part.HTTP_PARSING);
    String hot = LOOP + ";io/vertx/core/http/impl/Http1xServerConnection.handleMessage;"
      + "io/countergateway/internal/http/HotRoutes.handle_[j]";
    assertThat(part(hot + ";io/countergateway/internal/beacon/BeaconFilter.check;ua_parser/Parser.parseUserAgent;"
      + "java/util/regex/Matcher.find")).isEqualTo(Part.BOT_FILTER);
    assertThat(part(hot + ";io/countergateway/internal/metrics/HttpRouteMeters.record;"
      + "io/micrometer/core/instrument/distribution/FixedBoundaryHistogram.record")).isEqualTo(Part.METRICS);
    assertThat(part(hot + ";io/countergateway/internal/write/WritePath.write;io/countergateway/internal/write/journal/Journal.append;"
      + "java/util/zip/CRC32C.update")).isEqualTo(Part.JOURNAL);
    assertThat(part(hot + ";io/countergateway/internal/write/WritePath.write;io/countergateway/internal/write/Coalescer.add"))
      .isEqualTo(Part.COALESCER);
    assertThat(part(hot + ";io/countergateway/internal/write/WritePath.write")).isEqualTo(Part.GATEWAY);
    assertThat(part(hot + ";io/vertx/core/http/impl/Http1xServerResponse.end;"
      + "io/netty/channel/epoll/AbstractEpollStreamChannel.doWriteSingle;io/netty/channel/unix/FileDescriptor.write;"
      + "write;entry_SYSCALL_64_after_hwframe_[k];tcp_sendmsg_[k]")).isEqualTo(Part.SOCKET);
    assertThat(part(hot + ";io/vertx/core/http/impl/Http1xServerResponse.end;"
      + "io/netty/handler/codec/http/HttpObjectEncoder.encode")).isEqualTo(Part.HTTP_RESPONSE);
    assertThat(part("java/lang/Thread.run;io/vertx/core/impl/ContextImpl.runOnContext;"
      + "io/vertx/pgclient/impl/codec/PgEncoder.write")).isEqualTo(Part.SQL);
    assertThat(part("java/lang/Thread.run;io/netty/channel/epoll/EpollIoHandler.run;"
      + "io/netty/channel/epoll/Native.epollWait0;epoll_wait;entry_SYSCALL_64_[k]")).isEqualTo(Part.EVENT_LOOP_WAIT);
    assertThat(part(LOOP + ";io/netty/channel/AbstractChannelHandlerContext.invokeChannelRead")).isEqualTo(Part.FRAMEWORK);
  }

  @Test
  @DisplayName("counts the JVM's own threads by their roots, not by the frames they happen to be in")
  void jvmThreads() {
    assertThat(part("thread_native_entry;Thread::call_run;VMThread::run;VM_GenCollectForAllocation::doit;"
      + "DefNewGeneration::collect")).isEqualTo(Part.GC);
    assertThat(part("thread_native_entry;Thread::call_run;JavaThread::run;CompileBroker::compiler_thread_loop;"
      + "C2Compiler::compile_method;PhaseIdealLoop::build_loop_tree")).isEqualTo(Part.JIT);
    assertThat(part("java/lang/Thread.run;OptoRuntime::new_instance_C;MemAllocator::allocate")).isEqualTo(Part.JVM);
    assertThat(part("start_thread;clock_gettime")).isEqualTo(Part.OTHER);
  }

  @Test
  @DisplayName("adds up the threads of one pool when the profile names threads, and classifies the stack below them")
  void threads(@TempDir Path dir) throws Exception {
    Path profile = Files.writeString(dir.resolve("t.collapsed"), String.join("\n", List.of(
      "[vert.x-eventloop-thread-0 tid=101];" + LOOP + ";io/netty/handler/codec/http/HttpObjectDecoder.decode 30",
      "[vert.x-eventloop-thread-1 tid=102];" + LOOP + ";io/netty/handler/codec/http/HttpObjectDecoder.decode 30",
      "[journal-0-1b6d3586-writer-0 tid=103];java/lang/Thread.run;io/countergateway/internal/write/journal/Journal.force 40"))
      + "\n");
    ProfileShares shares = ProfileShares.read(profile);
    assertThat(shares.threadShares()).containsExactly(Map.entry("vert.x-eventloop-thread-*", 0.6),
      Map.entry("journal-*-*-writer-*", 0.4));
    assertThat(shares.share(Part.HTTP_PARSING)).isCloseTo(0.6, within(1e-9));
    assertThat(shares.share(Part.JOURNAL)).isCloseTo(0.4, within(1e-9));
  }

  @Test
  @DisplayName("prints each part's share of the samples and its CPU microseconds per request")
  void table(@TempDir Path dir) throws Exception {
    Path plain = Files.writeString(dir.resolve("plain.collapsed"), String.join("\n", List.of(
      LOOP + ";io/netty/handler/codec/http/HttpObjectDecoder.decode 30",
      LOOP + ";io/netty/channel/AbstractChannelHandlerContext.invokeChannelRead 70")) + "\n");
    Path beacon = Files.writeString(dir.resolve("beacon.collapsed"), String.join("\n", List.of(
      LOOP + ";io/netty/handler/codec/http/HttpObjectDecoder.decode 25",
      LOOP + ";io/countergateway/internal/http/HotRoutes.handle;io/countergateway/internal/metrics/HttpRouteMeters.record 25",
      LOOP + ";io/countergateway/internal/http/HotRoutes.handle;io/countergateway/internal/write/journal/Journal.append 50")) + "\n");

    ProfileShares shares = ProfileShares.read(beacon);
    assertThat(shares.total()).isEqualTo(100);
    assertThat(shares.share(Part.METRICS)).isCloseTo(0.25, within(1e-9));
    assertThat(ProfileShares.inclusiveShare(beacon, "HotRoutes.handle")).isCloseTo(0.75, within(1e-9));

    StringWriter out = new StringWriter();
    CommandLine cli = new CommandLine(new BenchCommand());
    cli.setOut(new PrintWriter(out));
    int exit = cli.execute("profile-shares", "plain=" + plain, "beacon=" + beacon, "--cpu", "plain=10",
      "--cpu", "beacon=20", "--inclusive", "per-request timer=HttpRouteMeters.record");
    assertThat(exit).isZero();
    assertThat(out.toString())
      .contains("| part | plain | beacon |")
      .contains("| HTTP request parsing (Netty/Vert.x codec) | 30.0 % (3.00 µs) | 25.0 % (5.00 µs) |")
      .contains("| journal | 0.0 % (0.00 µs) | 50.0 % (10.00 µs) |")
      .contains("| per-request timer (`HttpRouteMeters.record`) | 0.0 % (0.00 µs) | 25.0 % (5.00 µs) |")
      .contains("| samples | 100 | 100 |");
  }
}
