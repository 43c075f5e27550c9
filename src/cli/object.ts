import { statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import mime from 'mime';
import { deleteObject, listObjects } from '../client/index.ts';
import { handler } from './context.ts';
import { CliError, UsageError } from './errors.ts';
import { downloadObject, uploadFile } from './object-transfer.ts';
import { printJson, printTable } from './output.ts';

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
    .description(
      'Upload a file as <bucket>/<key> (in parts above 8 MiB, with bounded memory; progress on a terminal; Ctrl+C aborts and stores nothing)',
    )
    .requiredOption('--file <file>', 'the file to upload')
    .option(
      '--content-type <type>',
      "Content-Type stored with the object (default: from the file's name, as aws s3 cp does)",
    )
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
        const contentType = (ctx.options['contentType'] as string | undefined) ?? guessContentType(file, key);
        const stored = await uploadFile({
          api: ctx.client,
          accountId: await ctx.accountId(),
          bucket,
          key,
          file,
          size,
          contentType,
          json: ctx.json,
          clock: ctx.clock,
        });
        if (ctx.json) printJson(stored);
        else process.stdout.write(`Uploaded ${bucket}/${key} (${stored.size} bytes, etag ${stored.etag}).\n`);
      }),
    );

  object
    .command('get <path>')
    .description('Download <bucket>/<key> to a file, or to stdout (Ctrl+C leaves no partial file)')
    .option('--file <file>', 'write here instead of stdout')
    .option('--json', 'no progress line (the object goes to the file or stdout)')
    .action(
      handler(async (ctx, [path]) => {
        const { bucket, key } = parseObjectPath(path as string);
        const file = ctx.options['file'] as string | undefined;
        await downloadObject({
          api: ctx.client,
          accountId: await ctx.accountId(),
          bucket,
          key,
          file,
          json: ctx.json,
          clock: ctx.clock,
        });
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

/**
 * The type of a file by its extension, as `aws s3 cp` and rclone set it: the local name first, then the key
 * (a file without an extension uploaded as `site/index.html`); unknown stays unset (the server's default).
 */
export function guessContentType(file: string, key: string): string | undefined {
  return mime.getType(basename(file)) ?? mime.getType(key) ?? undefined;
}
