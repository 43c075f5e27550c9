/**
 * Cloudflare derives a webhook destination's `type` from its URL, so that it can format the message
 * for services it knows. The known hosts below map to their SDK type names; anything else is "generic".
 */
const KNOWN_HOSTS: readonly { type: string; matches: (host: string, path: string) => boolean }[] = [
  { type: 'slack', matches: (host) => host === 'hooks.slack.com' },
  {
    type: 'discord',
    matches: (host, path) => /(^|\.)discord(app)?\.com$/.test(host) && path.startsWith('/api/webhooks'),
  },
  { type: 'gchat', matches: (host) => host === 'chat.googleapis.com' },
  { type: 'datadog', matches: (host) => /(^|\.)datadoghq\.(com|eu)$/.test(host) },
  { type: 'opsgenie', matches: (host) => /(^|\.)opsgenie\.com$/.test(host) },
  { type: 'splunk', matches: (host) => /(^|\.)splunkcloud\.com$/.test(host) },
  { type: 'feishu', matches: (host) => /(^|\.)(feishu\.cn|larksuite\.com)$/.test(host) },
];

export function webhookTypeOf(url: URL): string {
  const host = url.hostname.toLowerCase();
  return KNOWN_HOSTS.find((known) => known.matches(host, url.pathname))?.type ?? 'generic';
}
