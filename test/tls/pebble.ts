import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.ts';
import { tempDir } from '../helpers/ledge.ts';
import { waitFor } from '../helpers/wait.ts';
import { makeCertificate } from './helpers.ts';

export interface Pebble {
  /** The ACME directory (LEDGE_ACME_DIRECTORY_URL). */
  directoryUrl: string;
  /** The CA of the directory's own HTTPS (LEDGE_ACME_CA_FILE). */
  directoryCaFile: string;
  /** The root that signs the certificates pebble issues (PEM), and a file holding it. */
  root: string;
  rootFile: string;
  /** What pebble and its DNS printed. */
  logs: string[];
  stop(): void;
}

/**
 * Debian's pebble (the ACME test server, RFC 8555) with pebble-challtestsrv as its DNS (every name is
 * 127.0.0.1): its VA checks HTTP-01 on `httpPort` and TLS-ALPN-01 on `tlsPort` of 127.0.0.1, whatever the name.
 */
export async function startPebble(options: {
  httpPort: number;
  tlsPort: number;
  validitySeconds: number;
}): Promise<Pebble> {
  const dir = tempDir('ledge-pebble-');
  const logs: string[] = [];
  const processes: ChildProcess[] = [];
  const start = (command: string, args: string[], env: NodeJS.ProcessEnv = {}) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    processes.push(child);
  };
  const ownTls = makeCertificate(['127.0.0.1']);
  const [acmePort, managementPort, dnsPort, dnsManagement] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  start('pebble-challtestsrv', [
    '-defaultIPv4',
    '127.0.0.1',
    '-defaultIPv6',
    '',
    '-dns01',
    `127.0.0.1:${dnsPort}`,
    '-http01',
    '',
    '-https01',
    '',
    '-tlsalpn01',
    '',
    '-management',
    `127.0.0.1:${dnsManagement}`,
  ]);
  const config = join(dir, 'pebble.json');
  writeFileSync(
    config,
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`,
        managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: ownTls.certificateFile,
        privateKey: ownTls.keyFile,
        httpPort: options.httpPort,
        tlsPort: options.tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
        certificateValidityPeriod: options.validitySeconds,
      },
    }),
  );
  start('pebble', ['-config', config, '-dnsserver', `127.0.0.1:${dnsPort}`], {
    PEBBLE_VA_NOSLEEP: '1',
    PEBBLE_WFE_NONCEREJECT: '0',
  });
  const ca = readFileSync(ownTls.caFile, 'utf8');
  const root = await waitFor(
    () => getText(`https://127.0.0.1:${managementPort}/roots/0`, ca).catch(() => undefined),
    'pebble to start',
  );
  const rootFile = join(dir, 'pebble-root.pem');
  writeFileSync(rootFile, root);
  return {
    directoryUrl: `https://127.0.0.1:${acmePort}/dir`,
    directoryCaFile: ownTls.caFile,
    root,
    rootFile,
    logs,
    stop: () => {
      for (const child of processes) child.kill();
    },
  };
}

function getText(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { agent: new Agent({ ca }) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode}`))));
    })
      .on('error', reject)
      .end();
  });
}
