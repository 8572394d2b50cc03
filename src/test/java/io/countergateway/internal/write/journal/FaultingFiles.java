package io.countergateway.internal.write.journal;

import io.countergateway.testing.TestBounds;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@link JournalFiles} in memory, with the faults a disk and a kernel have, for tests that crash the journal at any
 * file operation and open it again on what survived.
 *
 * <ul>
 *   <li><b>Counting</b>: every operation is numbered from 1 ({@link #operations()}, {@link #count(Op)}), so a test can
 *   run a workload once, then again with a crash at each operation in turn.</li>
 *   <li><b>Crash</b> ({@link #crashAt}, {@link #crashAfter}): from that operation on, every operation throws, as if the
 *   process (or the machine) were gone. {@link #afterCrash} then gives the files as a restart finds them.</li>
 *   <li><b>The page cache</b>: a write or truncate reaches "the disk" only when its file is forced, and a file made,
 *   renamed or deleted is so on disk only once its directory is synced. After a crash, {@link Survival} decides what
 *   was not yet durable: all of it (the process died, the page cache outlived it), none of it (the machine died), or a
 *   random part of it, page by page (4 KiB), so a frame can be cut short or missing before one that reached the
 *   disk.</li>
 *   <li><b>EIO</b> ({@link #failAt}): one operation throws; a failed force drops what it should have written, while
 *   the next force reports success (as Linux does after a writeback error).</li>
 *   <li><b>ENOSPC</b> ({@link #budget}): a write that would take the files' bytes past the budget throws; a deleted
 *   file still open keeps its bytes, as on Linux.</li>
 *   <li><b>Pause</b> ({@link #pauseAt}): one operation waits until the test lets it go.</li>
 *   <li><b>Leaks</b>: {@link #openChannels()} counts the channels not closed; a closed channel refuses writes.</li>
 *   <li><b>A flipped byte</b> ({@link #flip}): on disk and in the cache.</li>
 * </ul>
 */
public final class FaultingFiles implements JournalFiles {
  /** The operations, as counted. */
  public enum Op { CREATE, OPEN, WRITE, FORCE, TRUNCATE, READ, DELETE, RENAME, LIST, SYNC_DIRECTORY, MKDIRS, LOCK }

  /** What of the changes not yet durable is found after a crash. */
  public static final class Survival {
    /** The process died: the page cache outlived it, so everything written is there. */
    public static final Survival ALL = new Survival(null, true);
    /** The machine died: only what was forced (and names whose directory was synced) is there. */
    public static final Survival NONE = new Survival(null, false);

    private final Random random;
    private final boolean all;
    /** When set, every change survives but the pages of unforced writes this names ({@link #losing}). */
    private final java.util.function.BiPredicate<Path, Long> lost;
    /** The pages of unforced writes looked at so far, each once. */
    private int pages;

    private Survival(Random random, boolean all) {
      this(random, all, null);
    }

    private Survival(Random random, boolean all, java.util.function.BiPredicate<Path, Long> lost) {
      this.random = random;
      this.all = all;
      this.lost = lost;
    }

    /**
     * Everything not yet durable survives but the pages of {@code file}'s unforced writes that hold a byte of
     * {@code [from, to)}.
     */
    public static Survival losing(Path file, long from, long to) {
      return new Survival(null, true, (path, page) -> path.equals(file) && page + PAGE > from && page < to);
    }

    /**
     * Everything not yet durable survives but one page of one unforced write, the {@code n}-th looked at (from 0): the
     * kernel wrote back the pages around it, not that one.
     */
    public static Survival losingOnePage(int n) {
      int[] seen = {0};
      return new Survival(null, true, (path, page) -> seen[0]++ == n);
    }

    /** The pages of unforced writes this survival looked at: a crash case's pages to lose one by one. */
    public int pages() {
      return pages;
    }

    /** Whether the page at {@code page} of an unforced write to {@code file} reached the disk. */
    boolean survives(Path file, long page) {
      pages++;
      return lost != null ? !lost.test(file, page) : survives();
    }

    /** Each change not yet durable is there or not at random, from {@code seed}. */
    public static Survival random(long seed) {
      return new Survival(new Random(seed), false);
    }

    boolean survives() {
      return random == null ? all : random.nextBoolean();
    }
  }

  private static final int PAGE = 4096;

  private static final class Inode {
    byte[] data = new byte[0];
    int length;
    byte[] durable = new byte[0];
    int durableLength;
    /** Writes ({@code bytes} at {@code at}) and truncations ({@code bytes} null, to {@code at}) not yet forced. */
    final List<Change> unforced = new ArrayList<>();

    void write(byte[] bytes, long at) {
      int end = (int) at + bytes.length;
      if (end > data.length) {
        data = Arrays.copyOf(data, Math.max(end, data.length * 2));
      }
      System.arraycopy(bytes, 0, data, (int) at, bytes.length);
      length = Math.max(length, end);
    }

    void truncate(long size) {
      if (size < length) {
        Arrays.fill(data, (int) size, length, (byte) 0);
        length = (int) size;
      }
    }

    Inode copy(Survival survival, Path path) {
      Inode copy = new Inode();
      copy.data = Arrays.copyOf(durable, durableLength);
      copy.length = durableLength;
      for (Change change : unforced) {
        if (change.bytes == null) {
          if (survival.survives()) {
            copy.truncate(change.at);
          }
          continue;
        }
        // page by page: a write the kernel had not written back may reach the disk in part
        for (int from = 0; from < change.bytes.length; ) {
          int to = (int) Math.min(change.bytes.length, (change.at + from) / PAGE * PAGE + PAGE - change.at);
          if (survival.survives(path, (change.at + from) / PAGE * PAGE)) {
            copy.write(Arrays.copyOfRange(change.bytes, from, to), change.at + from);
          }
          from = to;
        }
      }
      copy.durable = Arrays.copyOf(copy.data, copy.length);
      copy.durableLength = copy.length;
      return copy;
    }
  }

  private record Change(byte[] bytes, long at) {
  }

  private final Map<Path, Inode> names = new TreeMap<>();
  private final Set<Path> directories = new HashSet<>();
  /** Channels open now, by file: a deleted file keeps its bytes on disk while one is open. */
  private final Map<Inode, Integer> open = new IdentityHashMap<>();
  private Op pauseOp;
  private int pauseAt;
  /** When set, {@link #pauseAt} and the crash at {@link #crashAt(Op, Path, int)} count this file's operations only. */
  private Path pauseFile;
  private Op crashOp;
  private Path crashFile;
  private int crashOpAt;
  private final Map<String, Integer> fileCounts = new java.util.HashMap<>();
  private boolean holding;
  private final java.util.concurrent.CountDownLatch reached = new java.util.concurrent.CountDownLatch(1);
  private Map<Path, Inode> durableNames = new TreeMap<>();
  private final Set<Path> locks = new HashSet<>();
  private final Map<Op, Integer> counts = new EnumMap<>(Op.class);
  private final List<String> log = new ArrayList<>();
  private long operations;
  private long crashAt = Long.MAX_VALUE;
  private Op crashAfterOp;
  private int crashAfterCount;
  private final Map<Op, Map<Integer, String>> failures = new EnumMap<>(Op.class);
  private long budget = Long.MAX_VALUE;
  private boolean crashed;

  /** From operation {@code k} (numbered from 1) on, every operation throws: operation k never happens. */
  public synchronized FaultingFiles crashAt(long k) {
    crashAt = k;
    return this;
  }

  /** Once the {@code n}-th operation of kind {@code op} is done, every later operation throws. */
  public synchronized FaultingFiles crashAfter(Op op, int n) {
    crashAfterOp = op;
    crashAfterCount = n;
    return this;
  }

  /** The {@code n}-th operation of kind {@code op} fails with {@code message} (an EIO); the others go on. */
  public synchronized FaultingFiles failAt(Op op, int n, String message) {
    failures.computeIfAbsent(op, o -> new LinkedHashMap<>()).put(n, message);
    return this;
  }

  /**
   * The {@code n}-th operation of kind {@code op} waits, before it happens, until {@link #resume()}: for a test to
   * act while, say, a segment is being made.
   */
  public synchronized FaultingFiles pauseAt(Op op, int n) {
    pauseOp = op;
    pauseAt = n;
    return this;
  }

  /** The {@code n}-th operation of kind {@code op} on {@code file} waits, as {@link #pauseAt(Op, int)}. */
  public synchronized FaultingFiles pauseAt(Op op, Path file, int n) {
    pauseAt(op, n);
    pauseFile = file;
    return this;
  }

  /** The {@code n}-th operation of kind {@code op} on {@code file} never happens: from it on, every operation throws. */
  public synchronized FaultingFiles crashAt(Op op, Path file, int n) {
    crashOp = op;
    crashFile = file;
    crashOpAt = n;
    return this;
  }

  /** Operations of kind {@code op} on {@code file} so far. */
  public synchronized int count(Op op, Path file) {
    return fileCounts.getOrDefault(op + " " + file, 0);
  }

  /** Waits until the paused operation is reached. */
  public void awaitPaused() throws InterruptedException {
    if (!reached.await(TestBounds.millis(10), java.util.concurrent.TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException("the paused operation was never reached");
    }
  }

  /** Lets the paused operation go on. */
  public synchronized void resume() {
    holding = false;
    notifyAll();
  }

  /** Channels not closed yet. */
  public synchronized int openChannels() {
    return open.values().stream().mapToInt(Integer::intValue).sum();
  }

  /** The files may hold at most {@code bytes} in all; a write past it fails with ENOSPC. */
  public synchronized FaultingFiles budget(long bytes) {
    budget = bytes;
    return this;
  }

  /** Flips every bit of the byte at {@code offset} of {@code file}, in the cache and on disk. */
  public synchronized void flip(Path file, long offset) {
    Inode inode = names.get(file);
    inode.data[(int) offset] ^= (byte) 0xFF;
    if (offset < inode.durableLength) {
      inode.durable[(int) offset] ^= (byte) 0xFF;
    }
  }

  /** Cuts {@code file} to {@code size} bytes, in the cache and on disk (a frame cut short by a crash). */
  public synchronized void cut(Path file, long size) {
    Inode inode = names.get(file);
    inode.truncate(size);
    inode.durableLength = (int) Math.min(size, inode.durableLength);
  }

  /** Operations so far. */
  public synchronized long operations() {
    return operations;
  }

  public synchronized int count(Op op) {
    return counts.getOrDefault(op, 0);
  }

  /** Every operation so far, numbered, with its file. */
  public synchronized List<String> log() {
    return List.copyOf(log);
  }

  public synchronized boolean crashed() {
    return crashed;
  }

  /** The files and their bytes as the process sees them now. */
  public synchronized Map<Path, byte[]> files() {
    Map<Path, byte[]> files = new TreeMap<>();
    names.forEach((path, inode) -> files.put(path, Arrays.copyOf(inode.data, inode.length)));
    return files;
  }

  /** The files and their bytes as a machine crash now would leave them: only what is durable. */
  public synchronized Map<Path, byte[]> durable() {
    Map<Path, byte[]> files = new TreeMap<>();
    durableNames.forEach((path, inode) -> files.put(path, Arrays.copyOf(inode.durable, inode.durableLength)));
    return files;
  }

  /** The bytes the files take. */
  public synchronized long allocated() {
    return allocatedNow();
  }

  /**
   * The files as a restart finds them after a crash now (or the crash that happened): what was durable, and of the
   * rest what {@code survival} keeps. No fault is carried over; locks are gone with the process.
   */
  public synchronized FaultingFiles afterCrash(Survival survival) {
    FaultingFiles next = new FaultingFiles();
    Map<Inode, Inode> copies = new IdentityHashMap<>();
    Set<Path> all = new HashSet<>(names.keySet());
    all.addAll(durableNames.keySet());
    for (Path path : new java.util.TreeSet<>(all)) {
      Inode now = names.get(path);
      Inode before = durableNames.get(path);
      Inode kept = now == before ? now : survival.survives() ? now : before;
      if (kept != null) {
        next.names.put(path, copies.computeIfAbsent(kept, inode -> inode.copy(survival, path)));
      }
    }
    next.durableNames = new TreeMap<>(next.names);
    next.directories.addAll(directories);
    return next;
  }

  // ---- the operations ----

  private void operation(Op op, Path file) throws IOException {
    if (op == pauseOp && (pauseFile == null ? counts.getOrDefault(op, 0) : count(op, file)) + 1 == pauseAt
      && (pauseFile == null || pauseFile.equals(file))) {
      pauseOp = null;
      holding = true;
      reached.countDown();
      try {
        while (holding) {
          wait(); // lets go of this monitor: the other threads' operations go on meanwhile
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while paused");
      }
    }
    if (crashed) {
      throw new IOException("crashed (operation " + op + " " + file + " after the crash)");
    }
    operations++;
    int n = counts.merge(op, 1, Integer::sum);
    int ofFile = fileCounts.merge(op + " " + file, 1, Integer::sum);
    log.add(operations + " " + op + " " + (file == null ? "" : file.getFileName()));
    if (operations >= crashAt || op == crashOp && file != null && file.equals(crashFile) && ofFile == crashOpAt) {
      crashed = true;
      throw new IOException("crashed at operation " + operations + " (" + op + " " + file + ")");
    }
    String failure = failures.getOrDefault(op, Map.of()).get(n);
    if (failure != null) {
      throw new IOException(failure);
    }
  }

  /** After the operation is done: a crash set to follow it happens now. */
  private void done(Op op) {
    if (op == crashAfterOp && counts.getOrDefault(op, 0) >= crashAfterCount) {
      crashed = true;
    }
  }

  private long allocatedNow() {
    Set<Inode> held = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    held.addAll(names.values());
    held.addAll(open.keySet());
    long bytes = 0;
    for (Inode inode : held) {
      bytes += inode.length;
    }
    return bytes;
  }

  private void checkDirectory(Path file) throws IOException {
    if (!directories.contains(file.getParent())) {
      throw new NoSuchFileException(file.getParent().toString());
    }
  }

  private final class Open implements Channel {
    private final Path path;
    private final Inode inode;
    private boolean closed;

    Open(Path path, Inode inode) {
      this.path = path;
      this.inode = inode;
      open.merge(inode, 1, Integer::sum);
    }

    /** The file's name now: a file made under a temporary name is renamed while open. */
    private Path name() {
      for (Map.Entry<Path, Inode> named : names.entrySet()) {
        if (named.getValue() == inode) {
          return named.getKey();
        }
      }
      return path;
    }

    private void checkOpen() throws IOException {
      if (closed) {
        throw new java.nio.channels.ClosedChannelException();
      }
    }

    @Override
    public void write(ByteBuffer bytes, long position) throws IOException {
      synchronized (FaultingFiles.this) {
        operation(Op.WRITE, name());
        checkOpen();
        byte[] copy = new byte[bytes.remaining()];
        bytes.duplicate().get(copy);
        long growth = Math.max(0, position + copy.length - inode.length);
        if (growth > 0 && allocatedNow() + growth > budget) {
          throw new IOException("No space left on device");
        }
        bytes.position(bytes.limit());
        inode.write(copy, position);
        inode.unforced.add(new Change(copy, position));
        done(Op.WRITE);
      }
    }

    @Override
    public void force(boolean metadata) throws IOException {
      synchronized (FaultingFiles.this) {
        try {
          operation(Op.FORCE, name());
        } catch (IOException e) {
          if (!crashed) {
            // a writeback error: the pages are marked clean without reaching the disk
            inode.unforced.clear();
          }
          throw e;
        }
        checkOpen();
        inode.durable = Arrays.copyOf(inode.data, inode.length);
        inode.durableLength = inode.length;
        inode.unforced.clear();
        done(Op.FORCE);
      }
    }

    @Override
    public void truncate(long size) throws IOException {
      synchronized (FaultingFiles.this) {
        operation(Op.TRUNCATE, name());
        checkOpen();
        inode.truncate(size);
        inode.unforced.add(new Change(null, size));
        done(Op.TRUNCATE);
      }
    }

    @Override
    public void close() {
      synchronized (FaultingFiles.this) {
        if (!closed) {
          closed = true;
          open.computeIfPresent(inode, (i, n) -> n == 1 ? null : n - 1);
        }
      }
    }
  }

  @Override
  public synchronized Channel create(Path file) throws IOException {
    operation(Op.CREATE, file);
    checkDirectory(file);
    if (names.containsKey(file)) {
      throw new FileAlreadyExistsException(file.toString());
    }
    Inode inode = new Inode();
    names.put(file, inode);
    done(Op.CREATE);
    return new Open(file, inode);
  }

  @Override
  public synchronized Channel open(Path file) throws IOException {
    operation(Op.OPEN, file);
    Inode inode = names.get(file);
    if (inode == null) {
      throw new NoSuchFileException(file.toString());
    }
    done(Op.OPEN);
    return new Open(file, inode);
  }

  @Override
  public synchronized ByteBuffer read(Path file) throws IOException {
    operation(Op.READ, file);
    Inode inode = names.get(file);
    if (inode == null) {
      throw new NoSuchFileException(file.toString());
    }
    done(Op.READ);
    return ByteBuffer.wrap(Arrays.copyOf(inode.data, inode.length)).asReadOnlyBuffer();
  }

  @Override
  public synchronized void delete(Path file) throws IOException {
    operation(Op.DELETE, file);
    names.remove(file);
    done(Op.DELETE);
  }

  @Override
  public synchronized void rename(Path from, Path to) throws IOException {
    operation(Op.RENAME, from);
    Inode inode = names.get(from);
    if (inode == null) {
      throw new NoSuchFileException(from.toString());
    }
    if (names.containsKey(to)) {
      throw new FileAlreadyExistsException(to.toString());
    }
    names.remove(from);
    names.put(to, inode);
    done(Op.RENAME);
  }

  @Override
  public synchronized List<Path> list(Path dir) throws IOException {
    operation(Op.LIST, dir);
    if (!directories.contains(dir)) {
      throw new NoSuchFileException(dir.toString());
    }
    List<Path> found = new ArrayList<>();
    names.keySet().forEach(path -> {
      if (dir.equals(path.getParent())) {
        found.add(path);
      }
    });
    done(Op.LIST);
    return found;
  }

  @Override
  public synchronized void syncDirectory(Path dir) throws IOException {
    operation(Op.SYNC_DIRECTORY, dir);
    durableNames = new TreeMap<>(names);
    done(Op.SYNC_DIRECTORY);
  }

  @Override
  public synchronized void createDirectories(Path dir) throws IOException {
    operation(Op.MKDIRS, dir);
    directories.add(dir);
    done(Op.MKDIRS);
  }

  @Override
  public synchronized Object fileKey(Path file) throws IOException {
    if (crashed) {
      throw new IOException("crashed");
    }
    return names.get(file);
  }

  /** Removes the directory and every name in it, as {@code rm -rf}: open channels keep their files. */
  public synchronized void removeDirectory(Path dir) {
    names.keySet().removeIf(path -> dir.equals(path.getParent()));
    directories.remove(dir);
  }

  @Override
  public synchronized Closeable lock(Path file) throws IOException {
    operation(Op.LOCK, file);
    checkDirectory(file);
    if (!locks.add(file)) {
      return null;
    }
    done(Op.LOCK);
    return () -> {
      synchronized (FaultingFiles.this) {
        locks.remove(file);
      }
    };
  }
}
