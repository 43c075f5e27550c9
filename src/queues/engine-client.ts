import { Agent, request } from 'undici';
import { QUEUE_HEADER } from '../workerd/index.ts';
import { QueueErrors } from './errors.ts';
import type { QueueMetrics } from './schemas.ts';

/** How Queues reaches an account's queue engine: its socket, once the account's process listens. */
export interface QueueEngineSockets {
  socketPath(kind: 'queues', accountId: string): string;
  ensure(accountId: string): Promise<void>;
  /** Starts the account's queue engine again with its consumers as they are now (they are its config). */
  restart(accountId: string): Promise<void>;
}

/**
 * Talks to a queue over the producer protocol workerd's queue binding speaks (GET /metrics, POST /message and
 * /batch), on the same socket as a bound script's, the queue named by the same header.
 */
export class QueueEngineClient {
  readonly #sockets: QueueEngineSockets;
  readonly #agents = new Map<string, Agent>();

  constructor(sockets: QueueEngineSockets) {
    this.#sockets = sockets;
  }

  /** The queue's backlog (messages not yet acknowledged), as the engine counts it. */
  async metrics(accountId: string, queueId: string): Promise<QueueMetrics> {
    try {
      await this.#sockets.ensure(accountId);
      const answer = await request('http://queues/metrics', {
        headers: { [QUEUE_HEADER]: queueId },
        dispatcher: this.#agent(accountId),
      });
      const body = (await answer.body.json()) as Partial<QueueMetrics>;
      if (answer.statusCode !== 200 || typeof body.backlogCount !== 'number') {
        throw new Error(`the engine answered ${answer.statusCode}`);
      }
      return {
        backlogCount: body.backlogCount,
        backlogBytes: body.backlogBytes ?? 0,
        oldestMessageTimestamp: body.oldestMessageTimestamp ?? 0,
      };
    } catch (error) {
      throw QueueErrors.unavailable(error instanceof Error ? error.message : String(error));
    }
  }

  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }

  #agent(accountId: string): Agent {
    let agent = this.#agents.get(accountId);
    if (!agent) {
      agent = new Agent({ connect: { socketPath: this.#sockets.socketPath('queues', accountId) } });
      this.#agents.set(accountId, agent);
    }
    return agent;
  }
}
