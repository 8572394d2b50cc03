package io.countergateway.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.PrimitiveIterator;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The ports the tests choose for their servers")
class FreePortsTest {

  @Test
  @DisplayName("lie below Linux's ephemeral range, where no outgoing connection is given a port, each handed out once")
  void belowTheEphemeralRangeAndDistinct() {
    Set<Integer> taken = new HashSet<>();
    for (int i = 0; i < 50; i++) {
      int port = FreePorts.take();
      assertThat(port).isGreaterThanOrEqualTo(FreePorts.FROM).isLessThan(FreePorts.end()).isLessThanOrEqualTo(32_768);
      assertThat(taken.add(port)).as("port %d handed out once", port).isTrue();
    }
  }

  @Test
  @DisplayName("pass over a port reserved by another holder and one a server listens on, and take the next free one")
  void passOverReservedAndListenedPorts() throws IOException {
    int base;
    do {
      base = FreePorts.FROM + ThreadLocalRandom.current().nextInt(0, FreePorts.end() - FreePorts.FROM - 10);
    } while (FreePorts.handedOut(base) || FreePorts.handedOut(base + 1) || FreePorts.handedOut(base + 2));
    int reservedElsewhere = base;
    int listened = base + 1;
    int free = base + 2;
    Files.createDirectories(FreePorts.lockFile(reservedElsewhere).getParent());
    try (FileChannel other = FileChannel.open(FreePorts.lockFile(reservedElsewhere), StandardOpenOption.CREATE,
           StandardOpenOption.WRITE);
         FileLock reservation = other.lock();
         ServerSocket server = new ServerSocket()) {
      server.bind(new InetSocketAddress(listened), 1);
      PrimitiveIterator.OfInt candidates = IntStream.of(reservedElsewhere, listened, free).iterator();

      assertThat(FreePorts.take(candidates::nextInt)).isEqualTo(free);
    }
  }
}
