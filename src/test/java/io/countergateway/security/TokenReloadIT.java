package io.countergateway.security;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@DisplayName("Tokens from auth.tokensFile")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TokenReloadIT {
  static final String FIRST = "first-token-0123456789";
  static final String ROTATED = "rotated-token-0123456789abc";

  Path dir;
  Path tokens;
  GatewayFixture fixture;
  long counted;

  @BeforeAll
  void start() throws IOException {
    dir = Files.createTempDirectory("tokens");
    tokens = dir.resolve("tokens");
    Files.writeString(tokens, FIRST + ":write\n");
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), "token_reload_counters");
    config.put("auth", new JsonObject().put("tokensFile", tokens.toString()).put("tokensFileCheckInterval", "100ms"));
    fixture = GatewayFixture.start(config);
  }

  @AfterAll
  void stop() throws IOException {
    fixture.close();
    Files.deleteIfExists(tokens);
    Files.deleteIfExists(dir);
  }

  int increment(String token) {
    var request = fixture.http.post("/v1/counters/likes/rotating/increments");
    if (token != null) {
      request.putHeader("Authorization", "Bearer " + token);
    }
    HttpResponse<Buffer> response = await(request.send());
    if (response.statusCode() == 200) {
      counted++;
    }
    return response.statusCode();
  }

  /** As a Secret's update lands: a new file moved into place in one step. */
  void replaceTokens(String content) throws IOException {
    Path next = Files.writeString(dir.resolve("tokens.next"), content);
    Files.move(next, tokens, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Waits until {@code token} gets {@code status} (the file is checked every 100 ms), at most 10 s. */
  int awaitStatus(String token, int status) {
    int seen = 0;
    for (int i = 0; i < 200 && (seen = increment(token)) != status; i++) {
      await(fixture.vertx.timer(50));
    }
    return seen;
  }

  @Test
  @DisplayName("a token rotated in place with the file's size and time kept (cp -p) takes effect")
  void rotationKeepingSizeAndTime() throws IOException {
    String before = "same-size-token-aaaaaaaaaa";
    String after = "same-size-token-bbbbbbbbbb";
    replaceTokens(before + ":write\n");
    assertThat(awaitStatus(before, 200)).isEqualTo(200);
    java.nio.file.attribute.FileTime time = Files.getLastModifiedTime(tokens);
    Files.writeString(tokens, after + ":write\n");
    Files.setLastModifiedTime(tokens, time);
    assertThat(Files.size(tokens)).isEqualTo((before + ":write\n").length());
    assertThat(awaitStatus(after, 200)).isEqualTo(200);
    assertThat(increment(before)).isEqualTo(401);
    replaceTokens(ROTATED + ":write\n");
    assertThat(awaitStatus(ROTATED, 200)).isEqualTo(200);
  }

  @Test
  @DisplayName("a rotated file takes effect without a restart; an emptied, malformed or missing file keeps the tokens in force and never opens the gateway")
  void rotation() throws IOException {
    replaceTokens(FIRST + ":write\n");
    assertThat(awaitStatus(FIRST, 200)).isEqualTo(200);
    assertThat(increment(ROTATED)).isEqualTo(401);

    replaceTokens(ROTATED + ":write\n");
    assertThat(awaitStatus(ROTATED, 200)).isEqualTo(200);
    assertThat(increment(FIRST)).isEqualTo(401);

    for (String broken : new String[] {"", "# the Secret was emptied\n", "not-an-entry\n"}) {
      replaceTokens(broken);
      await(fixture.vertx.timer(600)); // several checks
      assertThat(increment(ROTATED)).as("after a file of '" + broken + "'").isEqualTo(200);
      assertThat(increment(null)).as("anonymous after a file of '" + broken + "'").isEqualTo(401);
    }
    Files.delete(tokens);
    await(fixture.vertx.timer(600));
    assertThat(increment(ROTATED)).as("after the file was deleted").isEqualTo(200);
    assertThat(increment(null)).isEqualTo(401);

    assertThat(await(fixture.sumInTable("likes", "rotating"))).isEqualTo(counted);
  }
}
