/** `--name <number>` from the command line, or `fallback`. */
export function numberArgument(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) || fallback : fallback;
}

/** `--name a,b,c` from the command line, or undefined. */
export function listArgument(name: string): string[] | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1]?.split(',') : undefined;
}
