import type { SqlDatabase } from '../../../src/db/index.ts';

/** What a conformance case gets: the database of the current test, and a second handle on it. */
export interface StoreContext {
  db(): SqlDatabase;
  reopen(): SqlDatabase;
}
