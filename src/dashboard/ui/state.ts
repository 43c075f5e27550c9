/** Who is signed in, and which account the pages show. */
export interface SessionInfo {
  email: string;
  read_only: boolean;
  via: 'global_key' | 'api_token';
  account_ids: string[];
  csrf_token: string;
  /** The ports of the server's other doors (public buckets on the traffic port, the S3 API), when listening. */
  endpoints?: { public_port?: number; s3_port?: number };
}

export const state: { session: SessionInfo | undefined; accountId: string; accounts: { id: string; name: string }[] } =
  {
    session: undefined,
    accountId: '',
    accounts: [],
  };

export function readOnly(): boolean {
  return state.session?.read_only ?? true;
}

/** `/accounts/{id}` of the account on screen. */
export function acct(): string {
  return `/accounts/${encodeURIComponent(state.accountId)}`;
}
