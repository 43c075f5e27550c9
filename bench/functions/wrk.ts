import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface WrkResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Bytes per second read from responses. */
  readBytesPerSec: number;
  errors: number;
  non2xx: number;
}

export interface Scenario {
  method: 'GET' | 'PUT';
  /** GET: the path; PUT: keys rotate over `keys` names. */
  path: string;
  headers: Record<string, string>;
  bodyBytes?: number;
  keys?: number;
  /**
   * Each connection waits this long before its next request (wrk's `delay` hook): the load is held at
   * roughly connections x 1000 / (delay + latency) req/s instead of as fast as the server answers, so
   * the CPU per request of two builds compares at the same pace.
   */
  delayMs?: number;
  /** Run wrk on these cores only (`taskset -c`), e.g. to keep it off the server's core. */
  cpus?: string;
  /**
   * An /etc/hosts for wrk alone (bind-mounted in a private mount namespace: needs root): wrk sends the URL's
   * host as SNI, so an https:// URL must name the site, and the machine's resolver knows no test hostnames.
   */
  hostsFile?: string;
  /** wrk's request timeout (default 2 s): a slow server's answers then count instead of timing out. */
  timeoutSeconds?: number;
}

/** Runs `wrk -t1 -c32 -d<s>s --latency` with a Lua script for the scenario (as in baselines.md). */
export async function runWrk(
  url: string,
  scenario: Scenario,
  dir: string,
  seconds: number,
  connections = 32,
): Promise<WrkResult> {
  const lua = join(dir, `scenario-${Date.now()}.lua`);
  const headers = Object.entries(scenario.headers)
    .map(([k, v]) => `[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join(', ');
  const delay = scenario.delayMs === undefined ? '' : `delay = function() return ${scenario.delayMs} end\n`;
  writeFileSync(
    lua,
    delay +
      (scenario.method === 'GET'
        ? `local h = { ${headers} }\nrequest = function() return wrk.format("GET", ${JSON.stringify(scenario.path)}, h) end\n`
        : `local h = { ${headers} }\nlocal body = string.rep("x", ${scenario.bodyBytes ?? 1024})\nlocal i = 0\n` +
          `request = function() i = (i + 1) % ${scenario.keys ?? 1000}; return wrk.format("PUT", "/bench-" .. i, h, body) end\n`),
  );
  const timeout = scenario.timeoutSeconds === undefined ? [] : ['--timeout', `${scenario.timeoutSeconds}s`];
  const wrk = ['wrk', '-t1', `-c${connections}`, `-d${seconds}s`, ...timeout, '--latency', '-s', lua, url];
  const pinned = scenario.cpus === undefined ? wrk : ['taskset', '-c', scenario.cpus, ...wrk];
  const command =
    scenario.hostsFile === undefined
      ? pinned
      : ['unshare', '-m', 'sh', '-c', 'mount --bind "$0" /etc/hosts && exec "$@"', scenario.hostsFile, ...pinned];
  const { stdout } = await promisify(execFile)(command[0]!, command.slice(1), {
    maxBuffer: 1 << 20,
  });
  return parseWrk(stdout);
}

export function parseWrk(out: string): WrkResult {
  const number = (re: RegExp) => Number(re.exec(out)?.[1] ?? 'NaN');
  const latency = (percent: number) => {
    const match = new RegExp(`\\s${percent}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    return match ? Number(match[1]) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[match[2]!]! : NaN;
  };
  const transfer = /Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/.exec(out);
  const unit = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 } as Record<string, number>;
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requestsPerSec: number(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: latency(50),
    p99Ms: latency(99),
    readBytesPerSec: transfer ? Number(transfer[1]) * unit[transfer[2]!]! : NaN,
    errors: errors ? errors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/) || 0,
  };
}
