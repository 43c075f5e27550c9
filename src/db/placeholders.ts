const cache = new Map<string, string>();

/**
 * Rewrites the portable `?` placeholders as PostgreSQL's `$1, $2, ...`, leaving `?` inside quoted
 * strings, quoted identifiers and comments alone. Results are cached: stores use a fixed set of texts.
 */
export function numberPlaceholders(sql: string): string {
  let numbered = cache.get(sql);
  if (numbered === undefined) {
    numbered = rewrite(sql);
    if (cache.size < 10_000) cache.set(sql, numbered);
  }
  return numbered;
}

function rewrite(sql: string): string {
  let out = '';
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    const char = sql[i]!;
    if (char === "'" || char === '"') {
      const end = sql.indexOf(char, i + 1);
      const stop = end === -1 ? sql.length : end + 1;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (char === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (char === '?') {
      out += `$${++n}`;
    } else {
      out += char;
    }
  }
  return out;
}
