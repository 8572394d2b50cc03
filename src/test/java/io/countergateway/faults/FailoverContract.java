package io.countergateway.faults;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * What the failover tests of both databases share: a Vert.x of their own for the load and the checks, and the log
 * lines of each test's gateway, for what its start said ({@code replication:}, warnings). A failover itself runs with
 * {@link FailoverUnderLoad#run}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FailoverContract {
  protected Vertx tools;
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
  private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);

  @BeforeAll
  void startTools() {
    tools = Vertx.vertx();
  }

  @AfterAll
  void closeTools() {
    Faults.await(tools.close(), 30);
  }

  @BeforeEach
  void listen() {
    logged.list.clear();
    logged.start();
    root.addAppender(logged);
  }

  @AfterEach
  void stopListening() {
    root.detachAppender(logged);
  }

  /** The lines logged since the test began that start with {@code start}. */
  protected List<String> loggedLines(String start) {
    return logged.list.stream().map(ILoggingEvent::getFormattedMessage).filter(line -> line.startsWith(start))
      .toList();
  }
}
