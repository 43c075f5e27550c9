import { request } from 'node:http';

/** What a script's Workflows engine answered (config/workflows/engine-module.ts), or why it could not. */
export interface WorkflowEngineAnswer {
  status: number;
  body: unknown;
}

/** A call to the engine may wait on an instance that is busy (its object runs one call at a time). */
const ENGINE_CALL_TIMEOUT_MS = 60_000;

/**
 * One call to the Workflows engine of a script, through the ping service of the process that runs it
 * (isolate/ping.ts): `call` is the engine's path (`instances`, `create`, `describe`...), `query` names the
 * Workflow and the instance. A process that went away answers 503.
 */
export function callWorkflowEngine(
  pingSocket: string,
  target: { accountId: string; script: string },
  call: string,
  query: Record<string, string>,
  body?: unknown,
): Promise<WorkflowEngineAnswer> {
  const search = new URLSearchParams({ a: target.accountId, s: target.script, ...query });
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const req = request(
      {
        socketPath: pingSocket,
        path: `/workflows/${call}?${search}`,
        method: payload ? 'POST' : 'GET',
        headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
        timeout: ENGINE_CALL_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve({ status: response.statusCode ?? 500, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch {
            resolve({ status: 503, body: { error: { code: 'unavailable', message: 'the engine did not answer' } } });
          }
        });
        response.on('error', () => resolve(unavailable()));
      },
    );
    req.on('timeout', () => req.destroy(new Error('the Workflows engine did not answer in time')));
    req.on('error', () => resolve(unavailable()));
    req.end(payload);
  });
}

const unavailable = (): WorkflowEngineAnswer => ({
  status: 503,
  body: { error: { code: 'unavailable', message: "the Workflow's script is not running" } },
});
