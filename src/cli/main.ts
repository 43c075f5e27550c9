#!/usr/bin/env node
// Entry point of the `ledge` CLI. node:sqlite still prints an ExperimentalWarning on Node 24; it says
// nothing to a user, so that one warning is dropped before the rest of the program is loaded.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === 'string' ? warning : warning.message;
  if (/SQLite is an experimental feature|Type Stripping/.test(text)) return;
  (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;

const { run } = await import('./program.ts');
process.exitCode = await run(process.argv);
