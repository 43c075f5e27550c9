/**
 * Cap'n Proto text literals. Strings are written raw UTF-8 with `"` and `\` escaped and control
 * characters as \xNN, which the capnp text parser reads back byte for byte.
 */
export function capnpString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

export function capnpList(items: string[]): string {
  return `[${items.join(', ')}]`;
}
