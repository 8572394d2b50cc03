package io.countergateway;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Which local process holds what a start needs (a TCP port, a lock file), read from Linux's {@code /proc}, so that a
 * refused start can name it. Best effort: where {@code /proc} is missing or does not show the holder (another user's
 * process, another network namespace), the answer is null and the start says less. Blocking file reads: call it off
 * the event loop.
 */
final class LocalProcesses {
  private static final Path PROC = Path.of("/proc");
  /** The state column of /proc/net/tcp for a listening socket. */
  private static final String LISTEN = "0A";
  private static final int MAX_COMMAND_CHARS = 120;

  private LocalProcesses() {
  }

  /** The process listening on TCP {@code port} (IPv4 or IPv6, any address), as "pid N, command"; null if unknown. */
  static String listeningOn(int port) {
    Set<String> inodes = new HashSet<>();
    for (String table : List.of("net/tcp", "net/tcp6")) {
      for (String line : lines(PROC.resolve(table))) {
        // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
        String[] fields = line.strip().split("\\s+");
        if (fields.length > 9 && LISTEN.equals(fields[3]) && fields[1].contains(":")
          && Integer.parseInt(fields[1].substring(fields[1].indexOf(':') + 1), 16) == port) {
          inodes.add("socket:[" + fields[9] + "]");
        }
      }
    }
    return inodes.isEmpty() ? null : owningProcess(inodes);
  }

  /** The process holding a POSIX lock on {@code file} (what {@code FileChannel.lock} takes), or null if unknown. */
  static String lockingFile(Path file) {
    long inode;
    try {
      inode = ((Number) Files.getAttribute(file, "unix:ino")).longValue();
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return null;
    }
    for (String line : lines(PROC.resolve("locks"))) {
      // 1: POSIX  ADVISORY  WRITE 12345 fd:01:1234567 0 EOF
      String[] fields = line.strip().split("\\s+");
      if (fields.length > 5 && "POSIX".equals(fields[1]) && fields[5].endsWith(":" + inode)) {
        return describe(Long.parseLong(fields[4]));
      }
    }
    return null;
  }

  /** "pid N, its command line", shortened; the pid alone when its command is not readable. */
  static String describe(long pid) {
    String command = ProcessHandle.of(pid).flatMap(process -> process.info().commandLine()).orElse("");
    if (command.isEmpty()) {
      return "pid " + pid;
    }
    return "pid " + pid + ", " + (command.length() > MAX_COMMAND_CHARS
      ? command.substring(0, MAX_COMMAND_CHARS) + "…" : command);
  }

  /** The process one of whose file descriptors is one of {@code links} ("socket:[inode]"). */
  private static String owningProcess(Set<String> links) {
    try (DirectoryStream<Path> processes = Files.newDirectoryStream(PROC, "[0-9]*")) {
      for (Path process : processes) {
        try (DirectoryStream<Path> descriptors = Files.newDirectoryStream(process.resolve("fd"))) {
          for (Path descriptor : descriptors) {
            if (links.contains(Files.readSymbolicLink(descriptor).toString())) {
              return describe(Long.parseLong(process.getFileName().toString()));
            }
          }
        } catch (IOException | SecurityException e) {
          // another user's process, or one that ended meanwhile
        }
      }
    } catch (IOException | SecurityException e) {
      return null;
    }
    return null;
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException | SecurityException e) {
      return List.of();
    }
  }
}
