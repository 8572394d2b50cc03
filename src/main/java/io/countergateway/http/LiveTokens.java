package io.countergateway.http;

import io.countergateway.config.AuthOptions;
import io.countergateway.config.ConfigException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.file.FileProps;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tokens the routes check, one set per gateway (shared by its event loops). With {@code auth.tokensFile}, the
 * file's modification time and size are checked every {@code auth.tokensFileCheckMs} through the Vert.x file system
 * (never a blocking call on an event loop) and a changed file is read again, so a rotated Kubernetes Secret takes
 * effect without a restart. A file that cannot be read, holds a malformed entry or no token at all keeps the tokens in
 * force and logs an error: a rotation gone wrong never opens the gateway, nor locks out the tokens that worked.
 */
final class LiveTokens {
  private static final Logger LOG = LoggerFactory.getLogger(LiveTokens.class);

  private final Vertx vertx;
  private volatile AuthOptions current;
  /** The file's modification time and size when last read; null before the first check. */
  private String lastSeen;
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
    vertx.fileSystem().props(file)
      .compose(props -> {
        String seen = stamp(props);
        if (seen.equals(lastSeen)) {
          return Future.<Void>succeededFuture();
        }
        return vertx.fileSystem().readFile(file).map(content -> {
          lastSeen = seen;
          lastFailure = null;
          reload(file, content.toString());
          return null;
        });
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

  private static String stamp(FileProps props) {
    return props.lastModifiedTime() + "/" + props.size();
  }
}
