package io.countergateway.store;

import io.countergateway.testing.EventLoop;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fence's advance beside the source's own attempts, and its routing once a source was found closed, on a scripted
 * database side (FlushFenceIT: on real ones).
 */
@DisplayName("The flush fence")
class FlushFenceTest {
  private Vertx vertx;
  private Context loop;
  private final List<String> deleted = new ArrayList<>();
  private final List<String> registered = new ArrayList<>();
  private FlushFence.Closure closure;
  /** Each advance sent, as "fence [ids]"; it answers when the test completes {@link #advanceAnswer}. */
  private final List<String> advances = new ArrayList<>();
  private Promise<Boolean> advanceAnswer;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    loop = vertx.getOrCreateContext();
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private FlushFence fence() {
    // ticked by hand only
    return EventLoop.call(loop, () -> new FlushFence(vertx, new FlushFence.Sql() {
      @Override
      public Future<Void> register(String source) {
        registered.add(source);
        return Future.succeededFuture();
      }

      @Override
      public Future<Boolean> advance(String source, long fence, List<String> ids) {
        advances.add(fence + " " + ids);
        advanceAnswer = Promise.promise();
        return advanceAnswer.future();
      }

      @Override
      public Future<FlushFence.Closure> closure(String source) {
        return Future.succeededFuture(closure);
      }

      @Override
      public Future<Void> delete(String source) {
        deleted.add(source);
        return Future.succeededFuture();
      }
    }, TimeUnit.HOURS.toMillis(1)));
  }

  private static Flush flush(String id) {
    return new Flush(id, List.of(new FlushRow("likes", "a", (short) 0, 1)));
  }

  private <T> T onLoop(java.util.concurrent.Callable<Future<T>> work) {
    Future<T> future = EventLoop.call(loop, work);
    try {
      return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private void onLoopRun(Runnable work) {
    EventLoop.call(loop, () -> {
      work.run();
      return null;
    });
  }

  private static Throwable failure(Runnable work) {
    try {
      work.run();
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  @Test
  @DisplayName("a closed source's flushes: those whose ids it holds are committed, the others go on under one successor")
  void closedSourceRoutesToASuccessor() {
    FlushFence fence = fence();
    for (String id : List.of("s-0:0", "s-0:1", "s-0:2")) {
      onLoop(() -> fence.beforeWrite(flush(id)));
    }
    closure = new FlushFence.Closure(FlushFence.CLOSED, Set.of("s-0:1", "s-0:2.0"));
    onLoop(() -> fence.resolve("s-0"));
    assertThat(deleted).as("the closed source holds nothing any more").containsExactly("s-0");

    assertThat(onLoop(() -> fence.route(flush("s-0:1"))).alreadyCommitted()).isTrue();
    assertThat(onLoop(() -> fence.route(flush("s-0:2.0"))).alreadyCommitted()).as("a committed half").isTrue();
    String moved = onLoop(() -> fence.route(flush("s-0:0"))).flush().id();
    String successor = FlushId.source(moved);
    assertThat(successor).isNotEqualTo("s-0").endsWith("-0");
    assertThat(moved).isEqualTo(successor + ":0");
    assertThat(onLoop(() -> fence.route(flush("s-0:2.1"))).flush().id()).isEqualTo(successor + ":2.1");
    assertThat(onLoop(() -> fence.route(flush("s-0:3"))).flush().id()).as("a flush formed later").isEqualTo(successor + ":3");
  }

  @Test
  @DisplayName("a source that vanished: a flush with an attempt of unknown outcome cannot be resolved, the others go on")
  void vanishedSource() {
    FlushFence fence = fence();
    onLoop(() -> fence.beforeWrite(flush("s-1:0")));
    onLoop(() -> fence.beforeWrite(flush("s-1:1")));
    onLoopRun(() -> fence.ambiguous(flush("s-1:0")));
    closure = new FlushFence.Closure(null, Set.of());
    onLoop(() -> fence.resolve("s-1"));

    assertThat(failure(() -> onLoop(() -> fence.route(flush("s-1:0"))))).isInstanceOf(FlushOutcomeUnknownException.class);
    assertThat(FlushId.source(onLoop(() -> fence.route(flush("s-1:1"))).flush().id())).isNotEqualTo("s-1");
    assertThat(deleted).as("nothing left to delete").isEmpty();
  }

  @Test
  @DisplayName("the successor keeps the closed source's unsettled sequences open, so its fence never passes them")
  void successorInheritsOpenSequences() {
    FlushFence fence = fence();
    onLoop(() -> fence.beforeWrite(flush("s-2:4")));
    closure = new FlushFence.Closure(FlushFence.CLOSED, Set.of());
    onLoop(() -> fence.resolve("s-2"));
    // a later flush is written under the successor first, then the old one: it must still be open there
    Flush later = onLoop(() -> fence.route(flush("s-2:5"))).flush();
    onLoop(() -> fence.beforeWrite(later));
    Flush earlier = onLoop(() -> fence.route(flush("s-2:4"))).flush();
    onLoop(() -> fence.beforeWrite(earlier));
    onLoopRun(() -> {
      fence.written(later);
      fence.settled(flush("s-2:5"));
    });
    assertThat(deleted).as("the closed source, resolved").containsExactly("s-2");
    // retire deletes only sources with nothing open: the successor still has sequence 4 open
    onLoop(fence::retire);
    assertThat(deleted).containsExactly("s-2");
    onLoopRun(() -> fence.settled(flush("s-2:4")));
    onLoop(fence::retire);
    assertThat(deleted).containsExactly("s-2", FlushId.source(later.id()));
  }

  @Test
  @DisplayName("once the replay's flushes are settled, the earlier runs' sources they wrote under are deleted, the live one and any still open kept")
  void replayedSourcesRetire() {
    FlushFence fence = fence();
    for (String id : List.of("old-0:4", "older-0:9", "live-0:0")) {
      onLoop(() -> fence.beforeWrite(flush(id)));
    }
    onLoop(() -> {
      fence.settled(flush("old-0:4"));
      return Future.succeededFuture();
    });
    onLoop(() -> fence.retireAllBut("live-0"));
    assertThat(deleted).as("older-0 still has an open flush").containsExactly("old-0");
  }

  /** On the loop, as the store and the writer tell it: the attempt committed the flush, then its requests were answered. */
  private void committedAndSettled(FlushFence fence, Flush flush) {
    onLoopRun(() -> {
      fence.written(flush);
      fence.attemptEnded(flush);
      fence.settled(flush);
    });
  }

  private void tick(FlushFence fence) {
    onLoopRun(fence::tick);
  }

  @Test
  @DisplayName("an advance waits for the source's attempts in flight, and an attempt that wants to go meanwhile waits for the advance, so neither waits for the other's row lock")
  void advanceAndAttemptsNeverOverlap() {
    FlushFence fence = fence();
    onLoop(() -> fence.beforeWrite(flush("s-3:0")));
    onLoop(() -> fence.beforeWrite(flush("s-3:1")));
    committedAndSettled(fence, flush("s-3:0"));
    tick(fence);
    assertThat(advances).as("s-3:1 is still in flight").isEmpty();

    Future<Void> next = EventLoop.call(loop, () -> fence.beforeWrite(flush("s-3:2")));
    committedAndSettled(fence, flush("s-3:1"));
    assertThat(advances).as("sent once nothing is in flight, past the flushes settled by then").containsExactly("1 [s-3:0]");
    assertThat(next.isComplete()).as("the next attempt waits for the advance").isFalse();

    EventLoop.call(loop, () -> advanceAnswer.tryComplete(true));
    onLoop(() -> next);
    tick(fence);
    assertThat(advances).as("nothing settled since, and the heartbeat is not due").hasSize(1);
  }

  @Test
  @DisplayName("an advance that fails lets the waiting attempts go, and its ids go with the next advance")
  void failedAdvanceReleasesAttempts() {
    FlushFence fence = fence();
    onLoop(() -> fence.beforeWrite(flush("s-4:0")));
    committedAndSettled(fence, flush("s-4:0"));
    tick(fence);
    assertThat(advances).containsExactly("1 [s-4:0]");
    Future<Void> next = EventLoop.call(loop, () -> fence.beforeWrite(flush("s-4:1")));
    EventLoop.call(loop, () -> advanceAnswer.tryFail(new IllegalStateException("connection lost")));
    onLoop(() -> next);
    committedAndSettled(fence, flush("s-4:1"));
    tick(fence);
    assertThat(advances).containsExactly("1 [s-4:0]", "2 [s-4:0, s-4:1]");
  }
}
