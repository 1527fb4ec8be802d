package io.csi4j.cli.certs;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;
import java.util.Arrays;

/**
 * A private certificate authority for the agent link, with the JDK alone: EC P-256 keys, ECDSA-SHA256
 * signatures, X.509 v3 certificates written by {@link Der} and read back by the JDK's own parser (so a
 * malformed encoding fails here, not in a TLS handshake).
 */
public final class CertificateAuthority {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String ECDSA_SHA256 = "1.2.840.10045.4.3.2";
    private static final String COMMON_NAME = "2.5.4.3";
    private static final String SUBJECT_KEY_ID = "2.5.29.14";
    private static final String KEY_USAGE = "2.5.29.15";
    private static final String SUBJECT_ALT_NAME = "2.5.29.17";
    private static final String BASIC_CONSTRAINTS = "2.5.29.19";
    private static final String AUTHORITY_KEY_ID = "2.5.29.35";
    private static final String EXTENDED_KEY_USAGE = "2.5.29.37";
    private static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
    private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
    private static final int DIGITAL_SIGNATURE = 0x80;
    private static final int KEY_CERT_SIGN = 0x04;
    private static final int CRL_SIGN = 0x02;
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    /** What a leaf certificate is for: TLS server, client (the controller), or both (an agent: it pulls copies from its peers). */
    public enum Usage { SERVER, CLIENT, BOTH }

    /** A certificate and its private key. */
    public record Issued(X509Certificate certificate, PrivateKey key) {
        public String certificatePem() throws GeneralSecurityException {
            return pem("CERTIFICATE", certificate.getEncoded());
        }

        public String keyPem() {
            return pem("PRIVATE KEY", key.getEncoded());  // JDK EC keys encode as PKCS#8, as --tls-key wants
        }
    }

    private final Issued ca;

    private CertificateAuthority(Issued ca) {
        this.ca = ca;
    }

    public Issued certificate() {
        return ca;
    }

    /** A new self-signed CA valid from an hour ago (clock skew) for {@code validity}. */
    public static CertificateAuthority create(String commonName, Duration validity) throws GeneralSecurityException {
        KeyPair keys = ecKeys();
        byte[] name = name(commonName);
        byte[] keyId = keyId(keys.getPublic());
        byte[] extensions = Der.sequence(
                extension(BASIC_CONSTRAINTS, true, Der.sequence(Der.bool(true))),
                extension(KEY_USAGE, true, Der.namedBits(KEY_CERT_SIGN | CRL_SIGN)),
                extension(SUBJECT_KEY_ID, false, Der.octetString(keyId)));
        X509Certificate cert = sign(name, name, keys.getPublic(), validity, extensions, keys.getPrivate());
        return new CertificateAuthority(new Issued(cert, keys.getPrivate()));
    }

    /** An existing CA from its PEM certificate and PKCS#8 PEM key (to issue new leaves that the deployed CA trusts). */
    public static CertificateAuthority load(Path certificate, Path key) throws IOException, GeneralSecurityException {
        var cf = CertificateFactory.getInstance("X.509");
        X509Certificate cert;
        try (var in = Files.newInputStream(certificate)) {
            cert = (X509Certificate) cf.generateCertificate(in);
        }
        if (cert.getBasicConstraints() < 0) throw new GeneralSecurityException(certificate + " is not a CA certificate");
        byte[] der = unpem(Files.readString(key), "PRIVATE KEY");
        PrivateKey privateKey = KeyFactory.getInstance(cert.getPublicKey().getAlgorithm()).generatePrivate(new PKCS8EncodedKeySpec(der));
        return new CertificateAuthority(new Issued(cert, privateKey));
    }

    /** A leaf signed by this CA, for these DNS names and IP addresses (an IPv4/IPv6 literal becomes an IP SAN). */
    public Issued issue(String commonName, List<String> names, Usage usage, Duration validity) throws GeneralSecurityException {
        KeyPair keys = ecKeys();
        List<byte[]> extensions = new ArrayList<>();
        extensions.add(extension(BASIC_CONSTRAINTS, true, Der.sequence()));
        extensions.add(extension(KEY_USAGE, true, Der.namedBits(DIGITAL_SIGNATURE)));
        List<byte[]> purposes = new ArrayList<>();
        if (usage != Usage.CLIENT) purposes.add(Der.oid(SERVER_AUTH));
        if (usage != Usage.SERVER) purposes.add(Der.oid(CLIENT_AUTH));
        extensions.add(extension(EXTENDED_KEY_USAGE, false, Der.sequence(purposes.toArray(byte[][]::new))));
        if (!names.isEmpty()) {
            List<byte[]> general = new ArrayList<>();
            for (String n : names) general.add(generalName(n));
            extensions.add(extension(SUBJECT_ALT_NAME, false, Der.sequence(general.toArray(byte[][]::new))));
        }
        extensions.add(extension(SUBJECT_KEY_ID, false, Der.octetString(keyId(keys.getPublic()))));
        extensions.add(extension(AUTHORITY_KEY_ID, false, Der.sequence(Der.implicitPrimitive(0, keyId(ca.certificate.getPublicKey())))));
        byte[] issuer = ca.certificate.getSubjectX500Principal().getEncoded();
        X509Certificate cert = sign(issuer, name(commonName), keys.getPublic(), validity,
                Der.sequence(extensions.toArray(byte[][]::new)), ca.key);
        cert.verify(ca.certificate.getPublicKey());
        return new Issued(cert, keys.getPrivate());
    }

    private static X509Certificate sign(byte[] issuer, byte[] subject, PublicKey key, Duration validity, byte[] extensions,
                                        PrivateKey signer) throws GeneralSecurityException {
        ZonedDateTime now = ZonedDateTime.now();
        byte[] algorithm = Der.sequence(Der.oid(ECDSA_SHA256));
        byte[] tbs = Der.sequence(
                Der.explicit(0, Der.integer(BigInteger.TWO)),  // v3
                Der.integer(new BigInteger(127, RANDOM).add(BigInteger.ONE)),
                algorithm,
                issuer,
                Der.sequence(Der.time(now.minusHours(1)), Der.time(now.plus(validity))),
                subject,
                key.getEncoded(),  // SubjectPublicKeyInfo
                Der.explicit(3, extensions));
        Signature s = Signature.getInstance("SHA256withECDSA");
        s.initSign(signer);
        s.update(tbs);
        byte[] der = Der.sequence(tbs, algorithm, Der.bitString(s.sign()));
        return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der));
    }

    private static byte[] extension(String oid, boolean critical, byte[] value) {
        return critical ? Der.sequence(Der.oid(oid), Der.bool(true), Der.octetString(value))
                : Der.sequence(Der.oid(oid), Der.octetString(value));
    }

    private static byte[] name(String commonName) {
        return Der.sequence(Der.set(Der.sequence(Der.oid(COMMON_NAME), Der.utf8(commonName))));
    }

    private static byte[] generalName(String name) {
        if (IPV4.matcher(name).matches() || name.contains(":")) {
            try {
                return Der.implicitPrimitive(7, InetAddress.ofLiteral(name).getAddress());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("not an IP address: " + name, e);
            }
        }
        if (!name.matches("(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*")) {
            throw new IllegalArgumentException("not a DNS name or IP address: " + name);
        }
        return Der.implicitPrimitive(2, name.getBytes(StandardCharsets.US_ASCII));
    }

    /** RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits. */
    private static byte[] keyId(PublicKey key) throws GeneralSecurityException {
        byte[] spki = key.getEncoded();
        // SubjectPublicKeyInfo = SEQUENCE { AlgorithmIdentifier, BIT STRING }: skip to the BIT STRING's content
        int[] at = {0};
        header(spki, at);               // outer SEQUENCE
        int algLen = header(spki, at);  // AlgorithmIdentifier
        at[0] += algLen;
        int bitsLen = header(spki, at); // BIT STRING
        byte[] bits = Arrays.copyOfRange(spki, at[0] + 1, at[0] + bitsLen);
        return MessageDigest.getInstance("SHA-1").digest(bits);
    }

    private static int header(byte[] der, int[] at) {
        at[0]++;  // tag
        int len = der[at[0]++] & 0xff;
        if (len >= 0x80) {
            int n = len & 0x7f;
            len = 0;
            for (int i = 0; i < n; i++) len = (len << 8) | (der[at[0]++] & 0xff);
        }
        return len;
    }

    private static KeyPair ecKeys() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }

    static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    static byte[] unpem(String text, String type) throws GeneralSecurityException {
        String begin = "-----BEGIN " + type + "-----";
        int from = text.indexOf(begin);
        int to = text.indexOf("-----END " + type + "-----");
        if (from < 0 || to < from) throw new GeneralSecurityException("no " + type + " PEM block (a PKCS#8 key is wanted)");
        return Base64.getMimeDecoder().decode(text.substring(from + begin.length(), to));
    }
}
