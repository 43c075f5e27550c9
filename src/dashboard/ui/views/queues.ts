import { del, enc, get, post } from '../api.ts';
import { replace } from '../dom.ts';
import { acct } from '../state.ts';
import { renderQueues, type QueueRow } from './queues.render.ts';

const queuesPath = () => `${acct()}/queues`;

/** "Queues": the list with each queue's backlog (its metrics), with create and delete. */
export async function queues(main: HTMLElement): Promise<void> {
  const list = await get<QueueRow[]>(queuesPath());
  const rows = await Promise.all(
    list.map(async (queue) => ({
      ...queue,
      // One queue's engine being unavailable shows as such on its row; the others still show.
      backlog: await get<QueueRow['backlog']>(`${queuesPath()}/${enc(queue.queue_id)}/metrics`).catch(() => undefined),
    })),
  );
  replace(
    main,
    renderQueues(rows, {
      create: async (name) => {
        await post(queuesPath(), { queue_name: name });
        await queues(main);
      },
      remove: async (queue) => {
        await del(`${queuesPath()}/${enc(queue.queue_id)}`);
        await queues(main);
      },
    }),
  );
}
