package io.countergateway.internal.write.journal;

import java.nio.file.Path;

/**
 * One segment file, made zero-filled to its capacity with its header in place. Its fields belong to the thread zone
 * named beside them.
 */
final class Segment {
  final Path path;
  final long segno;
  final JournalFiles.Channel channel;
  final int capacity;
  /** What named the file when it was made ({@link JournalFiles#fileKey}): the directory must still name it so. */
  final Object fileKey;
  // event loop
  /** Position of the first record in it; -1 while it holds none. */
  long startLsn = -1;
  long endLsn;
  /** Where the next frame goes. */
  int position;
  // the writer's
  boolean dirty;
  boolean closed;

  Segment(Path path, long segno, JournalFiles.Channel channel, int capacity, int position, Object fileKey) {
    this.path = path;
    this.fileKey = fileKey;
    this.segno = segno;
    this.channel = channel;
    this.capacity = capacity;
    this.position = position;
  }

  boolean fits(long frameBytes) {
    return position + frameBytes <= capacity;
  }
}
