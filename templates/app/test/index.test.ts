// Unit test of the function with an in-memory stand-in for the bucket: `npm test` (Node 20 or newer;
// tsx loads the TypeScript, so it runs on Node versions without type stripping too).
// The deployed function is exercised end to end against a real bucket by `ledge deploy` + curl.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import worker, { type Env } from '../src/index.ts';

class MemoryBucket {
	readonly objects = new Map<string, Uint8Array>();
	async put(key: string, body: ReadableStream | null) {
		this.objects.set(key, new Uint8Array(await new Response(body).arrayBuffer()));
		return {};
	}
	async get(key: string) {
		const bytes = this.objects.get(key);
		if (!bytes) return null;
		return { body: bytes, httpEtag: `"${bytes.length}"`, writeHttpMetadata: (_headers: Headers) => {} };
	}
	async delete(key: string) {
		this.objects.delete(key);
	}
}

const env = (bucket: MemoryBucket): Env => ({ MY_BUCKET: bucket as unknown as R2Bucket, AUTH_KEY_SECRET: 'secret' });
const call = (bucket: MemoryBucket, method: string, key: string, headers: Record<string, string> = {}, body?: string) =>
	worker.fetch(new Request(`http://example.test/${key}`, { method, headers, body }), env(bucket));

test('PUT needs the auth header, then GET serves an allowed key', async () => {
	const bucket = new MemoryBucket();
	assert.equal((await call(bucket, 'PUT', 'cat-pic.jpg', {}, 'meow')).status, 403);
	const put = await call(bucket, 'PUT', 'cat-pic.jpg', { 'X-Custom-Auth-Key': 'secret' }, 'meow');
	assert.equal(await put.text(), 'Put cat-pic.jpg successfully!');
	const get = await call(bucket, 'GET', 'cat-pic.jpg');
	assert.equal(await get.text(), 'meow');
	assert.equal(get.headers.get('etag'), '"4"');
});

test('GET outside the allow list and other methods are forbidden', async () => {
	const bucket = new MemoryBucket();
	assert.equal((await call(bucket, 'GET', 'dog.jpg')).status, 403);
	assert.equal((await call(bucket, 'POST', 'cat-pic.jpg', { 'X-Custom-Auth-Key': 'secret' })).status, 403);
});

test('DELETE with the header removes the object', async () => {
	const bucket = new MemoryBucket();
	await call(bucket, 'PUT', 'cat-pic.jpg', { 'X-Custom-Auth-Key': 'secret' }, 'meow');
	assert.equal(await (await call(bucket, 'DELETE', 'cat-pic.jpg', { 'X-Custom-Auth-Key': 'secret' })).text(), 'Deleted!');
	assert.equal((await call(bucket, 'GET', 'cat-pic.jpg')).status, 404);
});
