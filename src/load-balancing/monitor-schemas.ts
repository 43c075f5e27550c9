import { z } from 'zod';

export const MONITOR_TYPES = ['http', 'https', 'tcp', 'udp_icmp', 'icmp_ping', 'smtp'] as const;
export type MonitorType = (typeof MONITOR_TYPES)[number];
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
/** "200", "2xx", or a comma-separated list of those ("200,301"). */
const EXPECTED_CODES = /^$|^[1-5](\d\d|xx)(\s*,\s*[1-5](\d\d|xx))*$/;

export function isHttpType(type: MonitorType): type is 'http' | 'https' {
  return type === 'http' || type === 'https';
}

/**
 * Body of POST/PUT (PATCH merges onto the stored monitor first). `minInterval` is a server setting
 * (`LEDGE_LB_MIN_INTERVAL`, default 5 s as on paid plans) so tests and previews can probe faster.
 */
export function monitorInputSchema(minInterval: number) {
  return z
    .strictObject({
      id: z.string().optional(),
      created_on: z.string().optional(),
      modified_on: z.string().optional(),
      type: z.enum(MONITOR_TYPES).default('http'),
      description: z.string().max(1024).default(''),
      method: z.string().optional(),
      path: z
        .string()
        .max(2048)
        .refine((v) => v === '' || v.startsWith('/'), 'must start with "/"')
        .optional(),
      header: z.record(z.string().min(1).max(256), z.array(z.string().max(4096)).min(1)).default({}),
      port: z.number().int().min(0).max(65535).nullable().default(0),
      timeout: z.number().int().min(1).max(10).default(5),
      retries: z.number().int().min(0).max(5).default(2),
      interval: z.number().int().min(minInterval, `must be at least ${minInterval} seconds`).max(3600).default(60),
      expected_codes: z.string().regex(EXPECTED_CODES, 'must look like "200", "2xx" or "200,301"').optional(),
      expected_body: z.string().max(10_240).default(''),
      follow_redirects: z.boolean().default(false),
      allow_insecure: z.boolean().default(false),
      consecutive_up: z.number().int().min(0).max(100).default(0),
      consecutive_down: z.number().int().min(0).max(100).default(0),
      probe_zone: z.string().max(255).default(''),
    })
    .superRefine((monitor, ctx) => {
      const http = isHttpType(monitor.type);
      if (http && monitor.method !== undefined && !(HTTP_METHODS as readonly string[]).includes(monitor.method)) {
        ctx.addIssue({ code: 'custom', path: ['method'], message: `must be one of ${HTTP_METHODS.join(', ')}` });
      }
      if (monitor.type === 'tcp' && monitor.method !== undefined && monitor.method !== 'connection_established') {
        ctx.addIssue({
          code: 'custom',
          path: ['method'],
          message: 'must be "connection_established" for tcp monitors',
        });
      }
      const hostValues = Object.entries(monitor.header).find(([name]) => name.toLowerCase() === 'host')?.[1];
      if (hostValues && hostValues.length !== 1) {
        ctx.addIssue({ code: 'custom', path: ['header', 'Host'], message: 'exactly one Host value is allowed' });
      }
    });
}

export type MonitorInput = z.infer<ReturnType<typeof monitorInputSchema>>;

/** A monitor as stored and rendered: every field present, defaults filled in. */
export interface Monitor {
  id: string;
  created_on: string;
  modified_on: string;
  type: MonitorType;
  description: string;
  method: string;
  path: string;
  header: Record<string, string[]>;
  port: number;
  timeout: number;
  retries: number;
  interval: number;
  expected_codes: string;
  expected_body: string;
  follow_redirects: boolean;
  allow_insecure: boolean;
  consecutive_up: number;
  consecutive_down: number;
  probe_zone: string;
}

/** Fills in the type-dependent defaults: method, path and expected_codes only mean something for http(s). */
export function toMonitor(input: MonitorInput, meta: { id: string; created_on: string; modified_on: string }): Monitor {
  const http = isHttpType(input.type);
  return {
    ...meta,
    type: input.type,
    description: input.description,
    method: input.method ?? (http ? 'GET' : input.type === 'tcp' ? 'connection_established' : ''),
    path: http ? input.path || '/' : '',
    header: input.header,
    port: input.port ?? 0,
    timeout: input.timeout,
    retries: input.retries,
    interval: input.interval,
    expected_codes: http ? input.expected_codes || '200' : '',
    expected_body: input.expected_body,
    follow_redirects: input.follow_redirects,
    allow_insecure: input.allow_insecure,
    consecutive_up: input.consecutive_up,
    consecutive_down: input.consecutive_down,
    probe_zone: input.probe_zone,
  };
}
