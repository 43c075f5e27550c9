/**
 * Data-plane tunables (milliseconds, from the server's environment):
 * - LEDGE_LB_CONNECT_TIMEOUT_MS (default 10 s): connecting to an origin; then 522, or a retry elsewhere;
 * - LEDGE_LB_RESPONSE_TIMEOUT_MS (default 100 s, Cloudflare's): from sending a request to the response
 *   headers; then 524, so a silent origin holds only its own requests;
 * - LEDGE_LB_IDLE_TIMEOUT_MS (default 120 s): no byte either way on an origin connection mid-response.
 * Response headers above 32 KiB are refused (502), so a huge-header origin cannot grow memory.
 */
export interface TrafficSettings {
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  idleTimeoutMs: number;
  maxResponseHeaderBytes: number;
}

const DEFAULTS: TrafficSettings = {
  connectTimeoutMs: 10_000,
  responseTimeoutMs: 100_000,
  idleTimeoutMs: 120_000,
  maxResponseHeaderBytes: 32 * 1024,
};

const VARIABLES = {
  connectTimeoutMs: 'LEDGE_LB_CONNECT_TIMEOUT_MS',
  responseTimeoutMs: 'LEDGE_LB_RESPONSE_TIMEOUT_MS',
  idleTimeoutMs: 'LEDGE_LB_IDLE_TIMEOUT_MS',
} as const;

export function trafficSettings(env: NodeJS.ProcessEnv): TrafficSettings {
  const settings = { ...DEFAULTS };
  for (const [key, variable] of Object.entries(VARIABLES) as [keyof typeof VARIABLES, string][]) {
    const raw = env[variable];
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 50 || value > 3_600_000) {
      throw new Error(`invalid ${variable}: ${raw} (use milliseconds from 50 to 3600000)`);
    }
    settings[key] = value;
  }
  return settings;
}
