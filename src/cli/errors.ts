/** A user-facing CLI failure (exit code 1) that is not an API error: bad file, missing setting, ... */
export class CliError extends Error {
  override name = 'CliError';
  /** 1, or 130 for a command stopped by Ctrl+C (as a shell reports SIGINT). */
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A usage mistake the parser cannot see (exit code 2), e.g. two mutually exclusive options. */
export class UsageError extends Error {
  override name = 'UsageError';
}
