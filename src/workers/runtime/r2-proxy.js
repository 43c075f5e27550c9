/* global FixedLengthStream, Headers, Response, TextDecoder */
// The service behind a bucket binding when the storage backend lets the runtime read blob files itself.
// It forwards every binding call to the backend (which injects nothing here: the bucket identity and the
// secret are added by the backend's external service). A get may come back with only the object's
// metadata and the blob file's path (x-ledge-blob-file); the body is then read from the read-only disk
// service over the blob directory, so a large object's bytes go from the file to the function without
// a copy through Node and the unix socket (bench/functions, GET 1 MiB: ~1.5 ms less CPU per request).
export default {
  async fetch(request, env) {
    // The backend's external service marks every call as able to take the shortcut (an injected header).
    const answer = await env.BACKEND.fetch(request);
    const file = answer.headers.get('x-ledge-blob-file');
    if (file === null) return answer;
    const metadataSize = answer.headers.get('cf-r2-metadata-size');
    const metadata = new Uint8Array(await answer.arrayBuffer());
    const blob = await env.BLOBS.fetch(`http://blobs/${file}`);
    // Replaced and collected since the backend answered: ask again, without the shortcut.
    if (!blob.ok || blob.body === null) {
      const headers = new Headers(request.headers);
      headers.set('x-ledge-r2-no-direct', '1');
      return env.BACKEND.fetch(request.url, { method: request.method, headers });
    }
    const size = Number(JSON.parse(new TextDecoder().decode(metadata)).size);
    const { readable, writable } = new FixedLengthStream(metadata.byteLength + size);
    const writer = writable.getWriter();
    void writer.write(metadata);
    writer.releaseLock();
    void blob.body.pipeTo(writable).catch(() => undefined);
    return new Response(readable, { status: 200, headers: { 'cf-r2-metadata-size': metadataSize ?? '0' } });
  },
};
