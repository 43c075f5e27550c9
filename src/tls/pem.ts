import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { clip, LedgeError } from '../shared/errors.ts';

/** What a certificate chain says about itself, as the custom certificate API renders it. */
export interface CertificateFacts {
  /** The leaf's DNS names (subjectAltName, else its CN), lowercase. */
  hosts: string[];
  issuer: string;
  signature: string;
  expiresAt: number;
  issuedAt: number;
  /** The chain as PEM, leaf first, normalised (one certificate after another). */
  chain: string;
}

/** Cloudflare's code for a certificate or key it cannot use. */
export const CERTIFICATE_INVALID_CODE = 1210;

export const certificateError = (detail: string) => new LedgeError(400, CERTIFICATE_INVALID_CODE, detail);

/**
 * Reads a PEM chain (leaf first) and its private key: refused (400) when either is not PEM, the key is
 * encrypted or does not belong to the leaf, or the leaf has no DNS name. Nothing of the key is ever put into
 * an error message.
 */
export function readCertificateAndKey(certificatePem: string, privateKeyPem: string): CertificateFacts {
  const facts = readChain(certificatePem);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: privateKeyPem, format: 'pem' });
  } catch {
    throw certificateError('private_key is not an unencrypted PEM private key.');
  }
  if (!new X509Certificate(facts.chain).checkPrivateKey(key)) {
    throw certificateError('private_key does not match the certificate.');
  }
  return facts;
}

function readChain(pem: string): CertificateFacts {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw certificateError('certificate is not a PEM certificate chain.');
  const parsed = blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw certificateError('certificate holds a PEM block that is not a certificate.');
    }
  });
  const leaf = parsed[0]!;
  const hosts = dnsNames(leaf);
  if (hosts.length === 0) throw certificateError('certificate names no hostname (no DNS subjectAltName).');
  return {
    hosts,
    issuer: organisationOf(leaf.issuer),
    signature: signatureName(leaf),
    expiresAt: leaf.validToDate.getTime(),
    issuedAt: leaf.validFromDate.getTime(),
    chain: parsed.map((certificate) => certificate.toString()).join(''),
  };
}

function dnsNames(certificate: X509Certificate): string[] {
  const names = (certificate.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
  if (names.length > 0) return [...new Set(names)];
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(certificate.subject)?.[1];
  return cn && /^[a-z0-9*.-]+$/i.test(cn) ? [cn.toLowerCase()] : [];
}

function organisationOf(name: string): string {
  const field = (key: string) => new RegExp(`(?:^|\\n)${key}=([^\\n]+)`).exec(name)?.[1];
  return clip(field('O') ?? field('CN') ?? 'unknown', 100);
}

/** Cloudflare's names: SHA256WithRSA, ECDSAWithSHA256, ... */
function signatureName(certificate: X509Certificate): string {
  const type = certificate.publicKey.asymmetricKeyType;
  return type === 'ec' ? 'ECDSAWithSHA256' : type === 'rsa' ? 'SHA256WithRSA' : clip(String(type), 40);
}

/** Whether `hostname` is one of `hosts` (a `*.` name covers exactly one label under it). */
export function coversHostname(hosts: readonly string[], hostname: string): boolean {
  for (const host of hosts) {
    if (host === hostname) return true;
    if (host.startsWith('*.')) {
      const dot = hostname.indexOf('.');
      if (dot > 0 && hostname.slice(dot + 1) === host.slice(2)) return true;
    }
  }
  return false;
}
