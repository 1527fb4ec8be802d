package io.csi4j.cli.cluster;

import io.csi4j.sdk.server.MutualTls;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
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
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throw-away certificate authority for one test: EC P-256 keys, PEM files (certificate, PKCS#8 key) in a
 * directory, leaf certificates valid for 127.0.0.1 and localhost as both TLS server and client.
 */
final class TestCertificates {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path dir;
    private final String name;
    private final KeyPair keys;
    private final X500Name subject;
    final Path caFile;

    private TestCertificates(Path dir, String name) throws IOException, GeneralSecurityException {
        this.dir = Files.createDirectories(dir);
        this.name = name;
        this.keys = ecKeys();
        this.subject = new X500Name("CN=" + name);
        var builder = new JcaX509v3CertificateBuilder(subject, serial(), notBefore(), notAfter(), subject, keys.getPublic());
        try {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        } catch (org.bouncycastle.cert.CertIOException e) {
            throw new IOException(e);
        }
        this.caFile = writeCertificate(sign(builder), dir.resolve(name + "-ca.pem"));
    }

    static TestCertificates authority(Path dir, String name) throws IOException, GeneralSecurityException {
        return new TestCertificates(dir, name);
    }

    /** A leaf certificate and key signed by this CA, with this CA as the trust anchor: a full {@link MutualTls}. */
    MutualTls issue(String commonName) throws IOException, GeneralSecurityException {
        return issue(commonName, "localhost");
    }

    /** As {@link #issue(String)}, valid for 127.0.0.1 and these DNS names. */
    MutualTls issue(String commonName, String... dnsNames) throws IOException, GeneralSecurityException {
        KeyPair leaf = ecKeys();
        var builder = new JcaX509v3CertificateBuilder(subject, serial(), notBefore(), notAfter(),
                new X500Name("CN=" + commonName), leaf.getPublic());
        try {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            builder.addExtension(Extension.extendedKeyUsage, false,
                    new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
            var names = new java.util.ArrayList<GeneralName>();
            names.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
            for (String dns : dnsNames) names.add(new GeneralName(GeneralName.dNSName, dns));
            builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(GeneralName[]::new)));
        } catch (org.bouncycastle.cert.CertIOException e) {
            throw new IOException(e);
        }
        Path cert = writeCertificate(sign(builder), dir.resolve(name + "-" + commonName + ".pem"));
        Path key = dir.resolve(name + "-" + commonName + "-key.pem");
        Files.writeString(key, pem("PRIVATE KEY", leaf.getPrivate().getEncoded()));  // JDK keys encode as PKCS#8
        return new MutualTls(cert, key, caFile);
    }

    private X509Certificate sign(X509v3CertificateBuilder builder) throws GeneralSecurityException {
        try {
            var signer = new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate());
            return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
        } catch (org.bouncycastle.operator.OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    private static Path writeCertificate(X509Certificate certificate, Path file) throws IOException, GeneralSecurityException {
        Files.writeString(file, pem("CERTIFICATE", certificate.getEncoded()));
        return file;
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static KeyPair ecKeys() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(256);
        return generator.generateKeyPair();
    }

    private static BigInteger serial() {
        return new BigInteger(64, RANDOM).add(BigInteger.ONE);
    }

    private static Date notBefore() {
        return Date.from(Instant.now().minus(Duration.ofHours(1)));
    }

    private static Date notAfter() {
        return Date.from(Instant.now().plus(Duration.ofDays(1)));
    }
}
