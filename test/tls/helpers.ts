import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/ledge.ts';

/** A CA made with openssl and a leaf it signed for `hosts` (PEM texts and file paths). */
export function makeCertificate(hosts: string[], days = 30) {
  const dir = tempDir('ledge-tls-');
  const file = (name: string) => join(dir, name);
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  run([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '30',
    '-subj',
    '/CN=Ledge Test CA/O=Ledge Tests',
  ]);
  run([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    file('leaf.key'),
    '-out',
    file('leaf.csr'),
    '-subj',
    `/CN=${hosts[0]}`,
  ]);
  const ext = `subjectAltName=${hosts.map((host) => (/^[0-9.]+$/.test(host) ? `IP:${host}` : `DNS:${host}`)).join(',')}`;
  execFileSync('sh', ['-c', `printf '%s\n' '${ext}' > ${file('ext.cnf')}`]);
  run([
    'x509',
    '-req',
    '-in',
    file('leaf.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('leaf.pem'),
    '-days',
    String(days),
    '-extfile',
    file('ext.cnf'),
  ]);
  return {
    caFile: file('ca.pem'),
    certificateFile: file('leaf.pem'),
    keyFile: file('leaf.key'),
    certificate: readFileSync(file('leaf.pem'), 'utf8'),
    privateKey: readFileSync(file('leaf.key'), 'utf8'),
  };
}

export interface CurlAnswer {
  code: number;
  body: string;
  httpVersion: string;
  stderr: string;
  headers: string;
}

/** curl (the real client) with --resolve for `host` to 127.0.0.1:`port`; extra args before the URL. */
export function curl(url: string, host: string, port: number, args: string[] = []): Promise<CurlAnswer> {
  const full = [
    '-sS',
    '--max-time',
    '20',
    '--resolve',
    `${host}:${port}:127.0.0.1`,
    '-D',
    '-',
    '-w',
    '\n%{http_code} %{http_version}',
    ...args,
    url,
  ];
  return new Promise((resolve) => {
    execFile('curl', full, { encoding: 'utf8' }, (error, stdout, stderr) => {
      const tail = stdout.lastIndexOf('\n');
      const [code, httpVersion] = stdout.slice(tail + 1).split(' ');
      const text = stdout.slice(0, tail);
      const split = text.indexOf('\r\n\r\n');
      resolve({
        code: error && !stdout ? 0 : Number(code),
        httpVersion: httpVersion ?? '',
        headers: split >= 0 ? text.slice(0, split) : text,
        body: split >= 0 ? text.slice(split + 4) : '',
        stderr,
      });
    });
  });
}
