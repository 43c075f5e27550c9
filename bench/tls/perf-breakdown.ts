// Where a proxy's CPU per request goes, from a `perf record -g` file of https.bench.ts's --perf option (run
// with --ledge-node-flags "--perf-basic-prof" so JavaScript frames have names): each sample is put in one
// bucket by its innermost frame, kernel (by system call: write, read, epoll_wait, other), OpenSSL, V8's
// garbage collector, a JavaScript function's own code ("js"), or the natives (builtins, Node's C++)
// called from the innermost JavaScript function ("natives under"), and the buckets are given in
// microseconds per request. Comparing Ledge's file with the node:tls proxy floor's shows Ledge's own work.
// perf's sampling inflates every figure alike (about 1.5-2x here): compare files of one run, not runs.
// Usage: node bench/tls/perf-breakdown.ts <file.data> <requests in it> [lines to show, default 40]
import { execFileSync } from 'node:child_process';

const [file, requestsText, shownText] = process.argv.slice(2);
if (!file || !requestsText) {
  console.error('usage: node bench/tls/perf-breakdown.ts <file.data> <requests> [lines]');
  process.exit(2);
}
const requests = Number(requestsText);
const SAMPLES_PER_SECOND = 999; // https.bench.ts records with -F 999
const script = execFileSync('perf', ['script', '-i', file], { maxBuffer: 1 << 30, encoding: 'utf8' });

interface Frame {
  symbol: string;
  object: string;
}
const FRAME = /^\s*[0-9a-f]+ (.+?)(?:\+0x[0-9a-f]+)? \((.*)\)$/;
const OPENSSL = /aesni|gcm|^SSL_|ssl3_|^tls|EVP_|BIO_|CRYPTO_|ossl_|OPENSSL|^ERR_|sha256|ecp_/;
const JS_FRAME = /^JS:[*+^~']*'?(.*?) (?:file:\/\/\/\S*?\/)?(\S+?):(\d+):\d+/;

const jsName = (symbol: string) => {
  const match = JS_FRAME.exec(symbol);
  return match ? `${match[1] || '(anonymous)'} ${match[2]!.split('/').at(-1)}:${match[3]}` : symbol.slice(0, 70);
};

function bucket(frames: Frame[]): string {
  const { symbol, object } = frames[0]!;
  if (object.startsWith('[kernel')) {
    const kernel = frames.filter((frame) => frame.object.startsWith('[kernel')).map((frame) => frame.symbol);
    if (kernel.some((name) => name.includes('ep_poll') || name.includes('epoll_wait'))) return 'kernel: epoll_wait';
    if (kernel.some((name) => name.includes('ksys_read'))) return 'kernel: read';
    if (kernel.some((name) => name.includes('ksys_write') || name.includes('do_writev'))) return 'kernel: write';
    return 'kernel: other';
  }
  if (OPENSSL.test(symbol)) return 'openssl';
  if (symbol.startsWith('RegExp')) return `js: ${symbol.slice(0, 70)}`;
  if (symbol.startsWith('JS:')) return `js: ${jsName(symbol)}`;
  if (frames.some((frame) => /Scavenge|MarkCompact|Heap::/.test(frame.symbol))) return 'gc';
  const caller = frames.find((frame) => frame.symbol.startsWith('JS:'));
  return caller ? `natives under: ${jsName(caller.symbol)}` : `natives: ${symbol.slice(0, 60)}`;
}

const buckets = new Map<string, number>();
let samples = 0;
for (const block of script.split('\n\n')) {
  const frames = block
    .split('\n')
    .slice(1)
    .map((line) => FRAME.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({ symbol: match[1]!, object: match[2]! }));
  if (frames.length === 0) continue;
  samples++;
  const name = bucket(frames);
  buckets.set(name, (buckets.get(name) ?? 0) + 1);
}

const us = (count: number) => ((count / SAMPLES_PER_SECOND) * 1e6) / requests;
const groups = new Map<string, number>();
for (const [name, count] of buckets) {
  const group = name.split(':')[0]!;
  groups.set(group, (groups.get(group) ?? 0) + count);
}
const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
console.log(`${file}: ${samples} samples, ${us(samples).toFixed(1)} us per request`);
for (const [group, count] of sorted(groups)) console.log(`${us(count).toFixed(2).padStart(7)}  [${group}]`);
for (const [name, count] of sorted(buckets).slice(0, Number(shownText ?? 40))) {
  console.log(`${us(count).toFixed(2).padStart(7)}  ${name}`);
}
