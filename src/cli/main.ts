#!/usr/bin/env node
// Entry point of the `ledge` CLI. node:sqlite still prints an ExperimentalWarning on Node 24; it says
// nothing to a user, so that one warning is dropped before the rest of the program is loaded.
const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === 'string' ? warning : warning.message;
  if (/SQLite is an experimental feature|Type Stripping/.test(text)) return;
  (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;

// V8's compile cache (in the OS temp dir, or NODE_COMPILE_CACHE) keeps compiled modules between runs:
// with no build step, it roughly halves the time to load the server on every start after the first, and a
// module found there is not type-stripped again (the stripper costs ~17 MiB of memory once loaded). bin/ledge
// sets NODE_COMPILE_CACHE before Node starts, so that this file itself comes from the cache too.
(await import('node:module')).enableCompileCache?.();

const { run } = await import('./program.ts');
process.exitCode = await run(process.argv);
