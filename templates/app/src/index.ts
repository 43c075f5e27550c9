// The R2 tutorial function ("Use R2 from Workers"), with its authorization, in TypeScript.
// PUT and DELETE need the X-Custom-Auth-Key header to equal the AUTH_KEY_SECRET secret
// (`ledge secret put AUTH_KEY_SECRET`); GET serves only the keys in ALLOW_LIST.

export interface Env {
	MY_BUCKET: R2Bucket;
	AUTH_KEY_SECRET: string;
}

const ALLOW_LIST = ['cat-pic.jpg'];

// Check requests for a pre-shared secret
const hasValidHeader = (request: Request, env: Env): boolean => {
	return request.headers.get('X-Custom-Auth-Key') === env.AUTH_KEY_SECRET;
};

function authorizeRequest(request: Request, env: Env, key: string): boolean {
	switch (request.method) {
		case 'PUT':
		case 'DELETE':
			return hasValidHeader(request, env);
		case 'GET':
			return ALLOW_LIST.includes(key);
		default:
			return false;
	}
}

export default {
	async fetch(request: Request, env: Env): Promise<Response> {
		const url = new URL(request.url);
		const key = url.pathname.slice(1);

		if (!authorizeRequest(request, env, key)) {
			return new Response('Forbidden', { status: 403 });
		}

		switch (request.method) {
			case 'PUT':
				await env.MY_BUCKET.put(key, request.body);
				return new Response(`Put ${key} successfully!`);
			case 'GET': {
				const object = await env.MY_BUCKET.get(key);

				if (object === null) {
					return new Response('Object Not Found', { status: 404 });
				}

				const headers = new Headers();
				object.writeHttpMetadata(headers);
				headers.set('etag', object.httpEtag);

				return new Response(object.body, {
					headers,
				});
			}
			case 'DELETE':
				await env.MY_BUCKET.delete(key);
				return new Response('Deleted!');

			default:
				return new Response('Method Not Allowed', {
					status: 405,
					headers: {
						Allow: 'PUT, GET, DELETE',
					},
				});
		}
	},
} satisfies ExportedHandler<Env>;
