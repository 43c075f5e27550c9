/**
 * workerd loads a config whose `durableObjectNamespaces` name a class the worker does not export, and only
 * warns (calls to it fail at runtime). The upload check reads that warning so an upload is refused instead.
 */
const MISSING_CLASS = /referenced the class "([^"]+)", but no such Durable Object class is exported/;

/** A Durable Object class the script's migrations create that its main module does not export. */
export class MissingDurableObjectClassError extends Error {
  readonly className: string;

  constructor(className: string) {
    super(`the Durable Object class "${className}" is not exported by the main module`);
    this.className = className;
  }
}

/** The first class workerd's output says is missing, if any. */
export function missingDurableObjectClass(lines: readonly string[]): string | undefined {
  for (const line of lines) {
    const found = MISSING_CLASS.exec(line);
    if (found) return found[1];
  }
  return undefined;
}
