package io.countergateway.internal.write.journal;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A journal directory another gateway holds: the lock file of one of its streams is locked by a live process. Two
 * gateways on one {@code journal.dir} would replay each other's increments, so a start checks this before it touches
 * the database ({@link #heldLock}), and the recovery that takes the lock fails with this when another start won the
 * race since.
 */
public final class JournalInUse extends IllegalStateException {
  private static final Pattern LOCK_NAME = Pattern.compile("journal-\\d+\\.lock");

  private final transient Path lockFile;

  JournalInUse(Path dir, Path lockFile) {
    super("the journal directory " + dir + " is in use by another gateway (" + lockFile.getFileName()
      + " is held); give each gateway a journal.dir of its own");
    this.lockFile = lockFile;
  }

  /** The stream lock file another process (or another gateway of this one) holds. */
  public Path lockFile() {
    return lockFile;
  }

  static String lockName(int stream) {
    return "journal-" + stream + ".lock";
  }

  /**
   * A lock file in {@code dir} another gateway holds, or null when none is (or the directory does not exist yet). Each
   * stream's lock is taken and released at once, so a running gateway holding any one of them is seen. Blocking.
   */
  public static Path heldLock(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return null;
    }
    JournalFiles files = JournalFiles.disk();
    try (Stream<Path> entries = Files.list(dir)) {
      for (Path file : entries.filter(f -> LOCK_NAME.matcher(f.getFileName().toString()).matches()).sorted().toList()) {
        Closeable lock = files.lock(file);
        if (lock == null) {
          return file;
        }
        lock.close();
      }
    }
    return null;
  }
}
