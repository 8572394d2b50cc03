package io.countergateway.config;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * PEM files of one TLS endpoint as configured: a certificate chain and its private key, and the CA that peers'
 * certificates must chain to (each null when that endpoint does not use it). Checked at start: the files go together
 * or not at all, and each is readable, so a missing mount refuses the start naming its key instead of serving
 * plain text or failing at the first handshake.
 */
public final class TlsFiles {
  private static final TlsFiles NONE = new TlsFiles(null, null, null);

  private final String certFile;
  private final String keyFile;
  private final String caFile;

  private TlsFiles(String certFile, String keyFile, String caFile) {
    this.certFile = certFile;
    this.keyFile = keyFile;
    this.caFile = caFile;
  }

  /** A certificate and key that go together ({@code http.tls}): both or neither. */
  static TlsFiles pair(ConfigSection section, ConfigKey<String> cert, ConfigKey<String> key) {
    return read(section, cert, key, null);
  }

  /**
   * A certificate, its key and the CA that peers must present a certificate of ({@code cluster.tls}): all three or
   * none, since a member that does not check its peers would let anyone in.
   */
  static TlsFiles mutual(ConfigSection section, ConfigKey<String> cert, ConfigKey<String> key, ConfigKey<String> ca) {
    return read(section, cert, key, ca);
  }

  private static TlsFiles read(ConfigSection section, ConfigKey<String> certKey, ConfigKey<String> keyKey,
                               ConfigKey<String> caKey) {
    String cert = readable(section, certKey);
    String key = readable(section, keyKey);
    String ca = caKey == null ? null : readable(section, caKey);
    boolean anySet = cert != null || key != null || ca != null;
    if (!anySet) {
      return NONE;
    }
    String missing = cert == null ? section.key(certKey) : key == null ? section.key(keyKey)
      : caKey != null && ca == null ? section.key(caKey) : null;
    if (missing != null) {
      String together = caKey == null
        ? section.key(certKey) + " and " + section.key(keyKey)
        : section.key(certKey) + ", " + section.key(keyKey) + " and " + section.key(caKey);
      throw new ConfigException(missing, "must be set too: " + together + " go together");
    }
    return new TlsFiles(cert, key, ca);
  }

  /** A file named by {@code key} that this process can read, or null when the key is unset. */
  static String readable(ConfigSection section, ConfigKey<String> key) {
    String path = section.get(key);
    if (path == null || path.isBlank()) {
      return null;
    }
    if (!Files.isReadable(Path.of(path))) {
      throw new ConfigException(section.key(key), "cannot read " + path);
    }
    return path;
  }

  public boolean isEnabled() {
    return certFile != null;
  }

  /** The PEM certificate chain, leaf first; null when TLS is off. */
  public String getCertFile() {
    return certFile;
  }

  /** The PEM private key of {@link #getCertFile()}. */
  public String getKeyFile() {
    return keyFile;
  }

  /** The PEM CA certificates a peer's certificate must chain to; null where peers are not checked. */
  public String getCaFile() {
    return caFile;
  }
}
