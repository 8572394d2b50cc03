package io.countergateway.testing;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;

/**
 * Certificates made by the tests themselves: a self-signed CA and certificates it issues, written as the PEM files
 * the gateway and the test servers read (EC P-256 keys: quick to make, read by Java, OpenSSL and MariaDB alike).
 */
public final class TestCertificates {
  private static final SecureRandom RANDOM = new SecureRandom();

  private TestCertificates() {
  }

  /** A CA: its key signs the certificates it issues; its certificate is what peers trust. */
  public record Authority(String name, KeyPair keys, X509Certificate certificate) {
    /** A certificate for {@code commonName}, valid for {@code hosts} (DNS names or IP addresses), server and client. */
    public Issued issue(String commonName, String... hosts) {
      return TestCertificates.issue(this, commonName, List.of(hosts));
    }

    /** The CA certificate as a PEM file. */
    public Path writeCertificate(Path file) {
      return write(file, pem("CERTIFICATE", encoded(certificate)));
    }
  }

  /** A certificate and its private key. */
  public record Issued(KeyPair keys, X509Certificate certificate) {
    /** The certificate and the key as PEM files (the key owner-only, as PostgreSQL requires of its key file). */
    public void write(Path certFile, Path keyFile) {
      TestCertificates.write(certFile, pem("CERTIFICATE", encoded(certificate)));
      writeKey(keys.getPrivate(), keyFile);
    }
  }

  public static Authority authority(String name) {
    KeyPair keys = keyPair();
    X500Name subject = new X500Name("CN=" + name);
    X509v3CertificateBuilder builder = builder(subject, subject, keys);
    try {
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Authority(name, keys, sign(builder, keys.getPrivate()));
  }

  private static Issued issue(Authority authority, String commonName, List<String> hosts) {
    KeyPair keys = keyPair();
    X509v3CertificateBuilder builder = builder(new X500Name("CN=" + authority.name()), new X500Name("CN=" + commonName),
      keys);
    List<GeneralName> names = new ArrayList<>();
    for (String host : hosts) {
      names.add(new GeneralName(host.matches("[0-9.]+|.*:.*") ? GeneralName.iPAddress : GeneralName.dNSName, host));
    }
    try {
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
      builder.addExtension(Extension.extendedKeyUsage, false,
        new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
      if (!names.isEmpty()) {
        builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(GeneralName[]::new)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Issued(keys, sign(builder, authority.keys().getPrivate()));
  }

  private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair keys) {
    Instant now = Instant.now();
    return new JcaX509v3CertificateBuilder(issuer, new BigInteger(64, RANDOM).abs().add(BigInteger.ONE),
      Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(2))), subject, keys.getPublic());
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey issuerKey) {
    try {
      return new JcaX509CertificateConverter()
        .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
    } catch (OperatorCreationException | GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static KeyPair keyPair() {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A PKCS#8 PEM key file, readable by its owner only. */
  public static Path writeKey(PrivateKey key, Path file) {
    write(file, pem("PRIVATE KEY", key.getEncoded()));
    try {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return file;
  }

  private static byte[] encoded(X509Certificate certificate) {
    try {
      return certificate.getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
      .encodeToString(der) + "\n-----END " + type + "-----\n";
  }

  private static Path write(Path file, String text) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.writeString(file, text, StandardCharsets.US_ASCII);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
