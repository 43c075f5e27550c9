/** A user-facing CLI failure (exit code 1) that is not an API error: bad file, missing setting, ... */
export class CliError extends Error {
  override name = 'CliError';
}

/** A usage mistake the parser cannot see (exit code 2), e.g. two mutually exclusive options. */
export class UsageError extends Error {
  override name = 'UsageError';
}
