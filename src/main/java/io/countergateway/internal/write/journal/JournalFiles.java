package io.countergateway.internal.write.journal;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;

/**
 * Every file operation the journal makes, and nothing else: the journal's classes never touch {@code java.nio.file}
 * themselves, so a test can put a file system under them that counts operations, crashes after any one of them, fails
 * a write or a force, runs out of space or flips a byte (src/DESIGN.md §4 "Journal").
 *
 * <p>Methods block; the journal calls them on its file worker and its writer thread, never on an event loop.
 */
public interface JournalFiles {
  /** An open file. */
  interface Channel extends Closeable {
    /** Writes all of {@code bytes} at {@code position}. */
    void write(ByteBuffer bytes, long position) throws IOException;

    /** {@code fdatasync} (or {@code fsync} with {@code metadata}): what was written reaches the disk. */
    void force(boolean metadata) throws IOException;

    /** Cuts the file to {@code size} bytes. */
    void truncate(long size) throws IOException;
  }

  /** A new file opened for writing; fails if one of that name exists. */
  Channel create(Path file) throws IOException;

  /** An existing file opened for writing. */
  Channel open(Path file) throws IOException;

  /** The whole file, read only (mapped where the platform can). */
  ByteBuffer read(Path file) throws IOException;

  /** Deletes the file if it exists. The name is gone for good only after {@link #syncDirectory}. */
  void delete(Path file) throws IOException;

  /** Renames a file, replacing nothing; atomic. The new name is durable only after {@link #syncDirectory}. */
  void rename(Path from, Path to) throws IOException;

  /** The names of the files in {@code dir}. */
  List<Path> list(Path dir) throws IOException;

  /** Forces the directory's entries: files made, renamed and deleted in it stay so after a machine crash. */
  void syncDirectory(Path dir) throws IOException;

  /** Creates the directory and its parents if missing. */
  void createDirectories(Path dir) throws IOException;

  /**
   * What names the file itself (its inode), or null when no file has that name: the journal compares its open
   * segment's with the one {@code journal.dir} names now, to notice the directory removed under it. Not an operation
   * on the journal's bytes, so fault tests do not count it.
   */
  Object fileKey(Path file) throws IOException;

  /** An exclusive lock on {@code file} (created if missing), held until closed; null when another process holds it. */
  Closeable lock(Path file) throws IOException;

  /** The machine's file system. */
  static JournalFiles disk() {
    return DiskFiles.INSTANCE;
  }
}
