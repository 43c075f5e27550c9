import { connect, type Socket } from 'node:net';
import type { EgressPolicy } from '../../egress/index.ts';
import { FailureReason, reasonForError } from './failure-reasons.ts';
import type { ProbeResult, ProbeTarget } from './probe-types.ts';

/**
 * TCP check: healthy once the connection is established. SMTP check: additionally waits for the
 * server's 220 greeting and says QUIT, so a listener that accepts but is not a mail server fails.
 */
export function tcpAttempt(target: ProbeTarget, egress: EgressPolicy): Promise<ProbeResult> {
  const started = performance.now();
  // An IP literal is connected to without a lookup, so it is checked here; names in the lookup.
  if (egress.check(target.address, target.port))
    return Promise.resolve({
      healthy: false,
      failureReason: FailureReason.egressRefused,
      responseCode: null,
      rttMs: null,
    });
  return new Promise<ProbeResult>((resolve) => {
    let settled = false;
    const socket: Socket = connect({ host: target.address, port: target.port, lookup: egress.lookupFor(target.port) });
    const finish = (healthy: boolean, failureReason: ProbeResult['failureReason'], measured = true) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      socket.destroy();
      resolve({ healthy, failureReason, responseCode: null, rttMs: measured ? performance.now() - started : null });
    };
    const deadline = setTimeout(() => finish(false, FailureReason.tcpConnectionFailed, false), target.timeoutMs);
    socket.on('error', (error) => {
      const reason = reasonForError(error);
      finish(false, reason, reason !== FailureReason.egressRefused);
    });
    socket.on('connect', () => {
      if (target.type !== 'smtp') {
        finish(true, FailureReason.none);
        return;
      }
      let greeting = '';
      socket.on('data', (chunk: Buffer) => {
        greeting += chunk.toString('latin1');
        if (!greeting.includes('\n')) return;
        const ok = greeting.startsWith('220');
        if (ok) socket.write('QUIT\r\n');
        finish(ok, ok ? FailureReason.none : FailureReason.invalidResponse);
      });
      socket.on('end', () => finish(false, FailureReason.connectionReset));
    });
  });
}
