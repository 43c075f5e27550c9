import { describe, expect, it } from 'vitest';
import { splitStatements } from '../../src/d1/statements.ts';

describe('splitStatements', () => {
  it('splits on semicolons and drops empty and comment-only statements', () => {
    expect(splitStatements('SELECT 1; SELECT 2;; -- done\n/* nothing */ ;')).toEqual(['SELECT 1', 'SELECT 2']);
    expect(splitStatements('SELECT 1')).toEqual(['SELECT 1']);
    expect(splitStatements('  -- only a comment\n')).toEqual([]);
  });

  it('keeps semicolons inside quotes, identifiers and comments', () => {
    expect(splitStatements(`INSERT INTO t VALUES ('a;b', "c;d", [e;f], \`g;h\`); SELECT 'it''s; fine'`)).toEqual([
      `INSERT INTO t VALUES ('a;b', "c;d", [e;f], \`g;h\`)`,
      `SELECT 'it''s; fine'`,
    ]);
    expect(splitStatements('SELECT 1 /* ; */ -- ;\n; SELECT 2')).toEqual(['SELECT 1 /* ; */ -- ;', 'SELECT 2']);
  });

  it("keeps a trigger's body whole, CASE ... END inside it included", () => {
    const trigger = `CREATE TRIGGER audit AFTER INSERT ON t BEGIN
      INSERT INTO log VALUES (new.id, CASE WHEN new.v > 0 THEN 'pos' ELSE 'neg' END);
      UPDATE t SET seen = 1 WHERE id = new.id;
    END`;
    expect(splitStatements(`CREATE TABLE t(id);${trigger};SELECT 1`)).toEqual([
      'CREATE TABLE t(id)',
      trigger,
      'SELECT 1',
    ]);
    const temp = 'CREATE TEMP TRIGGER x AFTER DELETE ON t BEGIN DELETE FROM u; END';
    expect(splitStatements(`${temp}; SELECT 2`)).toEqual([temp, 'SELECT 2']);
  });
});
