/* global URL, Response */
// The queues benchmark's Worker: /send stamps a message with the time its request arrived; queue() records, per
// message, how long after that its delivery started (workerd's clock is the event's start in both handlers).
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const id = url.searchParams.get('id');
    if (url.pathname === '/send') {
      await env.Q.send({ id, sentAt: Date.now() });
      return new Response('sent');
    }
    const latency = await env.RESULTS.get(id);
    return new Response(latency ?? '', { status: latency === null ? 404 : 200 });
  },
  async queue(batch, env) {
    const now = Date.now();
    for (const message of batch.messages) {
      await env.RESULTS.put(message.body.id, String(now - message.body.sentAt));
      message.ack();
    }
  },
};
