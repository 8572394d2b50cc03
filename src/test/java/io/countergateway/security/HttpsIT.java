package io.countergateway.security;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.TestCertificates;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemTrustOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("HTTPS from http.tls.certFile and http.tls.keyFile")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpsIT {
  static final String TABLE = "https_counters";

  Path dir;
  Path certFile;
  Path keyFile;
  TestCertificates.Authority authority;
  GatewayFixture fixture;
  HttpClient https;

  /** What a client of the gateway sees: one TLS connection per request, trusting the test CA only. */
  record Answer(int status, String body, BigInteger serial) {
  }

  @BeforeAll
  void start() throws IOException {
    dir = Files.createTempDirectory("https");
    certFile = dir.resolve("tls.crt");
    keyFile = dir.resolve("tls.key");
    authority = TestCertificates.authority("counter-gateway test CA");
    authority.issue("first", "localhost", "127.0.0.1").write(certFile, keyFile);
    fixture = GatewayFixture.start(config(certFile, keyFile));
    https = fixture.vertx.createHttpClient(new HttpClientOptions().setSsl(true).setKeepAlive(false)
      .setTrustOptions(new PemTrustOptions().addCertPath(authority.writeCertificate(dir.resolve("ca.crt")).toString()))
      .setVerifyHost(true));
  }

  JsonObject config(Path cert, Path key) {
    JsonObject config = GatewayFixture.baseConfig(TestDatabases.postgres(), TABLE);
    config.getJsonObject("http").put("tls", new JsonObject().put("certFile", cert.toString())
      .put("keyFile", key.toString()).put("fileCheckInterval", "100ms"));
    return config;
  }

  @AfterAll
  void stop() {
    if (fixture != null) {
      fixture.close();
    }
  }

  Answer send(HttpMethod method, String path, String body) {
    RequestOptions options = new RequestOptions().setMethod(method).setHost("127.0.0.1")
      .setPort(fixture.gateway.port()).setURI(path);
    if (body != null) {
      options.putHeader("Content-Type", "application/json");
    }
    return await(https.request(options).compose(request -> (body == null ? request.send() : request.send(body))
      .compose(response -> response.body().map(received -> {
        X509Certificate leaf = peerLeaf(response.request().connection());
        return new Answer(response.statusCode(), received.toString(), leaf.getSerialNumber());
      }))));
  }

  private static X509Certificate peerLeaf(io.vertx.core.http.HttpConnection connection) {
    try {
      return (X509Certificate) connection.peerCertificates().get(0);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** As a Secret's update lands: new files moved into place, the certificate first (a rotation seen half-way). */
  void replace(TestCertificates.Issued issued) throws IOException {
    Path nextCert = dir.resolve("next.crt");
    Path nextKey = dir.resolve("next.key");
    issued.write(nextCert, nextKey);
    Files.move(nextCert, certFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    Files.move(nextKey, keyFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Waits until a new connection is served {@code serial} (the files are checked every 100 ms), at most 10 s. */
  BigInteger awaitServed(BigInteger serial) {
    BigInteger seen = null;
    for (int i = 0; i < 200 && !serial.equals(seen = send(HttpMethod.GET, "/health/live", null).serial()); i++) {
      await(fixture.vertx.timer(50));
    }
    return seen;
  }

  @Test
  @DisplayName("a client trusting the CA gets 200 and its increment is counted; plain HTTP on the port gets no answer")
  void servesHttps() {
    Answer increment = send(HttpMethod.POST, "/v1/counters/likes/secure/increments", "{\"delta\": 2}");
    assertThat(increment.status()).isEqualTo(200);
    assertThat(send(HttpMethod.GET, "/v1/counters/likes/secure", null).body()).contains("\"value\":2");
    assertThat(await(fixture.sumInTable("likes", "secure"))).isEqualTo(2L);

    HttpClient plain = fixture.vertx.createHttpClient(new HttpClientOptions().setKeepAlive(false));
    Future<Buffer> inClear = plain.request(HttpMethod.GET, fixture.gateway.port(), "127.0.0.1", "/health/live")
      .compose(request -> request.send().compose(response -> response.body()))
      .timeout(5, java.util.concurrent.TimeUnit.SECONDS);
    assertThatThrownBy(() -> await(inClear)).as("no answer in clear text").isInstanceOf(IllegalStateException.class);
    await(plain.close());
  }

  @Test
  @DisplayName("replaced files are served to new connections without a restart; a key that does not match its certificate keeps the one in force")
  void reloadsReplacedFiles() throws IOException {
    TestCertificates.Issued second = authority.issue("second", "localhost", "127.0.0.1");
    replace(second);
    assertThat(awaitServed(second.certificate().getSerialNumber())).isEqualTo(second.certificate().getSerialNumber());

    // a new certificate beside a key of another pair: refused, the second pair stays
    TestCertificates.Issued third = authority.issue("third", "localhost", "127.0.0.1");
    TestCertificates.Issued stranger = authority.issue("stranger", "localhost");
    Path lonelyCert = dir.resolve("lonely.crt");
    third.write(lonelyCert, dir.resolve("unused.key"));
    Files.move(lonelyCert, certFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    TestCertificates.writeKey(stranger.keys().getPrivate(), keyFile);
    await(fixture.vertx.timer(600)); // several checks
    assertThat(send(HttpMethod.GET, "/health/live", null).serial()).isEqualTo(second.certificate().getSerialNumber());

    // the rotation completes: the matching key arrives
    TestCertificates.writeKey(third.keys().getPrivate(), keyFile);
    assertThat(awaitServed(third.certificate().getSerialNumber())).isEqualTo(third.certificate().getSerialNumber());
    assertThat(send(HttpMethod.POST, "/v1/counters/likes/after-rotation/increments", "{}").status()).isEqualTo(200);
  }

  @Test
  @DisplayName("a start with a key that does not belong to the certificate is refused, naming http.tls.keyFile")
  void mismatchedPairRefusesTheStart() throws IOException {
    Path cert = dir.resolve("start.crt");
    Path key = dir.resolve("start.key");
    authority.issue("start", "localhost").write(cert, dir.resolve("start-own.key"));
    TestCertificates.writeKey(authority.issue("other", "localhost").keys().getPrivate(), key);
    assertThatThrownBy(() -> GatewayFixture.start(config(cert, key)))
      .hasMessageContaining("http.tls.keyFile");
  }
}
