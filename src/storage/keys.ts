/**
 * The smallest string greater than every string that starts with `prefix`, in code point (= UTF-8 byte)
 * order: the last code point incremented. null when no such bound exists (all U+10FFFF).
 */
export function prefixUpperBound(prefix: string): string | null {
  const points = [...prefix];
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      const next = last === 0xd7ff ? 0xe000 : last + 1;
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return null;
}
