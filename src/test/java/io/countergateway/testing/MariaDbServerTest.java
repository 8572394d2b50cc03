package io.countergateway.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@DisplayName("The test MariaDB's programs")
class MariaDbServerTest {

  @Test
  @DisplayName("a missing mariadbd fails the MariaDB tests with the Debian packages to install, never skips them")
  void missingServerNamesThePackages(@TempDir Path empty) {
    assertThatThrownBy(() -> MariaDbServer.locate("mariadbd", List.of(empty)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("mariadbd is not installed")
        .hasMessageContaining(empty.toString())
        .hasMessageContaining("apt-get install mariadb-server-core mariadb-client-core")
        .hasMessageContaining(".ci/run");
  }

  @Test
  @DisplayName("are found in the first directory that holds them as executables")
  void firstExecutableWins(@TempDir Path dir) throws IOException {
    Path notExecutable = Files.createDirectories(dir.resolve("a")).resolve("mariadbd");
    Files.createFile(notExecutable);
    Path executable = Files.createDirectories(dir.resolve("b")).resolve("mariadbd");
    Files.createFile(executable, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));

    assertThat(MariaDbServer.locate("mariadbd", List.of(dir.resolve("a"), dir.resolve("b")))).isEqualTo(executable);
  }
}
