const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Normalises a zone or load-balancer hostname (lowercase, no trailing dot) and says what is wrong with it,
 * if anything: at least two labels, RFC 1123 labels, 253 characters at most, not an IP address.
 */
export function normaliseHostname(raw: string): { name: string; problem?: string } {
  const name = raw.trim().toLowerCase().replace(/\.$/, '');
  if (name.length === 0) return { name, problem: 'it is empty' };
  if (name.length > 253) return { name, problem: 'it is longer than 253 characters' };
  const labels = name.split('.');
  if (labels.length < 2) return { name, problem: 'it needs at least two labels (example.com)' };
  if (!labels.every((label) => LABEL.test(label)))
    return { name, problem: 'labels are 1 to 63 letters, digits or "-", not starting or ending with "-"' };
  if (/^\d+$/.test(labels.at(-1) ?? '')) return { name, problem: 'an IP address is not a hostname' };
  return { name };
}

/**
 * The hostname a Host header names, as every listener compares it: lowercase, without the port or one trailing
 * dot (`Example.COM.:8080` -> `example.com`); an IPv6 literal keeps its brackets (`[::1]:8080` -> `[::1]`, as a
 * URL's hostname), so it never equals a name. Empty for a missing or empty header. Not a validation: a malformed
 * header gives a string that matches no configured name (see proxy's isValidHostHeader for that).
 */
export function hostnameOf(host: string | undefined): string {
  if (!host) return '';
  let name = host.trim().toLowerCase();
  if (name.startsWith('[')) {
    const end = name.indexOf(']');
    if (end > 0) name = name.slice(0, end + 1);
  } else {
    const colon = name.indexOf(':');
    if (colon >= 0) name = name.slice(0, colon);
  }
  return name.endsWith('.') ? name.slice(0, -1) : name;
}
