/** Where `ledge server` listens unless told otherwise (the CLI finds a local server there too). */
export const DEFAULT_API_PORT = 8787;
export const DEFAULT_FUNCTIONS_PORT = 8788;
/** Load balancer traffic (the data plane). */
export const DEFAULT_TRAFFIC_PORT = 8789;
/** The S3 API (R2's S3-compatible endpoint). */
export const DEFAULT_S3_API_PORT = 8790;
/** HTTPS on the traffic port's hostnames (the certificates of src/tls/). */
export const DEFAULT_TRAFFIC_TLS_PORT = 8443;
