import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { pipeline as streamPipeline, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import { deleteObject, getObject, listObjects, putObject } from '../client/index.ts';
import { handler } from './context.ts';
import { CliError, UsageError } from './errors.ts';
import { printJson, printTable } from './output.ts';
import { progressMeter } from './progress.ts';

/** `<bucket>/<key>`: the bucket is everything before the first slash, the key everything after. */
export function parseObjectPath(path: string): { bucket: string; key: string } {
  const slash = path.indexOf('/');
  if (slash <= 0 || slash === path.length - 1) throw new UsageError(`expected <bucket>/<key>, got "${path}"`);
  return { bucket: path.slice(0, slash), key: path.slice(slash + 1) };
}

export function registerObject(program: Command): void {
  const object = program.command('object').description('Put, get, delete and list objects in a bucket');

  object
    .command('put <path>')
    .description('Upload a file as <bucket>/<key> (streamed)')
    .requiredOption('--file <file>', 'the file to upload')
    .option('--content-type <type>', 'Content-Type stored with the object')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [path]) => {
        const { bucket, key } = parseObjectPath(path as string);
        const file = ctx.options['file'] as string;
        let size: number;
        try {
          size = statSync(file).size;
        } catch {
          throw new CliError(`cannot read ${file}`);
        }
        const source = createReadStream(file);
        const meter = progressMeter(`Uploading ${bucket}/${key}`, size);
        // pipeline (not pipe) so a failure on either side ends both; the error reaches the upload through meter.
        const counted = meter ? streamPipeline(source, meter, () => {}) : source;
        const body = Readable.toWeb(counted) as ReadableStream<Uint8Array>;
        const contentType = ctx.options['contentType'] as string | undefined;
        const stored = await putObject(ctx.client, await ctx.accountId(), bucket, key, body, {
          size,
          ...(contentType ? { contentType } : {}),
        });
        if (ctx.json) printJson(stored);
        else process.stdout.write(`Uploaded ${bucket}/${key} (${stored.size} bytes, etag ${stored.etag}).\n`);
      }),
    );

  object
    .command('get <path>')
    .description('Download <bucket>/<key> to a file, or to stdout')
    .option('--file <file>', 'write here instead of stdout')
    .action(
      handler(async (ctx, [path]) => {
        const { bucket, key } = parseObjectPath(path as string);
        const response = await getObject(ctx.client, await ctx.accountId(), bucket, key);
        const body = Readable.fromWeb(response.body! as NodeReadableStream<Uint8Array>);
        const file = ctx.options['file'] as string | undefined;
        const length = response.headers.get('content-length');
        // Not while the object itself is printed on the same terminal.
        const shown = file !== undefined || !process.stdout.isTTY;
        const meter = shown
          ? progressMeter(`Downloading ${bucket}/${key}`, length === null ? undefined : Number(length))
          : undefined;
        const target = file ? createWriteStream(file) : process.stdout;
        await (meter ? pipeline(body, meter, target) : pipeline(body, target));
        // On stdout the object itself is the output: no line to mix into it.
        if (file) {
          const size = statSync(file).size;
          process.stdout.write(`Downloaded ${bucket}/${key} to ${file} (${size} bytes).\n`);
        }
      }),
    );

  object
    .command('delete <path>')
    .description('Delete <bucket>/<key>')
    .action(
      handler(async (ctx, [path]) => {
        const { bucket, key } = parseObjectPath(path as string);
        await deleteObject(ctx.client, await ctx.accountId(), bucket, key);
        process.stdout.write(`Deleted ${bucket}/${key}.\n`);
      }),
    );

  object
    .command('list <bucket>')
    .description('List the objects of a bucket')
    .option('--prefix <prefix>', 'only keys starting with this')
    .option('--json', 'print JSON')
    .action(
      handler(async (ctx, [bucket]) => {
        const prefix = ctx.options['prefix'] as string | undefined;
        const objects = await listObjects(
          ctx.client,
          await ctx.accountId(),
          bucket as string,
          prefix ? { prefix } : {},
        );
        if (ctx.json) printJson(objects);
        else
          printTable(
            objects.map((o) => ({ key: o.key, size: o.size, uploaded: o.uploaded })),
            ['key', 'size', 'uploaded'],
            'No objects.',
          );
      }),
    );
}
