import { DEFAULT_S3_API_PORT } from '../shared/default-ports.ts';
import { liveServers } from '../shared/server-registry.ts';
import { sameApiUrl } from './local-server.ts';

/**
 * The S3 endpoint and function URLs of the server the CLI talks to, as a URL a user can paste. A server on this machine
 * registered the port it really listens on; for any other server the default is the best guess, and `known`
 * says so.
 */
export interface ServerEndpoints {
  /** `http://<API host>:<S3 port>`: a bare address every client resolves (no *.localhost name). */
  s3Endpoint: string;
  /** Whether the ports come from the running server (else they are the defaults). */
  known: boolean;
  /** Where a script answers on its workers.dev-style route, when the server registered its functions port. */
  functionUrl(script: string, subdomain: string): string | undefined;
}

export function serverEndpoints(apiUrl: string, env: NodeJS.ProcessEnv = process.env): ServerEndpoints {
  const registered = liveServers(env).find((server) => sameApiUrl(server.api_url, apiUrl))?.endpoints;
  const url = new URL(apiUrl);
  // localhost may resolve to ::1 first while the server listens on 127.0.0.1 only.
  const host = url.hostname === 'localhost' ? '127.0.0.1' : url.hostname;
  const s3Port = registered?.s3_api_port ?? DEFAULT_S3_API_PORT;
  return {
    s3Endpoint: `http://${host}:${s3Port}`,
    known: registered !== undefined,
    functionUrl: (script, subdomain) => {
      const port = registered?.functions_port;
      if (port === undefined || !registered?.functions_domain) return undefined;
      return `http://${script}.${subdomain}.${registered.functions_domain}${port === 80 ? '' : `:${port}`}`;
    },
  };
}
