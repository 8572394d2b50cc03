package io.countergateway.internal.http;

import io.countergateway.internal.model.ApiError;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.netty.channel.socket.DuplexChannel;

/**
 * Reads request bodies only once a request is admitted (src/DESIGN.md §10): the route has already decided on the
 * headers (authorization, namespace), then this class checks the announced length against the limit, takes the bytes
 * from the gateway's body budget ({@link EdgeLimits}), sends {@code 100 Continue} if the client waits for it, and reads
 * under a deadline ({@code limits.bodyTimeout}). What replaces vertx-web's body handler on the write routes: that one
 * reads up to the limit before any handler of the route runs, so an unauthorised client could make the gateway hold a
 * megabyte per request (300 such connections ran a 512 MB heap out of memory).
 *
 * <p>A request refused before its body was read gets its JSON error with {@code Connection: close}, then a lingering
 * close as nginx's {@code lingering_close} does it: once the answer is written the connection's output is shut
 * (the client reads the answer and an end of stream), and what the client still sends is read and dropped until its
 * body ends, for at most {@link #LINGER_MS} and {@link #LINGER_BYTES}; then the connection is closed. Closing it with
 * the body's bytes still arriving would make the kernel answer them with a reset, which discards the answer at a client
 * that writes its whole request before it reads (Python's urllib, most HTTP libraries). One per event loop.
 */
final class BodyReader {
  /** How long a refused request's body is read and dropped at most (nginx: lingering_timeout 5 s). */
  static final long LINGER_MS = 5_000;
  /** What a refused request may still send before its connection is closed at once: the largest body a client sends. */
  static final long LINGER_BYTES = 16 * 1024 * 1024;
  /**
   * Refused requests lingering at once per event loop. Past it a refused connection is closed once its answer is
   * written, as a flood of refusals deserves: 3,000 senders of unwanted megabytes would otherwise keep the loops busy
   * reading them (readiness went unanswered), while one client's mistake always finds a place.
   */
  static final int MAX_LINGERING = 32;
  private static final String LINGERING_KEY = "cg.lingering";
  private static final Buffer EMPTY = Buffer.buffer(0);
  private static final CharSequence EXPECT = HttpHeaders.createOptimized("Expect");
  private static final CharSequence CONTENT_LENGTH = HttpHeaders.createOptimized("Content-Length");
  static final ApiError TOO_LARGE = new ApiError(413, "body_too_large", "the body exceeds limits.maxBodyBytes", "body");

  private final Vertx vertx;
  private final EdgeLimits edge;
  private final long timeoutMs;

  BodyReader(Vertx vertx, EdgeLimits edge, long timeoutMs) {
    this.vertx = vertx;
    this.edge = edge;
    this.timeoutMs = timeoutMs;
  }

  /**
   * Reads the body (at most {@code limit} bytes) and hands it to {@code then}; {@code keep} false reads and drops it
   * (beacon bodies), taking nothing from the budget. Refusals (413, 417, 408, 503) are answered here and {@code then}
   * is not called.
   */
  void read(HttpServerRequest request, long limit, boolean keep, Handler<Buffer> then) {
    String expect = request.headers().get(EXPECT);
    if (expect != null && !expect.equalsIgnoreCase("100-continue")) {
      refuse(request, new ApiError(417, "expectation_failed", "the only expectation supported is Expect: 100-continue",
        "Expect"));
      return;
    }
    if (request.isEnded()) {
      then.handle(EMPTY);
      return;
    }
    long announced = contentLength(request.headers().get(CONTENT_LENGTH));
    if (announced > limit) {
      refuse(request, TOO_LARGE);
      return;
    }
    new Reading(request, limit, keep, announced, then).start(expect != null);
  }

  /** One body being read: its bytes, its share of the budget and its deadline. */
  private final class Reading {
    private final HttpServerRequest request;
    private final long limit;
    private final boolean keep;
    private final long announced;
    private final Handler<Buffer> then;
    private Buffer body;
    private long received;
    private long reserved;
    private long timer = -1;
    private boolean settled;

    Reading(HttpServerRequest request, long limit, boolean keep, long announced, Handler<Buffer> then) {
      this.request = request;
      this.limit = limit;
      this.keep = keep;
      this.announced = announced;
      this.then = then;
    }

    void start(boolean continueExpected) {
      if (keep && announced > 0) {
        if (!edge.reserveBody(announced)) {
          overBudget();
          return;
        }
        reserved = announced;
      }
      if (keep) {
        body = announced > 0 ? Buffer.buffer((int) announced) : Buffer.buffer();
      }
      timer = vertx.setTimer(timeoutMs, id -> {
        timer = -1;
        if (settle()) {
          edge.refuse(EdgeLimits.Refusal.BODY_TIMEOUT);
          refuse(request, new ApiError(408, "body_timeout",
            "the request body did not arrive whole within limits.bodyTimeout", "body"));
        }
      });
      request.handler(this::chunk);
      request.endHandler(ended -> {
        if (settleKeepingBudget()) {
          Buffer whole = keep ? body : EMPTY;
          body = null;
          try {
            then.handle(whole);
          } catch (RuntimeException unforeseen) {
            // whoever reads a body answers its request; one that throws must not leave the client waiting
            Responses.error(request.response(), unforeseen instanceof ApiError api ? api
              : new ApiError(500, "internal_error", "unexpected error", null));
          } finally {
            // the body was parsed on this call; what it became is bounded by the coalescer's own limits
            edge.releaseBody(reserved);
            reserved = 0;
          }
        }
      });
      request.exceptionHandler(failure -> settle());
      if (continueExpected) {
        request.response().writeContinue();
      }
    }

    private void chunk(Buffer chunk) {
      if (settled) {
        return;
      }
      received += chunk.length();
      if (received > limit) {
        settle();
        refuse(request, TOO_LARGE);
        return;
      }
      if (!keep) {
        return;
      }
      if (received > reserved) {
        // no Content-Length (chunked): the budget is taken as the bytes come
        long more = received - reserved;
        if (!edge.reserveBody(more)) {
          settle();
          overBudget();
          return;
        }
        reserved += more;
      }
      body.appendBuffer(chunk);
    }

    private void overBudget() {
      edge.refuse(EdgeLimits.Refusal.BODY_BUDGET);
      refuse(request, ApiError.unavailable("overloaded",
        "the gateway holds as many request bodies as limits.maxBodyBytesInFlight allows; retry later"));
    }

    /** True the first time: the reading is over (refused, failed, the client gone); its budget is given back. */
    private boolean settle() {
      if (!settleKeepingBudget()) {
        return false;
      }
      body = null;
      edge.releaseBody(reserved);
      reserved = 0;
      return true;
    }

    /** As {@link #settle}, for the body read whole: its budget is given back once it has been handed on. */
    private boolean settleKeepingBudget() {
      if (settled) {
        return false;
      }
      settled = true;
      if (timer >= 0) {
        vertx.cancelTimer(timer);
        timer = -1;
      }
      return true;
    }

    @Override
    public String toString() {
      return "body of " + request.path();
    }
  }

  /**
   * Answers {@code error} to a request whose body was not (or not wholly) read, and closes the connection once the
   * answer is out and the client stopped sending, or after {@link #LINGER_MS}: nothing it sends more is kept.
   */
  void refuse(HttpServerRequest request, ApiError error) {
    refuseUnread(vertx, request, error);
  }

  /** As {@link #refuse}, for callers that have no reader (the authorization check). */
  static void refuseUnread(Vertx vertx, HttpServerRequest request, ApiError error) {
    HttpServerResponse response = request.response();
    if (request.isEnded() || !hasBody(request) || response.ended() || response.closed()) {
      Responses.error(response, error);
      return;
    }
    if (request.version() != HttpVersion.HTTP_2) {
      response.putHeader(HttpHeaders.CONNECTION, HttpHeaders.CLOSE);
    }
    int[] lingeringHere = lingeringOnThisLoop();
    if (lingeringHere[0] >= MAX_LINGERING) {
      Responses.errorWritten(response, error).onComplete(written -> close(request));
      return;
    }
    Lingering lingering = new Lingering(vertx, request, lingeringHere);
    Responses.errorWritten(response, error).onComplete(written -> lingering.answered());
  }

  /** The count of refused requests lingering on the calling event loop (its context's data). */
  private static int[] lingeringOnThisLoop() {
    Context context = Vertx.currentContext();
    if (context == null) {
      return new int[1];
    }
    Object held = context.get(LINGERING_KEY);
    if (held instanceof int[] count) {
      return count;
    }
    int[] count = new int[1];
    context.put(LINGERING_KEY, count);
    return count;
  }

  /** A refused request's lingering close: its body read and dropped, within bounds, until the connection can close. */
  private static final class Lingering {
    private final Vertx vertx;
    private final HttpServerRequest request;
    private final long timer;
    private final int[] lingering;
    private long dropped;
    private boolean answered;
    private boolean ended;
    private boolean closed;

    Lingering(Vertx vertx, HttpServerRequest request, int[] lingering) {
      this.vertx = vertx;
      this.request = request;
      this.lingering = lingering;
      lingering[0]++;
      this.timer = vertx.setTimer(LINGER_MS, id -> close());
      try {
        request.handler(chunk -> {
          dropped += chunk.length();
          if (dropped > LINGER_BYTES) {
            close();
          }
        });
        // the request failed (a malformed chunk, the client gone): Vert.x ends the connection itself, at once; a
        // close of ours now would be a graceful one, which writes the answer first
        request.exceptionHandler(ignored -> release());
        request.endHandler(end -> {
          ended = true;
          closeWhenDone();
        });
        request.resume();
      } catch (IllegalStateException alreadyRead) {
        // the request ended meanwhile: nothing more will come
        ended = true;
      }
    }

    /** The answer is written: the client may read it now, and our side of the connection is done sending. */
    void answered() {
      answered = true;
      if (request.version() != HttpVersion.HTTP_2 && !ended && !request.isSSL()
        && NettyChannels.of(request.connection()) instanceof DuplexChannel duplex) {
        // TLS is left whole (a half-close would cut it without close_notify): the client reads the answer all the same
        duplex.shutdownOutput();
      }
      closeWhenDone();
    }

    private void closeWhenDone() {
      if (answered && ended) {
        close();
      }
    }

    private void close() {
      if (release()) {
        BodyReader.close(request);
      }
    }

    /** True the first time: the lingering is over, its place and timer given back. */
    private boolean release() {
      if (closed) {
        return false;
      }
      closed = true;
      lingering[0]--;
      vertx.cancelTimer(timer);
      return true;
    }
  }

  /** Whether the request announces a body: a Content-Length above 0, or a Transfer-Encoding. */
  static boolean hasBody(HttpServerRequest request) {
    String length = request.headers().get(CONTENT_LENGTH);
    return length != null && !length.equals("0") || request.headers().contains(HttpHeaders.TRANSFER_ENCODING);
  }

  private static void close(HttpServerRequest request) {
    if (request.version() == HttpVersion.HTTP_2) {
      request.response().reset();
    } else {
      request.connection().close();
    }
  }

  /** -1 when absent or not plain digits (the HTTP decoder refuses malformed ones before this). */
  static long contentLength(String header) {
    if (header == null || header.isEmpty() || header.length() > 18) {
      return -1;
    }
    for (int i = 0; i < header.length(); i++) {
      if (header.charAt(i) < '0' || header.charAt(i) > '9') {
        return -1;
      }
    }
    return Long.parseLong(header);
  }
}
