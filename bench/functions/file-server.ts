// The ceiling for GET 1 MiB: a plain node:http server that streams one file (fs.createReadStream piped
// into the response, Node's defaults) to every request, with no function and no storage engine in the way.
// Usage: node file-server.ts <port> <file>. Prints "ready" once it listens.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, file] = process.argv.slice(2);
const size = statSync(file!).size;
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': size });
  createReadStream(file!).pipe(res);
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
