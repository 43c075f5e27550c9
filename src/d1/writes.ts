/**
 * Whether a statement may make the database bigger, judged by its first keyword (after comments and a
 * WITH clause's name): a full database still takes reads, deletes and drops, as D1 does.
 */
export function isWrite(sql: string): boolean {
  const text = sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ').trimStart();
  const keyword = /^[A-Za-z]+/.exec(text)?.[0]?.toUpperCase() ?? '';
  if (keyword === 'WITH') return /\b(INSERT|UPDATE|REPLACE)\b/i.test(text);
  return ['INSERT', 'UPDATE', 'REPLACE', 'CREATE', 'ALTER', 'VACUUM'].includes(keyword);
}
