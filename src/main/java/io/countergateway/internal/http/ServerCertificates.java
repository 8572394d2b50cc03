package io.countergateway.internal.http;

import io.countergateway.config.ConfigException;
import io.countergateway.config.HttpOptions;
import io.countergateway.config.TlsFiles;
import io.countergateway.internal.runtime.GatewayServices;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.file.FileProps;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.KeyCertOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.ServerSSLOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.X509KeyManager;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The HTTPS certificate of one gateway, shared by its server shares ({@code http.tls.*}). The pair is read through the
 * Vert.x file system and checked off the event loop before any server listens: a key that does not belong to the
 * certificate refuses the start naming {@code http.tls.keyFile}. Then the files' modification times and sizes are
 * checked every {@code http.tls.fileCheckInterval}, and a changed pair is read, checked the same way and handed to every
 * server share: new connections get the new certificate, open ones keep theirs. A pair that does not load, does not
 * match (a rotation caught half-written: the new certificate beside the old key) or is not valid now keeps the
 * certificate in force and logs an error; the next change of either file is tried again.
 */
public final class ServerCertificates {
  private static final Logger LOG = LoggerFactory.getLogger(ServerCertificates.class);
  /** Key types as {@link X509KeyManager#getServerAliases} names them. */
  private static final List<String> KEY_TYPES = List.of("RSA", "EC", "EdDSA", "Ed25519", "Ed448", "RSASSA-PSS", "DSA");

  private final Vertx vertx;
  private final TlsFiles files;
  private final List<HttpServer> servers = new CopyOnWriteArrayList<>();
  private final Future<Void> loaded;
  private volatile PemKeyCertOptions current;
  /** The files' modification times and sizes when last read; touched on the timer's context only. */
  private String lastSeen;
  private boolean checking;
  /** The files' check; cancelled once no server share is left to hand a certificate to (the gateway stopped). */
  private volatile long checkTimer = -1;

  private ServerCertificates(Vertx vertx, HttpOptions http) {
    this.vertx = vertx;
    this.files = http.getTls();
    if (!files.isEnabled()) {
      loaded = Future.succeededFuture();
      return;
    }
    loaded = stamp().compose(seen -> load().<Void>map(pair -> {
      lastSeen = seen;
      current = pair;
      checkTimer = vertx.setPeriodic(http.getTlsFileCheckMs(), id -> check());
      return null;
    })).recover(failure -> Future.failedFuture(new ConfigException(HttpOptions.TLS_KEY_FILE.name(),
      files.getKeyFile() + " and " + HttpOptions.TLS_CERT_FILE.name() + " " + files.getCertFile()
        + " do not make a usable pair: " + failure.getMessage())));
  }

  /** The gateway's one instance, created by the first server share that asks. */
  static ServerCertificates of(Vertx vertx, GatewayServices services) {
    return services.state().shared(ServerCertificates.class,
      () -> new ServerCertificates(vertx, services.config().getHttp()));
  }

  /**
   * {@code options} with the current certificate, once the pair is loaded and checked; as they are when
   * {@code http.tls} is off. Fails, naming the key, when the configured pair is not usable.
   */
  public static Future<HttpServerOptions> configure(Vertx vertx, GatewayServices services, HttpServerOptions options) {
    ServerCertificates certificates = of(vertx, services);
    return certificates.loaded.map(ready -> certificates.current == null ? options
      : options.setSsl(true).setKeyCertOptions(certificates.current.copy()));
  }

  /** A listening server share that gets every new certificate; {@link #forget} it when it closes. */
  public static void track(Vertx vertx, GatewayServices services, HttpServer server) {
    of(vertx, services).servers.add(server);
  }

  public static void forget(Vertx vertx, GatewayServices services, HttpServer server) {
    ServerCertificates certificates = of(vertx, services);
    certificates.servers.remove(server);
    if (certificates.servers.isEmpty() && certificates.checkTimer >= 0) {
      // an embedding application's Vert.x lives on after the gateway: its timer must not
      vertx.cancelTimer(certificates.checkTimer);
    }
  }

  private Future<String> stamp() {
    return Future.all(vertx.fileSystem().props(files.getCertFile()), vertx.fileSystem().props(files.getKeyFile()))
      .map(both -> stamp(both.resultAt(0)) + "|" + stamp(both.resultAt(1)));
  }

  private static String stamp(FileProps props) {
    return props.lastModifiedTime() + "/" + props.size();
  }

  /** Reads both files without blocking the event loop, then checks the pair on a worker thread. */
  private Future<PemKeyCertOptions> load() {
    return Future.all(vertx.fileSystem().readFile(files.getCertFile()), vertx.fileSystem().readFile(files.getKeyFile()))
      .compose(both -> {
        PemKeyCertOptions pair = new PemKeyCertOptions()
          .setCertValue(both.<Buffer>resultAt(0)).setKeyValue(both.<Buffer>resultAt(1));
        return vertx.executeBlocking(() -> {
          checkPair(vertx, pair);
          return pair;
        }, false);
      });
  }

  /** Runs on the context that created this; one check at a time. */
  private void check() {
    if (checking) {
      return;
    }
    checking = true;
    stamp().compose(seen -> {
      if (seen.equals(lastSeen)) {
        return Future.<Void>succeededFuture();
      }
      lastSeen = seen;
      return load().compose(this::install);
    }).onFailure(e -> LOG.atError().addKeyValue("event", "tls_reload_failed")
        .addKeyValue("key", HttpOptions.TLS_CERT_FILE.name())
        .log("the new certificate in {} and {} is refused, the one in force stays: {}", files.getCertFile(),
          files.getKeyFile(), e.getMessage()))
      .onComplete(done -> checking = false);
  }

  private Future<Void> install(PemKeyCertOptions pair) {
    ServerSSLOptions ssl = new ServerSSLOptions().setKeyCertOptions(pair);
    return Future.all(servers.stream().map(server -> server.updateSSLOptions(ssl.copy(), true)).toList())
      .onSuccess(updated -> {
        current = pair;
        LOG.atInfo().addKeyValue("event", "tls_reloaded").log("HTTPS certificate reloaded from {}", files.getCertFile());
      })
      .mapEmpty();
  }

  /**
   * Whether the key belongs to the certificate (it signs what the certificate's public key verifies) and the
   * certificate is valid now. Vert.x builds its key manager without checking either, and a mismatched pair would fail
   * every handshake instead.
   */
  static void checkPair(Vertx vertx, KeyCertOptions pair) throws Exception {
    X509KeyManager manager = Arrays.stream(pair.getKeyManagerFactory(vertx).getKeyManagers())
      .filter(X509KeyManager.class::isInstance).map(X509KeyManager.class::cast).findFirst().orElse(null);
    String alias = manager == null ? null : KEY_TYPES.stream()
      .map(type -> manager.getServerAliases(type, null)).filter(aliases -> aliases != null && aliases.length > 0)
      .map(aliases -> aliases[0]).findFirst().orElse(null);
    if (alias == null) {
      throw new IllegalArgumentException("no private key with a certificate found");
    }
    PrivateKey key = manager.getPrivateKey(alias);
    X509Certificate certificate = manager.getCertificateChain(alias)[0];
    certificate.checkValidity();
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "DSA" -> "SHA256withDSA";
      case "RSASSA-PSS" -> null; // its parameters live in the key; the handshake itself is the check
      default -> key.getAlgorithm();
    };
    if (algorithm == null) {
      return;
    }
    byte[] challenge = new byte[32];
    new SecureRandom().nextBytes(challenge);
    Signature signer = Signature.getInstance(algorithm);
    signer.initSign(key);
    signer.update(challenge);
    byte[] signature = signer.sign();
    Signature verifier = Signature.getInstance(algorithm);
    verifier.initVerify(certificate.getPublicKey());
    verifier.update(challenge);
    if (!verifier.verify(signature)) {
      throw new IllegalArgumentException("the private key does not belong to the certificate "
        + certificate.getSubjectX500Principal());
    }
  }
}
