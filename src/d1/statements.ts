/**
 * Splits SQL text into its statements, as D1's REST API answers one result per statement. Semicolons
 * inside quotes (`'`, `"`, `` ` ``, `[...]`), comments and a trigger's BEGIN ... END body do not split;
 * statements that are only whitespace or comments are dropped (D1 skips them too).
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let meaningful = false;
  // Words of the statement so far, upper-cased, to recognise CREATE [TEMP] TRIGGER.
  let firstWords: string[] = [];
  let blockDepth = 0;
  let caseDepth = 0;
  const isTrigger = () =>
    firstWords[0] === 'CREATE' &&
    (firstWords[1] === 'TRIGGER' || (/^TEMP(ORARY)?$/.test(firstWords[1] ?? '') && firstWords[2] === 'TRIGGER'));
  const finish = (end: number) => {
    if (meaningful) statements.push(text.slice(start, end).trim());
    start = end + 1;
    meaningful = false;
    firstWords = [];
    blockDepth = 0;
    caseDepth = 0;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '-' && text[i + 1] === '-') {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? text.length : eol;
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? text.length : close + 1;
    } else if (c === "'" || c === '"' || c === '`' || c === '[') {
      meaningful = true;
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      // A quote is escaped by doubling it.
      while (j < text.length) {
        if (text[j] === close) {
          if (close !== ']' && text[j + 1] === close) j += 2;
          else break;
        } else j++;
      }
      i = j;
    } else if (c === ';') {
      if (blockDepth === 0) finish(i);
    } else if (/[A-Za-z_]/.test(c)) {
      meaningful = true;
      let j = i;
      while (j < text.length && /[A-Za-z0-9_$]/.test(text[j]!)) j++;
      const word = text.slice(i, j).toUpperCase();
      if (firstWords.length < 3) firstWords.push(word);
      if (isTrigger()) {
        if (word === 'BEGIN') blockDepth++;
        else if (word === 'CASE') caseDepth++;
        else if (word === 'END') {
          if (caseDepth > 0) caseDepth--;
          else if (blockDepth > 0) blockDepth--;
        }
      }
      i = j - 1;
    } else if (!/\s/.test(c)) {
      meaningful = true;
    }
  }
  finish(text.length);
  return statements;
}
