/**
 * The one size under which an object's body is handled whole, in one buffer, everywhere it goes:
 * - storage keeps a body declared this small in the object's metadata record instead of a blob file
 *   (storage/object-service.ts): one transaction stores and publishes it, with no file to create, fsync,
 *   rename and later delete (bench/functions PUT 1 KiB ~0.6k -> ~1.2k req/s, docs/benchmarks-history.md);
 *   SQLite reads blobs of this size from its pages as fast as a file (sqlite.org/intern-v-extern-blob.html);
 * - the R2 wire backend and the S3 API read a body this small in one go and send it in one write
 *   (send-body.ts): for small objects the per-request stream machinery costs more than the read
 *   (bench/functions GET 1 KiB: backend CPU per request halved). Not much larger: a 1 MiB body read whole
 *   measured slower than streamed, since nothing is sent before the last byte is read;
 * - such a whole-object get, sent in one buffer, is the only one the runtime may keep in an isolate's cache
 *   (r2/wire/handlers.ts marks it, workerd/isolate/r2-cache.ts keeps only marked answers).
 */
export const SMALL_BODY_BYTES = 64 * 1024;
