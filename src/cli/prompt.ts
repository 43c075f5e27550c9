import { createInterface } from 'node:readline/promises';
import { CliError } from './errors.ts';

/** Whether a person can answer questions: stdin and stderr (where prompts go) are terminals. */
export function isInteractive(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true;
}

/**
 * Asks a yes/no question on the terminal (the prompt on stderr, so stdout stays the command's output).
 * Without a terminal it answers `fallback` and says so, as wrangler does in CI.
 */
export async function confirm(question: string, fallback: boolean): Promise<boolean> {
  if (!isInteractive()) {
    process.stderr.write(`${question} ${fallback ? 'yes' : 'no'} (not interactive)\n`);
    return fallback;
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(`${question} ${fallback ? '[Y/n]' : '[y/N]'} `)).trim().toLowerCase();
    if (answer === '') return fallback;
    return answer === 'y' || answer === 'yes';
  } finally {
    rl.close();
  }
}

/** Reads a line without echo (secrets). Ctrl+C cancels. */
export function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    let value = '';
    // Echo goes off before the prompt shows: keys typed the moment it appears are not echoed either.
    stdin.setRawMode(true);
    process.stderr.write(prompt);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done();
        if (ch === '\u0003') return done(new CliError('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
