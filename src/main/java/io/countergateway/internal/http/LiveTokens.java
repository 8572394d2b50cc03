package io.countergateway.internal.http;

import io.countergateway.config.AuthOptions;
import io.countergateway.config.ConfigException;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * The tokens the routes check, one set per gateway (shared by its event loops). With {@code auth.tokensFile}, the
 * file is read every {@code auth.tokensFileCheckInterval} through the Vert.x file system (never a blocking call on an event
 * loop) and its content compared by digest with what was read last, so a rotated Kubernetes Secret takes effect without
 * a restart. Its content, not its modification time and size: a token replaced by one of the same length with the
 * time kept ({@code cp -p}, a restored backup, a clock set back) changes neither. The file is a few lines. A file that cannot be read, holds a malformed entry or no token at all keeps the tokens in
 * force and logs an error: a rotation gone wrong never opens the gateway, nor locks out the tokens that worked.
 */
final class LiveTokens {
  private static final Logger LOG = LoggerFactory.getLogger(LiveTokens.class);

  private final Vertx vertx;
  private volatile AuthOptions current;
  /** The SHA-256 of the file's content when last read; null before the first check. */
  private byte[] lastSeen;
  private boolean checking;
  /** The last failure to read the file, logged once. */
  private String lastFailure;

  LiveTokens(Vertx vertx, AuthOptions initial) {
    this.vertx = vertx;
    this.current = initial;
    if (initial.getTokensFile() != null) {
      vertx.setPeriodic(initial.getTokensFileCheckMs(), id -> check());
    }
  }

  AuthOptions current() {
    return current;
  }

  /** Runs on the context that created this (one timer per gateway); one check at a time. */
  private void check() {
    if (checking) {
      return;
    }
    checking = true;
    String file = current.getTokensFile();
    vertx.fileSystem().readFile(file)
      .onSuccess(content -> {
        lastFailure = null;
        byte[] seen = digest(content);
        if (!Arrays.equals(seen, lastSeen)) {
          lastSeen = seen;
          reload(file, content.toString());
        }
      })
      .onFailure(e -> {
        // a file that stays unreadable (a deleted Secret) is logged once, not at every check
        String failure = String.valueOf(e.getMessage());
        if (!failure.equals(lastFailure)) {
          lastFailure = failure;
          LOG.atError().addKeyValue("event", "tokens_reload_failed").addKeyValue("key", AuthOptions.TOKENS_FILE.name())
            .log("cannot read {}, the tokens in force stay: {}", file, failure);
        }
      })
      .onComplete(done -> checking = false);
  }

  private void reload(String file, String content) {
    AuthOptions reloaded;
    try {
      reloaded = current.reloaded(content);
    } catch (ConfigException e) {
      LOG.atError().addKeyValue("event", "tokens_reload_failed").addKeyValue("key", AuthOptions.TOKENS_FILE.name())
        .log("{} refused, the tokens in force stay: {}", file, e.getMessage());
      return;
    }
    if (!reloaded.sameTokens(current)) {
      current = reloaded;
      LOG.atInfo().addKeyValue("event", "tokens_reloaded").addKeyValue("tokens", reloaded.tokenCount())
        .log("tokens reloaded from {}", file);
    }
  }

  private static byte[] digest(Buffer content) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(content.getBytes());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
