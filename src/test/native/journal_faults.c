// Faults of the journal's disk, for the integration tests (testing/JournalFaultShim): loaded into a gateway's JVM with
// LD_PRELOAD, it makes the system calls on journal segment files (a path holding "/journal-" and ending ".seg") fail
// or block, as a failing or full disk does. Nothing else of the process is touched.
//
// The mode is the first line of the file named by $JOURNAL_FAULTS_CTL, read at every call (absent or empty: no fault):
//   write-eio     a write of a frame (non-zero bytes at offset >= 8, the file header excluded) fails with EIO
//   write-enospc  the same with ENOSPC
//   sync-eio      fsync / fdatasync of a segment fails with EIO
//   write-stall   a write of a frame past the segment's first (offset > 96, the file header's size) blocks until the
//                 mode changes: the snapshot a replay writes at the head of a new segment gets through, what follows
//                 it does not
// The first fault injected writes CLOCK_MONOTONIC (the clock of Java's System.nanoTime) in nanoseconds to
// "$JOURNAL_FAULTS_CTL.first", then waits 500 ms before failing, so that an answer the gateway sends because of the
// failed call comes measurably later than every answer an earlier, successful call allowed.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef int (*sync_fn)(int);

// the journal's file header (Frames.FILE_HEADER_BYTES): a segment's first frame starts there
#define FILE_HEADER_BYTES 96

static int first_done;

static int journal_segment(int fd) {
  char link[64];
  char path[1024];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 5) {
    return 0;
  }
  path[n] = 0;
  return strstr(path, "/journal-") != NULL && strcmp(path + n - 4, ".seg") == 0;
}

static void current_mode(char *mode, size_t size) {
  mode[0] = 0;
  const char *ctl = getenv("JOURNAL_FAULTS_CTL");
  if (ctl == NULL) {
    return;
  }
  int fd = open(ctl, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return;
  }
  ssize_t n = read(fd, mode, size - 1);
  close(fd);
  mode[n > 0 ? n : 0] = 0;
  mode[strcspn(mode, "\r\n")] = 0;
}

static void first_fault(const char *what) {
  if (__sync_lock_test_and_set(&first_done, 1)) {
    return;
  }
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const char *ctl = getenv("JOURNAL_FAULTS_CTL");
  char path[1024];
  snprintf(path, sizeof path, "%s.first", ctl);
  FILE *out = fopen(path, "w");
  if (out != NULL) {
    fprintf(out, "%lld\n", (long long) now.tv_sec * 1000000000LL + now.tv_nsec);
    fclose(out);
  }
  fprintf(stderr, "[journal-faults] first %s\n", what);
  usleep(500 * 1000);
}

static int any_nonzero(const void *buf, size_t len) {
  const unsigned char *bytes = buf;
  for (size_t i = 0; i < len; i++) {
    if (bytes[i] != 0) {
      return 1;
    }
  }
  return 0;
}

static ssize_t faulty_pwrite(pwrite_fn real, int fd, const void *buf, size_t len, off_t off) {
  char mode[64];
  current_mode(mode, sizeof mode);
  if (mode[0] == 0 || off < 8 || !any_nonzero(buf, len) || !journal_segment(fd)) {
    return real(fd, buf, len, off);
  }
  if (strcmp(mode, "write-eio") == 0 || strcmp(mode, "write-enospc") == 0) {
    first_fault(mode);
    errno = strcmp(mode, "write-eio") == 0 ? EIO : ENOSPC;
    return -1;
  }
  if (strcmp(mode, "write-stall") == 0 && off > FILE_HEADER_BYTES) {
    first_fault(mode);
    while (strcmp(mode, "write-stall") == 0) {
      usleep(50 * 1000);
      current_mode(mode, sizeof mode);
    }
  }
  return real(fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off) {
  static pwrite_fn real;
  if (real == NULL) {
    real = (pwrite_fn) dlsym(RTLD_NEXT, "pwrite64");
  }
  return faulty_pwrite(real, fd, buf, len, off);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off) {
  static pwrite_fn real;
  if (real == NULL) {
    real = (pwrite_fn) dlsym(RTLD_NEXT, "pwrite");
  }
  return faulty_pwrite(real, fd, buf, len, off);
}

static int faulty_sync(sync_fn real, int fd) {
  char mode[64];
  current_mode(mode, sizeof mode);
  if (strcmp(mode, "sync-eio") == 0 && journal_segment(fd)) {
    first_fault(mode);
    errno = EIO;
    return -1;
  }
  return real(fd);
}

int fdatasync(int fd) {
  static sync_fn real;
  if (real == NULL) {
    real = (sync_fn) dlsym(RTLD_NEXT, "fdatasync");
  }
  return faulty_sync(real, fd);
}

int fsync(int fd) {
  static sync_fn real;
  if (real == NULL) {
    real = (sync_fn) dlsym(RTLD_NEXT, "fsync");
  }
  return faulty_sync(real, fd);
}
