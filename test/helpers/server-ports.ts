/** `ledge server` flags that put every port of the server on one the kernel picks (tests and benches run side by side). */
export const EPHEMERAL_PORT_FLAGS: readonly string[] = [
  '--port',
  '0',
  '--functions-port',
  '0',
  '--traffic-port',
  '0',
  '--traffic-tls-port',
  '0',
  '--s3-api-port',
  '0',
];
