/**
 * The data plane's deadlines and bounds (load balancing reads them from its settings): connecting to an
 * origin (then 522, or a retry elsewhere), from sending a request to the response headers (then 524), no
 * byte either way on an origin connection mid-response, and the largest response head taken (else 502).
 */
export interface ProxySettings {
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  idleTimeoutMs: number;
  maxResponseHeaderBytes: number;
}
