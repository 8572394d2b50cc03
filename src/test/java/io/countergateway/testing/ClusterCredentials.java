package io.countergateway.testing;

import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What every member of a test's clustered event bus holds: a certificate of the cluster's CA (made here, one per
 * member, valid for the given addresses) and the cluster's secret. {@link #member} puts both into a {@code cluster}
 * section, as a deployment's configuration would; the files live under {@code target/}, so gateways in their own JVMs
 * read them too.
 */
public final class ClusterCredentials {
  private final Path dir;
  private final TestCertificates.Authority authority;
  private final Path caFile;
  private final String secret;
  private final String[] hosts;
  private final Map<String, Path> issued = new ConcurrentHashMap<>();

  private ClusterCredentials(Path dir, String[] hosts) {
    this.dir = dir;
    this.hosts = hosts.clone();
    authority = TestCertificates.authority("cluster CA");
    caFile = authority.writeCertificate(dir.resolve("cluster-ca.crt"));
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    secret = Base64.getEncoder().encodeToString(random);
  }

  /** A new CA and secret; each member's certificate is valid for {@code hosts} (loopback when none given). */
  public static ClusterCredentials create(String... hosts) {
    try {
      Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target").toAbsolutePath()), "cluster-");
      return new ClusterCredentials(dir, hosts.length == 0 ? new String[] {"127.0.0.1"} : hosts);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code cluster} with the member {@code name}'s certificate, key and the CA ({@code tls.*}) and the secret. */
  public JsonObject member(String name, JsonObject cluster) {
    Path cert = issued.computeIfAbsent(name, member -> {
      Path file = dir.resolve(member + ".crt");
      authority.issue(member, hosts).write(file, dir.resolve(member + ".key"));
      return file;
    });
    return cluster.put("secret", secret).put("tls", new JsonObject().put("certFile", cert.toString())
      .put("keyFile", dir.resolve(name + ".key").toString()).put("caFile", caFile.toString()));
  }

  /** The directory holding the files, for a test that writes more (another CA's certificates). */
  public Path dir() {
    return dir;
  }

  public Path caFile() {
    return caFile;
  }

  public String secret() {
    return secret;
  }
}
