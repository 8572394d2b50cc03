package io.countergateway.internal.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import io.countergateway.config.LoggingOptions;
import net.logstash.logback.encoder.LogstashEncoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.OutputStream;

/**
 * Points Logback's root logger at one stream in the configured format: readable text, or one JSON object per line
 * ({@code @timestamp}, {@code level}, {@code logger_name}, {@code message} and each event's key-value pairs as
 * fields) for log shippers. {@code logback.xml} gives the text format until the configuration is loaded.
 */
public final class LogSetup {
  /** Text lines: time, level, thread, logger, message, then the event's key=value pairs. */
  static final String TEXT_PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{30} - %msg %kvp%n";

  private LogSetup() {
  }

  /** Standard output, where container runtimes collect logs. */
  public static void apply(LoggingOptions options) {
    install(options, new ConsoleAppender<>());
  }

  /** Into {@code target} instead (tests). */
  public static void apply(LoggingOptions options, OutputStream target) {
    OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();
    appender.setOutputStream(target);
    install(options, appender);
  }

  private static void install(LoggingOptions options, OutputStreamAppender<ILoggingEvent> appender) {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return;
    }
    appender.setContext(context);
    appender.setName("gateway");
    appender.setEncoder(encoder(options.getFormat(), context));
    appender.start();
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.detachAndStopAllAppenders();
    root.addAppender(appender);
    context.getLogger("io.countergateway").setLevel(Level.toLevel(options.getLevel(), Level.INFO));
  }

  private static Encoder<ILoggingEvent> encoder(LoggingOptions.Format format, LoggerContext context) {
    if (format == LoggingOptions.Format.JSON) {
      LogstashEncoder json = new LogstashEncoder();
      json.setContext(context);
      json.start();
      return json;
    }
    PatternLayoutEncoder text = new PatternLayoutEncoder();
    text.setContext(context);
    text.setPattern(TEXT_PATTERN);
    text.start();
    return text;
  }
}
