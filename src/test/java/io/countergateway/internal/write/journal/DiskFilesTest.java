package io.countergateway.internal.write.journal;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The journal's file operations on the machine's file system. */
@DisplayName("The journal's files on disk")
class DiskFilesTest {
  @TempDir
  Path dir;
  private final JournalFiles files = JournalFiles.disk();

  private static ByteBuffer text(String value) {
    return ByteBuffer.wrap(value.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("a file is made, written at offsets, forced, cut, read whole, renamed, listed and deleted")
  void lifeOfAFile() throws Exception {
    Path sub = dir.resolve("a/b");
    files.createDirectories(sub);
    Path file = sub.resolve("one");
    try (JournalFiles.Channel channel = files.create(file)) {
      channel.write(text("hello world"), 0);
      channel.write(text("W"), 6);
      channel.force(true);
      channel.truncate(7);
      channel.force(false);
    }
    assertThatThrownBy(() -> files.create(file)).isInstanceOf(FileAlreadyExistsException.class);
    try (JournalFiles.Channel channel = files.open(file)) {
      channel.write(text("!"), 7);
    }
    ByteBuffer read = files.read(file);
    assertThat(StandardCharsets.UTF_8.decode(read).toString()).isEqualTo("hello W!");
    Path renamed = sub.resolve("two");
    files.rename(file, renamed);
    assertThat(files.list(sub)).containsExactly(renamed);
    Files.writeString(file, "x");
    assertThatThrownBy(() -> files.rename(file, renamed)).as("a rename replaces nothing")
      .isInstanceOf(FileAlreadyExistsException.class);
    assertThat(Files.readString(renamed)).isEqualTo("hello W!");
    files.syncDirectory(sub);
    files.delete(renamed);
    files.delete(renamed); // gone already: nothing to do
    assertThat(files.list(sub)).containsExactly(file);
    assertThatThrownBy(() -> files.syncDirectory(dir.resolve("missing"))).isInstanceOf(java.io.IOException.class);
  }

  @Test
  @DisplayName("a lock is held by one holder at a time and free again once closed")
  void lock() throws Exception {
    Path file = dir.resolve("journal-0.lock");
    Closeable held = files.lock(file);
    assertThat(held).isNotNull();
    assertThat(files.lock(file)).as("held by this process").isNull();
    held.close();
    Closeable again = files.lock(file);
    assertThat(again).as("free again").isNotNull();
    again.close();
  }
}
