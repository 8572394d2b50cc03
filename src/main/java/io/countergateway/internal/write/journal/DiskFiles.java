package io.countergateway.internal.write.journal;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/** {@link JournalFiles} on the machine's file system, through {@link FileChannel}. */
final class DiskFiles implements JournalFiles {
  static final DiskFiles INSTANCE = new DiskFiles();

  private DiskFiles() {
  }

  private record Open(FileChannel channel) implements Channel {
    @Override
    public void write(ByteBuffer bytes, long position) throws IOException {
      long at = position;
      while (bytes.hasRemaining()) {
        at += channel.write(bytes, at);
      }
    }

    @Override
    public void force(boolean metadata) throws IOException {
      channel.force(metadata);
    }

    @Override
    public void truncate(long size) throws IOException {
      channel.truncate(size);
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }

  @Override
  public Channel create(Path file) throws IOException {
    return new Open(FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE));
  }

  @Override
  public Channel open(Path file) throws IOException {
    return new Open(FileChannel.open(file, StandardOpenOption.WRITE));
  }

  @Override
  public ByteBuffer read(Path file) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = channel.size();
      if (size > Integer.MAX_VALUE) {
        throw new IOException(file + " is larger than 2 GiB");
      }
      return channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
    }
  }

  @Override
  public void delete(Path file) throws IOException {
    Files.deleteIfExists(file);
  }

  @Override
  public void rename(Path from, Path to) throws IOException {
    if (Files.exists(to)) {
      // rename(2) would replace it
      throw new java.nio.file.FileAlreadyExistsException(to.toString());
    }
    Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
  }

  @Override
  public List<Path> list(Path dir) throws IOException {
    List<Path> names = new ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
      files.forEach(names::add);
    }
    return names;
  }

  @Override
  public void syncDirectory(Path dir) throws IOException {
    try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
      directory.force(true);
    } catch (IOException notSupported) {
      // some file systems cannot sync a directory (the call fails with EINVAL); the files' own fsync is what they offer
      if (!Files.isDirectory(dir)) {
        throw notSupported;
      }
    }
  }

  @Override
  public void createDirectories(Path dir) throws IOException {
    Files.createDirectories(dir);
  }

  @Override
  public Object fileKey(Path file) throws IOException {
    try {
      return Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
    } catch (java.nio.file.NoSuchFileException gone) {
      return null;
    }
  }

  @Override
  public Closeable lock(Path file) throws IOException {
    FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException sameJvm) {
      lock = null;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
    if (lock == null) {
      channel.close();
      return null;
    }
    FileLock held = lock;
    return () -> {
      try {
        held.release();
      } finally {
        channel.close();
      }
    };
  }
}
