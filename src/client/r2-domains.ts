import type { ApiClient } from './api-client.ts';

/** A bucket's managed public URL (R2's r2.dev; `url` is Ledge's: scheme and port included). */
export interface ManagedDomainSummary {
  bucketId: string;
  domain: string;
  enabled: boolean;
  url?: string;
}

export interface CustomDomainSummary {
  domain: string;
  enabled: boolean;
  zoneId: string;
  zoneName?: string;
  status?: { ownership: string; ssl: string };
  url?: string;
}

const domains = (accountId: string, bucket: string) =>
  `/accounts/${encodeURIComponent(accountId)}/r2/buckets/${encodeURIComponent(bucket)}/domains`;

/** Whether the bucket's managed public URL is on, and its hostname. */
export async function getManagedDomain(api: ApiClient, accountId: string, bucket: string) {
  return (await api.request<ManagedDomainSummary>('GET', `${domains(accountId, bucket)}/managed`)).result;
}

/** Switches the bucket's managed public URL on or off. */
export async function setManagedDomain(api: ApiClient, accountId: string, bucket: string, enabled: boolean) {
  const path = `${domains(accountId, bucket)}/managed`;
  return (await api.request<ManagedDomainSummary>('PUT', path, { body: { enabled } })).result;
}

/** The bucket's custom domains. */
export async function listCustomDomains(api: ApiClient, accountId: string, bucket: string) {
  const path = `${domains(accountId, bucket)}/custom`;
  return (await api.request<{ domains: CustomDomainSummary[] }>('GET', path)).result.domains;
}

/** Serves the bucket at `domain`, a name in one of the account's zones. */
export async function addCustomDomain(
  api: ApiClient,
  accountId: string,
  bucket: string,
  input: { domain: string; zoneId: string; minTLS?: string | undefined },
) {
  const body = {
    domain: input.domain,
    zoneId: input.zoneId,
    enabled: true,
    ...(input.minTLS ? { minTLS: input.minTLS } : {}),
  };
  return (await api.request<CustomDomainSummary>('POST', `${domains(accountId, bucket)}/custom`, { body })).result;
}

/** Stops serving the bucket at `domain`. */
export async function removeCustomDomain(api: ApiClient, accountId: string, bucket: string, domain: string) {
  const path = `${domains(accountId, bucket)}/custom/${encodeURIComponent(domain)}`;
  return (await api.request<{ domain: string }>('DELETE', path)).result;
}
