package io.countergateway.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("Authentication settings")
class AuthConfigTest {
  static final String ENTRY = "writer-token-0123456789:write";

  static JsonObject config(String host, JsonObject auth) {
    return new JsonObject()
      .put("http", new JsonObject().put("host", host))
      .put("auth", auth)
      .put("namespaces", new JsonObject().put("likes", new JsonObject().put("slots", 4)));
  }

  @ParameterizedTest(name = "file {index}")
  @ValueSource(strings = {"", "\n\n", "# rotated: no tokens yet\n", "   \n# comment\n"})
  @DisplayName("a tokens file that yields no token refuses the start, naming auth.tokensFile")
  void emptyTokensFileRefusesStart(String content, @TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("tokens"), content);
    assertThatThrownBy(() -> GatewayConfig.fromJson(config("127.0.0.1", new JsonObject().put("tokensFile", file.toString()))))
      .isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("auth.tokensFile: " + file + " holds no token");
  }

  @Test
  @DisplayName("a tokens file that cannot be read refuses the start, naming auth.tokensFile")
  void missingTokensFileRefusesStart(@TempDir Path dir) {
    assertThatThrownBy(() -> GatewayConfig.fromJson(config("127.0.0.1",
      new JsonObject().put("tokensFile", dir.resolve("absent").toString()))))
      .isInstanceOf(ConfigException.class).hasMessageStartingWith("auth.tokensFile: cannot read");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"0.0.0.0", "::", "10.1.2.3", "gateway.internal"})
  @DisplayName("a bind other than loopback without tokens refuses the start, naming http.host and the way out")
  void networkBindWithoutTokensRefusesStart(String host) {
    assertThatThrownBy(() -> GatewayConfig.fromJson(config(host, new JsonObject())))
      .isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("http.host: '" + host + "' is not a loopback address and no tokens are set")
      .hasMessageContaining("auth.tokens").hasMessageContaining("auth.tokensFile").hasMessageContaining("auth.anonymous: true");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"127.0.0.1", "127.0.0.2", "::1", "localhost"})
  @DisplayName("a loopback bind needs no tokens (the sidecar)")
  void loopbackWithoutTokensStarts(String host) {
    GatewayConfig config = GatewayConfig.fromJson(config(host, new JsonObject()));
    assertThat(config.getAuth().isEnabled()).isFalse();
    assertThat(config.getHttp().isLoopback()).isTrue();
  }

  @Test
  @DisplayName("a network bind starts without tokens when auth.anonymous is true, or with tokens")
  void networkBindStartsWhenAnonymousIsExplicitOrTokensAreSet() {
    GatewayConfig anonymous = GatewayConfig.fromJson(config("0.0.0.0", new JsonObject().put("anonymous", true)));
    assertThat(anonymous.getAuth().isAnonymous()).isTrue();
    assertThat(anonymous.getAuth().isEnabled()).isFalse();
    GatewayConfig withTokens = GatewayConfig.fromJson(config("0.0.0.0", new JsonObject().put("tokens", new JsonArray().add(ENTRY))));
    assertThat(withTokens.getAuth().isEnabled()).isTrue();
  }

  @Test
  @DisplayName("auth.anonymous and tokens together are refused, naming auth.anonymous")
  void anonymousWithTokensIsRefused() {
    assertThatThrownBy(() -> GatewayConfig.fromJson(config("0.0.0.0",
      new JsonObject().put("anonymous", true).put("tokens", new JsonArray().add(ENTRY)))))
      .isInstanceOf(ConfigException.class).hasMessageStartingWith("auth.anonymous: must not be true while tokens are set");
  }

  @Test
  @DisplayName("CG_AUTH_ANONYMOUS and CG_HTTP_HOST work through the loader, and a blank CG_AUTH_TOKENS_FILE means no file")
  void environmentOverrides() {
    JsonObject raw = config("127.0.0.1", new JsonObject().put("tokensFile", "/var/run/secrets/absent"));
    GatewayConfig config = GatewayConfig.fromJson(ConfigLoader.applyEnvironment(raw, Map.of(
      "CG_HTTP_HOST", "0.0.0.0", "CG_AUTH_ANONYMOUS", "true", "CG_AUTH_TOKENS_FILE", "")));
    assertThat(config.getAuth().isAnonymous()).isTrue();
    assertThat(config.getAuth().getTokensFile()).isNull();
  }

  @Test
  @DisplayName("a reload keeps the configured tokens, takes the file's new ones, and refuses a file that yields no token")
  void reloadedTokens(@TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("tokens"), "old-token-0123456789:read\n");
    AuthOptions auth = GatewayConfig.fromJson(config("0.0.0.0", new JsonObject()
      .put("tokens", new JsonArray().add(ENTRY)).put("tokensFile", file.toString()))).getAuth();
    AuthOptions reloaded = auth.reloaded("new-token-0123456789:admin\n");
    assertThat(reloaded.rightsOf("writer-token-0123456789")).contains(AuthOptions.Right.WRITE);
    assertThat(reloaded.rightsOf("new-token-0123456789")).contains(AuthOptions.Right.ADMIN);
    assertThat(reloaded.rightsOf("old-token-0123456789")).isNull();
    assertThat(reloaded.sameTokens(auth)).isFalse();
    assertThatThrownBy(() -> auth.reloaded("# emptied\n")).isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("auth.tokensFile: ");
    assertThatThrownBy(() -> auth.reloaded("short:write\n")).isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("auth.tokensFile: a token must be at least 16 characters long");
  }

  @Test
  @DisplayName("http.allowedOrigins takes scheme://host[:port] entries or '*', naming the key otherwise")
  void allowedOrigins() {
    JsonObject raw = config("127.0.0.1", new JsonObject());
    raw.getJsonObject("http").put("allowedOrigins", new JsonArray().add("https://app.example.com").add("http://localhost:3000"));
    assertThat(GatewayConfig.fromJson(raw).getHttp().getAllowedOrigins()).hasSize(2);
    raw.getJsonObject("http").put("allowedOrigins", new JsonArray().add("app.example.com"));
    assertThatThrownBy(() -> GatewayConfig.fromJson(raw)).isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("http.allowedOrigins: ");
  }

  @Test
  @DisplayName("h2c is off unless asked for")
  void h2cOffByDefault() {
    assertThat(GatewayConfig.fromJson(config("127.0.0.1", new JsonObject())).getHttp().isH2c()).isFalse();
    JsonObject raw = config("127.0.0.1", new JsonObject());
    raw.getJsonObject("http").put("h2c", true);
    assertThat(GatewayConfig.fromJson(raw).getHttp().isH2c()).isTrue();
  }
}
