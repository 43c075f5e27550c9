/**
 * Data-plane tunables (milliseconds; the server's settings give them, src/server/settings/schema.ts):
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

export const DEFAULT_TRAFFIC_SETTINGS: TrafficSettings = {
  connectTimeoutMs: 10_000,
  responseTimeoutMs: 100_000,
  idleTimeoutMs: 120_000,
  maxResponseHeaderBytes: 32 * 1024,
};
