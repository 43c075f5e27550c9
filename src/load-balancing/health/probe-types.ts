import type { MonitorType } from '../monitor-schemas.ts';
import type { FailureReasonText } from './failure-reasons.ts';

/** Everything one probe needs, resolved from a monitor and an origin. */
export interface ProbeTarget {
  type: MonitorType;
  /** IP literal or hostname. */
  address: string;
  port: number;
  method: string;
  path: string;
  /** Request headers, Host included when the monitor or the origin set one. */
  headers: Record<string, string[]>;
  timeoutMs: number;
  retries: number;
  expectedCodes: string;
  expectedBody: string;
  followRedirects: boolean;
  allowInsecure: boolean;
  /** Sent in the User-Agent so origin operators can tell which pool probes them. */
  poolId: string;
}

export interface ProbeResult {
  healthy: boolean;
  failureReason: FailureReasonText;
  /** HTTP status of the last response, when there was one. */
  responseCode: number | null;
  /** Round-trip time of the successful (or last) attempt, milliseconds. */
  rttMs: number | null;
}
