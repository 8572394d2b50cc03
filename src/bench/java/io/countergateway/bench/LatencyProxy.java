package io.countergateway.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy that holds every byte for a fixed time in each direction, so that a database on loopback behaves as one
 * a network hop away: a one-way delay {@code d} adds {@code 2d} to every round trip, and nothing else changes.
 *
 * <p>Order: each direction is a FIFO of what arrived with the time it may leave; with one delay for everything, the
 * times are in arrival order, so the queue is written from its head and bytes leave in the order they came. A peer's
 * FIN (a half-close: the other side may still answer) or close is passed on behind its last bytes. Backpressure: a side stops reading while its queue holds more than
 * {@link #HIGH_WATER_BYTES} or the other side's socket does not take more (Netty's writability), and reads again once
 * both have room: a reader that stalls stalls the writer at the far end, as a real network would, with at most one
 * read's worth above the mark held here. A delay of 0 forwards at once, without the queue, so the proxy's own cost can
 * be measured against a direct connection.
 *
 * <p>Both channels of a connection live on one event loop, so a connection needs no locks.
 */
public final class LatencyProxy implements AutoCloseable {
  /** Bytes a direction may hold before its reads stop. */
  static final int HIGH_WATER_BYTES = 1 << 20;
  private static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(256 * 1024, HIGH_WATER_BYTES);

  private final EventLoopGroup group;
  private final InetSocketAddress target;
  private final long delayNanos;
  private final Class<? extends SocketChannel> clientClass;
  private final AtomicLong connections = new AtomicLong();
  private final AtomicLong forwardedBytes = new AtomicLong();
  private final AtomicLong peakQueuedBytes = new AtomicLong();
  private final AtomicLong released = new AtomicLong();
  private final AtomicLong lateNanos = new AtomicLong();
  private final AtomicLong maxLateNanos = new AtomicLong();
  private final AtomicLong lateOver100us = new AtomicLong();
  private Channel server;

  private LatencyProxy(EventLoopGroup group, Class<? extends SocketChannel> clientClass, InetSocketAddress target,
                       long delayNanos) {
    this.group = group;
    this.clientClass = clientClass;
    this.target = target;
    this.delayNanos = delayNanos;
  }

  /**
   * Listens on {@code listen} (port 0: any free port, see {@link #port()}) and forwards each connection to {@code
   * target}, holding the bytes {@code oneWayDelayNanos} in each direction; {@code threads} event loops (epoll where
   * the platform has it).
   */
  public static LatencyProxy start(InetSocketAddress listen, InetSocketAddress target, long oneWayDelayNanos,
                                   int threads) throws InterruptedException {
    if (oneWayDelayNanos < 0) {
      throw new IllegalArgumentException("the delay must not be negative");
    }
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(threads, io);
    LatencyProxy proxy = new LatencyProxy(group, epoll ? EpollSocketChannel.class : NioSocketChannel.class, target,
      oneWayDelayNanos);
    try {
      proxy.server = new ServerBootstrap().group(group)
        .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.AUTO_READ, false)
        .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
        .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel client) {
            proxy.accept(client);
          }
        })
        .bind(listen).sync().channel();
      return proxy;
    } catch (RuntimeException | InterruptedException e) {
      group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw e;
    }
  }

  /** The port it listens on. */
  public int port() {
    return ((InetSocketAddress) server.localAddress()).getPort();
  }

  /** The connections accepted so far. */
  public long connections() {
    return connections.get();
  }

  /** The bytes forwarded so far, both directions. */
  public long forwardedBytes() {
    return forwardedBytes.get();
  }

  /** The most bytes one direction of one connection held at once. */
  public long peakQueuedBytes() {
    return peakQueuedBytes.get();
  }

  /**
   * How faithful the delay was: {@code [held, mean µs late, longest µs late, held more than 100 µs late]}, "late"
   * being how long after its time a hold ended (a busy machine wakes the event loop late).
   */
  public long[] lateness() {
    long n = released.get();
    return new long[] {n, n == 0 ? 0 : lateNanos.get() / n / 1000, maxLateNanos.get() / 1000, lateOver100us.get()};
  }

  @Override
  public void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private void accept(SocketChannel client) {
    connections.incrementAndGet();
    Relay fromClient = new Relay(client);
    client.pipeline().addLast(fromClient);
    new Bootstrap().group(client.eventLoop()).channel(clientClass)
      .option(ChannelOption.TCP_NODELAY, true)
      .option(ChannelOption.AUTO_READ, false)
      .option(ChannelOption.ALLOW_HALF_CLOSURE, true)
      .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
      .handler(new ChannelInboundHandlerAdapter())
      .connect(target).addListener((ChannelFutureListener) connected -> {
        Channel backend = connected.channel();
        if (!connected.isSuccess() || !client.isActive()) {
          client.close();
          backend.close();
          return;
        }
        Relay fromBackend = new Relay(backend);
        backend.pipeline().addLast(fromBackend);
        fromClient.pair(fromBackend);
        fromBackend.pair(fromClient);
        client.read();
        backend.read();
      });
  }

  /**
   * One direction: what {@code source} reads goes to the peer relay's channel after the delay. Confined to the
   * connection's event loop.
   */
  private final class Relay extends ChannelInboundHandlerAdapter {
    private final Channel source;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private Relay peer;
    private long queuedBytes;
    private boolean drainScheduled;
    private boolean ended;
    private boolean finDelivered;

    Relay(Channel source) {
      this.source = source;
    }

    void pair(Relay other) {
      peer = other;
    }

    private Channel destination() {
      return peer.source;
    }

    /** The source ended ({@link Pending#SHUTDOWN} or {@link Pending#CLOSE}): passed on behind its last bytes. */
    private void end(ByteBuf how) {
      if (peer == null || ended) {
        return;
      }
      ended = true;
      if (delayNanos == 0) {
        pass(how, destination());
      } else {
        enqueue(new Pending(System.nanoTime() + delayNanos, how));
      }
    }

    /** Writes the bytes, or passes on the source's end: a FIN as a FIN, a close as a close once the writes are out. */
    private void pass(ByteBuf bytes, Channel out) {
      if (bytes == Pending.SHUTDOWN) {
        finDelivered = true;
        boolean both = peer.finDelivered;
        // Netty fails the writes still queued when the output is shut or the channel closed: after the last write
        out.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener((ChannelFutureListener) written -> {
          if (both) {
            // both FINs passed on: nothing more can come either way
            out.close();
            source.close();
          } else if (out instanceof DuplexChannel duplex) {
            duplex.shutdownOutput();
          }
        });
      } else if (bytes == Pending.CLOSE) {
        out.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
      } else {
        out.write(bytes, out.voidPromise());
      }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf bytes = (ByteBuf) msg;
      if (peer == null || ended) {
        ReferenceCountUtil.release(bytes);
        return;
      }
      forwardedBytes.addAndGet(bytes.readableBytes());
      if (delayNanos == 0) {
        pass(bytes, destination());
        return;
      }
      enqueue(new Pending(System.nanoTime() + delayNanos, bytes));
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      if (peer == null) {
        return;
      }
      if (delayNanos == 0) {
        destination().flush();
      }
      readIfRoom();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      // this channel is the destination of the peer's direction: it may read again once this one takes more
      if (peer != null) {
        peer.readIfRoom();
      }
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
      // the source sent its FIN: the destination gets it after the bytes before it, and may still answer
      if (event instanceof ChannelInputShutdownEvent) {
        end(Pending.SHUTDOWN);
      }
      ctx.fireUserEventTriggered(event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      end(Pending.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }

    private void enqueue(Pending pending) {
      queue.addLast(pending);
      if (!pending.isEnd()) {
        queuedBytes += pending.bytes.readableBytes();
        peakQueuedBytes.accumulateAndGet(queuedBytes, Math::max);
      }
      if (!drainScheduled) {
        drainScheduled = true;
        source.eventLoop().schedule(this::drain, Math.max(0, pending.due - System.nanoTime()), TimeUnit.NANOSECONDS);
      }
    }

    /** Writes everything due, then waits for the next head's time. */
    private void drain() {
      drainScheduled = false;
      Channel out = destination();
      long now = System.nanoTime();
      boolean wrote = false;
      Pending head;
      while ((head = queue.peekFirst()) != null && head.due - now <= 0) {
        queue.removeFirst();
        late(now - head.due);
        if (!head.isEnd()) {
          queuedBytes -= head.bytes.readableBytes();
        }
        pass(head.bytes, out);
        wrote = true;
      }
      if (wrote) {
        out.flush();
      }
      if (head != null) {
        drainScheduled = true;
        source.eventLoop().schedule(this::drain, head.due - now, TimeUnit.NANOSECONDS);
      }
      readIfRoom();
    }

    private void late(long nanos) {
      released.incrementAndGet();
      lateNanos.addAndGet(nanos);
      maxLateNanos.accumulateAndGet(nanos, Math::max);
      if (nanos > 100_000) {
        lateOver100us.incrementAndGet();
      }
    }

    /** Reads on while this direction has room here and at its destination; else waits for a drain or writability. */
    void readIfRoom() {
      if (ended || !source.isActive()) {
        return;
      }
      if (queuedBytes < HIGH_WATER_BYTES && destination().isWritable()) {
        source.read();
      }
    }

  }

  /** Bytes, or the source's end ({@link #SHUTDOWN}, {@link #CLOSE}), that may leave at {@code due} (nanoTime). */
  private record Pending(long due, ByteBuf bytes) {
    /** The source's FIN: shut the destination's output, keep reading its answers. */
    static final ByteBuf SHUTDOWN = Unpooled.unreleasableBuffer(Unpooled.EMPTY_BUFFER.duplicate());
    /** The source closed (or was reset): close the destination once what came before is written. */
    static final ByteBuf CLOSE = Unpooled.unreleasableBuffer(Unpooled.EMPTY_BUFFER.duplicate());

    boolean isEnd() {
      return bytes == SHUTDOWN || bytes == CLOSE;
    }
  }
}
