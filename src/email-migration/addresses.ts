/**
 * The legacy `notification_email` holds comma-separated addresses. Two pools belong to the same
 * recipient group when they name the same set of addresses, whatever the order, spacing or case.
 */
export function parseAddresses(raw: string): string[] {
  const seen = new Map<string, string>();
  for (const part of raw.split(',')) {
    const address = part.trim();
    if (address !== '' && !seen.has(address.toLowerCase())) seen.set(address.toLowerCase(), address);
  }
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, address]) => address);
}

/** A stable key for a set of addresses (lower case, sorted). */
export function addressKey(addresses: readonly string[]): string {
  return addresses
    .map((a) => a.toLowerCase())
    .sort()
    .join(',');
}
