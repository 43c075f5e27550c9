import type { Socket } from 'node:net';
import { createServer, DEFAULT_CIPHERS, type SecureVersion, type Server, type TLSSocket } from 'node:tls';
import { ChurnList } from '../churn-list.ts';
import { owned, readIntoSharedBuffer, stopReadingIntoSharedBuffer } from '../raw/client-socket.ts';
import { MAX_CLIENT_HELLO_BYTES, readClientHello, type ClientHello } from './client-hello.ts';

/** A certificate chain and its private key (PEM), as a handshake presents them. */
export interface TlsCredentials {
  readonly cert: string;
  readonly key: string;
}

/** How a ClientHello is served: a site's certificate (h2, http/1.1) or a TLS-ALPN-01 challenge's (acme-tls/1). */
export interface TlsChoice {
  kind: 'site' | 'acme';
  /** The lowest protocol the handshake accepts (the zone's min_tls_version). */
  minVersion: SecureVersion;
  /**
   * The certificate the handshake presents. The same object for as long as the certificate is unchanged:
   * the terminator keeps one TLS server (one OpenSSL context) per object, kind and floor.
   */
  credentials: TlsCredentials;
}

/**
 * TLS for a ProxyServer; the product picks from memory. `choose` sees the whole ClientHello (name and ALPN
 * list) before the handshake and gives the certificate, the floor and the protocols of that handshake:
 * undefined refuses it with an `unrecognized_name` alert (as Cloudflare answers a name it has no
 * certificate for).
 */
export interface TlsTermination {
  choose(hello: ClientHello): TlsChoice | undefined;
}

/**
 * The cipher list of a handshake whose floor is `minVersion`. OpenSSL 3's default security level (1) refuses
 * TLS 1.0 and 1.1 outright (their handshakes sign with SHA-1), whatever the floor: a zone that sets
 * min_tls_version 1.0 or 1.1 asks for those clients to be served, as Cloudflare serves them, so its
 * handshakes run at security level 0 (Node's default ciphers still; no export, NULL or RC4 suites).
 */
export function ciphersFor(minVersion: SecureVersion): string | undefined {
  return minVersion === 'TLSv1' || minVersion === 'TLSv1.1' ? `${DEFAULT_CIPHERS}:@SECLEVEL=0` : undefined;
}

/** An accepted socket whose handshake is bounded by the sweep. */
interface Handshake {
  readonly socket: Socket;
  /** The sweep's clock when it was accepted (ms). */
  readonly startedAt: number;
  listIndex: number;
}

// The handshake of an accepted socket, kept on the socket: node:tls hands the TLS socket over with it.
const HANDSHAKE = Symbol('handshake');
type HandshakingSocket = Socket & { [HANDSHAKE]?: Handshake };

// A fatal TLS alert record (level 2) "unrecognized_name" (112), in TLS 1.0 framing as any version reads it.
const UNRECOGNIZED_NAME_ALERT = Buffer.from([21, 3, 1, 0, 2, 2, 112]);

const SITE_PROTOCOLS = ['h2', 'http/1.1'];
const ACME_PROTOCOLS = ['acme-tls/1'];

/**
 * Terminates TLS on accepted sockets. The ClientHello is read first (raw bytes, put back unread), so the
 * handshake it gets is decided before it starts: the certificate for its name, a protocol floor per zone,
 * and the challenge certificate for a TLS-ALPN-01 validation only when the client asks for acme-tls/1 (an
 * SNI callback alone could not see the ALPN list, nor raise the floor). The handshake itself is node:tls's:
 * one tls.Server (never listening) per certificate, kind and floor is given the socket, as a listening one
 * would be. The certificate is that server's own, so no SNI callback runs: the callback paused every
 * handshake for a round trip through JavaScript and a switch of OpenSSL context (~70 µs of CPU each).
 * The handshake's time bound (ClientHello read and handshake) is kept by the listener's sweep (`sweep`),
 * not by a socket timeout: those armed, refreshed and cleared up to four timers per new connection.
 */
export class TlsTerminator {
  readonly #termination: TlsTermination;
  readonly #timeoutMs: number;
  readonly #secure: (socket: TLSSocket) => void;
  // Weak: the servers of a certificate go with it when the directory drops it (renewed, deleted).
  readonly #servers = new WeakMap<TlsCredentials, Map<string, Server>>();
  /** The accepted sockets whose handshake is not done, with when it started (the sweep's clock). */
  readonly #handshaking = new ChurnList<Handshake>();

  constructor(termination: TlsTermination, handshakeTimeoutMs: number, secure: (socket: TLSSocket) => void) {
    this.#termination = termination;
    this.#timeoutMs = handshakeTimeoutMs;
    this.#secure = secure;
  }

  /**
   * Serves a freshly accepted socket, not yet reading (`pauseOnConnect`): `secure` gets its TLS socket once
   * the handshake is done. `now` is the sweep's clock (ms), against which `sweep` bounds the handshake.
   */
  accept(socket: Socket, now: number): void {
    const handshake: Handshake = { socket, startedAt: now, listIndex: -1 };
    this.#handshaking.add(handshake);
    (socket as HandshakingSocket)[HANDSHAKE] = handshake;
    const fail = () => socket.destroy();
    socket.on('error', fail);
    let received: Buffer | undefined;
    let deciding = true;
    // The first flight is read into the shared read buffer (no Buffer, Readable push, 'readable' event
    // per read), then put back, copied, for node:tls; without that, with paused-mode reads.
    const shared = readIntoSharedBuffer(socket, (chunk) => {
      take(chunk);
      return true;
    });
    const take = (chunk: Buffer) => {
      // (After a refusal the reads go on until the client's end closes the socket.)
      if (!deciding) return;
      received = received ? Buffer.concat([received, chunk]) : chunk;
      const hello = readClientHello(received);
      if (hello === undefined && received.length <= MAX_CLIENT_HELLO_BYTES + 5) {
        received = owned(received);
        return;
      }
      deciding = false;
      if (!shared) socket.off('readable', onReadable);
      if (!hello || hello instanceof Error) return fail();
      const choice = this.#termination.choose(hello);
      if (!choice) return void socket.end(UNRECOGNIZED_NAME_ALERT);
      socket.off('error', fail);
      let server: Server;
      try {
        server = this.#server(choice);
      } catch {
        // A certificate or key OpenSSL refuses: this handshake fails, the port serves the others.
        return fail();
      }
      if (shared) stopReadingIntoSharedBuffer(socket);
      socket.unshift(owned(received));
      server.emit('connection', socket);
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      while (deciding && (chunk = socket.read() as Buffer | null) !== null) take(chunk);
    };
    if (shared) socket.resume();
    else socket.on('readable', onReadable);
  }

  /** Closes the connections whose handshake started more than the bound before `now`; forgets closed ones. */
  sweep(now: number): void {
    this.#handshaking.forEach((handshake) => {
      if (handshake.socket.destroyed) this.#handshaking.remove(handshake);
      else if (now - handshake.startedAt > this.#timeoutMs) {
        this.#handshaking.remove(handshake);
        handshake.socket.destroy();
      }
    });
  }

  #server(choice: TlsChoice): Server {
    const { kind, minVersion, credentials } = choice;
    const key = `${kind}/${minVersion}`;
    let servers = this.#servers.get(credentials);
    if (!servers) this.#servers.set(credentials, (servers = new Map()));
    let server = servers.get(key);
    if (server) return server;
    server = createServer({
      cert: credentials.cert,
      key: credentials.key,
      minVersion,
      ciphers: ciphersFor(minVersion),
      ALPNProtocols: kind === 'acme' ? ACME_PROTOCOLS : SITE_PROTOCOLS,
      // Bounded by `sweep` (a timeout here would be a timer per handshake, armed, refreshed and cleared).
      handshakeTimeout: 0,
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      // The handshake's bound is over: the listener's own timeouts take the connection from here. node:tls
      // keeps the accepted socket it wrapped as `_parent`.
      const handshake = (socket as unknown as { _parent: HandshakingSocket })._parent[HANDSHAKE];
      if (handshake) this.#handshaking.remove(handshake);
      this.#secure(socket);
    });
    server.on('tlsClientError', (_error, socket) => socket.destroy());
    servers.set(key, server);
    return server;
  }
}
