import type { ConsumerRecord, QueueRecord } from './schemas.ts';

/** A worker consumer as the SDK types it (Consumer.MqWorkerConsumerResponse), with `script` as wrangler reads it. */
export function renderConsumer(consumer: ConsumerRecord, queueName: string) {
  return {
    consumer_id: consumer.consumer_id,
    created_on: consumer.created_on,
    dead_letter_queue: consumer.dead_letter_queue ?? undefined,
    queue_name: queueName,
    queue_id: consumer.queue_id,
    script: consumer.script_name,
    script_name: consumer.script_name,
    type: 'worker' as const,
    settings: {
      batch_size: consumer.batch_size,
      max_retries: consumer.max_retries,
      max_wait_time_ms: consumer.max_wait_time_ms,
      ...(consumer.max_concurrency !== null ? { max_concurrency: consumer.max_concurrency } : {}),
      retry_delay: consumer.retry_delay,
    },
  };
}

/** A queue as the SDK types it (Queue): its consumers and producers with it. */
export function renderQueue(queue: QueueRecord, consumers: readonly ConsumerRecord[], producers: readonly string[]) {
  return {
    queue_id: queue.queue_id,
    queue_name: queue.queue_name,
    created_on: queue.created_on,
    modified_on: queue.modified_on,
    consumers: consumers.map((consumer) => renderConsumer(consumer, queue.queue_name)),
    consumers_total_count: consumers.length,
    producers: producers.map((script) => ({ type: 'worker' as const, script })),
    producers_total_count: producers.length,
    settings: {
      delivery_delay: queue.delivery_delay,
      delivery_paused: queue.delivery_paused === 1,
      message_retention_period: queue.message_retention_period,
    },
  };
}
