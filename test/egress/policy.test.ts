import { describe, expect, it } from 'vitest';
import {
  describeRefusal,
  EgressPolicy,
  parseCidr,
  parseCidrList,
  type EgressSettings,
} from '../../src/egress/index.ts';
import { resolveServerConfig } from '../../src/server/index.ts';
import { systemClock } from '../../src/shared/clock.ts';

const policy = (allow = '', deny = '') =>
  new EgressPolicy({ allow: parseCidrList(allow), deny: parseCidrList(deny) }, systemClock);
/** The egress lists the server's settings give from these flags and this environment. */
const resolveEgressSettings = (flags: { allow?: string; deny?: string }, env: NodeJS.ProcessEnv) =>
  resolveServerConfig({ egressAllow: flags.allow, egressDeny: flags.deny }, env).egress;
const refused = (p: EgressPolicy, host: string, port = 80) => p.check(host, port)?.why;

describe('CIDR parsing', () => {
  it('normalises IPv4 and IPv6 ranges and single addresses', () => {
    expect(parseCidr('10.0.0.0/8').text).toBe('10.0.0.0/8');
    expect(parseCidr(' 192.0.2.7 ').text).toBe('192.0.2.7/32');
    expect(parseCidr('FD00:0:0::/8').text).toBe('fd00::/8');
    expect(parseCidr('::1').text).toBe('::1/128');
    expect(parseCidr('::ffff:0:0/96').text).toBe('::ffff:0.0.0.0/96');
    expect(parseCidrList(' 10.0.0.0/8, ,fc00::/7 ').map((c) => c.text)).toEqual(['10.0.0.0/8', 'fc00::/7']);
  });

  it('refuses what is not a range, with the reason', () => {
    expect(() => parseCidr('10.0.0.1/8')).toThrow('"10.0.0.1/8" has host bits set; did you mean 10.0.0.0/8?');
    expect(() => parseCidr('10.0.0.0/33')).toThrow('the prefix length must be 0 to 32');
    expect(() => parseCidr('fe80::/129')).toThrow('the prefix length must be 0 to 128');
    expect(() => parseCidr('10.0.0.0/')).toThrow('prefix length');
    expect(() => parseCidr('example.com/8')).toThrow('is not a CIDR range');
    expect(() => parseCidr('300.1.1.1')).toThrow('is not a CIDR range');
    expect(() => parseCidr('fe80::1%eth0/128')).toThrow('is not a CIDR range');
  });

  it('settings name the flag or variable that is wrong; flags win over the environment', () => {
    expect(() => resolveEgressSettings({ deny: '10.0.0.0/8,bogus' }, {})).toThrow('--egress-deny: "bogus"');
    expect(() => resolveEgressSettings({}, { LEDGE_EGRESS_ALLOW: '1.2.3.4/40' })).toThrow('LEDGE_EGRESS_ALLOW:');
    const settings: EgressSettings = resolveEgressSettings(
      { deny: '10.0.0.0/8' },
      { LEDGE_EGRESS_DENY: '192.168.0.0/16', LEDGE_EGRESS_ALLOW: '10.1.0.0/16' },
    );
    expect(settings.deny.map((c) => c.text)).toEqual(['10.0.0.0/8']);
    expect(settings.allow.map((c) => c.text)).toEqual(['10.1.0.0/16']);
    expect(resolveServerConfig({}, { LEDGE_EGRESS_DENY: '127.0.0.0/8' }).egress.deny[0]?.text).toBe('127.0.0.0/8');
    expect(() => resolveServerConfig({ egressAllow: 'nope' }, {})).toThrow('--egress-allow');
  });
});

describe('egress policy', () => {
  it('by default allows loopback, private and public addresses, and refuses link-local and metadata', () => {
    const p = policy();
    for (const host of ['127.0.0.1', '::1', '10.1.2.3', '192.168.1.1', '100.64.0.1', 'fd12::1', '93.184.216.34'])
      expect(refused(p, host), host).toBeUndefined();
    expect(refused(p, '169.254.169.254')).toBe('169.254.0.0/16: link-local, cloud metadata');
    expect(refused(p, 'fe80::1')).toBe('fe80::/10: IPv6 link-local');
    expect(refused(p, 'fe80::1%eth0')).toBe('fe80::/10: IPv6 link-local');
    expect(refused(p, '[fe80::1]')).toBe('fe80::/10: IPv6 link-local');
    expect(refused(p, 'fd00:ec2::254')).toContain('metadata');
    expect(refused(p, '0.0.0.0')).toContain('this host');
    expect(refused(p, '::')).toContain('unspecified');
    // Non-IP hosts are left to the name check (checkHost / lookupFor).
    expect(p.check('example.com', 80)).toBeUndefined();
  });

  it('treats IPv4-mapped IPv6 addresses as the IPv4 address they carry', () => {
    const p = policy('', '127.0.0.0/8');
    expect(refused(p, '::ffff:127.0.0.1')).toBe('denied by 127.0.0.0/8');
    expect(refused(p, '::ffff:7f00:1')).toBe('denied by 127.0.0.0/8');
    expect(refused(policy(), '::ffff:169.254.169.254')).toContain('link-local');
    expect(p.check('::ffff:127.0.0.1', 80)?.address).toBe('127.0.0.1');
  });

  it('the most specific rule decides; on a tie the operator deny wins, then the operator allow', () => {
    const p = policy('10.1.0.0/16,169.254.10.0/24', '10.0.0.0/8,10.1.2.0/24,0.0.0.0/0');
    expect(refused(p, '10.9.9.9')).toBe('denied by 10.0.0.0/8');
    expect(refused(p, '10.1.9.9')).toBeUndefined();
    expect(refused(p, '10.1.2.3')).toBe('denied by 10.1.2.0/24');
    expect(refused(p, '8.8.8.8')).toBe('denied by 0.0.0.0/0');
    // IPv4 rules say nothing about IPv6 addresses.
    expect(refused(p, '2001:db8::1')).toBeUndefined();
    // The operator may open part of a built-in range, but not by a broader allow.
    expect(refused(p, '169.254.10.1')).toBeUndefined();
    expect(refused(policy('0.0.0.0/0'), '169.254.169.254')).toContain('link-local');
    expect(refused(policy('169.254.0.0/16', '169.254.0.0/16'), '169.254.1.1')).toBe('denied by 169.254.0.0/16');
    expect(refused(policy('169.254.0.0/16'), '169.254.1.1')).toBeUndefined();
    // IPv4 addresses are IPv4-mapped IPv6 addresses too: ::/0 covers every address, ::ffff:0:0/96 all of IPv4.
    expect(refused(policy('', '::/0'), '8.8.8.8')).toBe('denied by ::/0');
    expect(refused(policy('', '::ffff:0:0/96'), '8.8.8.8')).toBe('denied by ::ffff:0.0.0.0/96');
    expect(refused(policy('', '::ffff:0:0/96'), '2001:db8::1')).toBeUndefined();
  });

  it("refuses Ledge's own listeners on every local address, whatever the lists say", () => {
    const p = policy('0.0.0.0/0,::/0');
    const functions: { port?: number } = {};
    p.addOwnListener(8787, 'API');
    p.addOwnListener(() => functions.port, 'functions');
    for (const host of ['127.0.0.1', '127.5.5.5', '::1', '::ffff:127.0.0.1', '0.0.0.0'])
      expect(refused(p, host, 8787), host).toBe("Ledge's own API listener");
    expect(refused(p, '127.0.0.1', 8080)).toBeUndefined();
    // A public address is not this machine: its port 8787 is someone else's.
    expect(refused(p, '93.184.216.34', 8787)).toBeUndefined();
    expect(refused(p, '127.0.0.1', 8788)).toBeUndefined();
    functions.port = 8788;
    expect(refused(p, '127.0.0.1', 8788)).toBe("Ledge's own functions listener");
    // Port 0 means "not known yet" (a pool without monitor or port): only the ranges apply.
    expect(refused(p, '127.0.0.1', 0)).toBeUndefined();
  });

  it('checks names through DNS, and says which address a name resolved to', async () => {
    const p = policy('', '127.0.0.0/8');
    const refusal = await p.checkHost('localhost', 8080);
    expect(refusal).toMatchObject({ host: 'localhost', address: '127.0.0.1', port: 8080 });
    expect(describeRefusal(refusal!)).toBe(
      'localhost resolves to 127.0.0.1:8080, which the egress policy refuses (denied by 127.0.0.0/8)',
    );
    expect(describeRefusal(p.check('::ffff:127.0.0.1', 80)!)).toBe(
      '127.0.0.1:80 is refused by the egress policy (denied by 127.0.0.0/8)',
    );
    // A name that does not resolve is not refused here (the probe reports it), and nothing waits long.
    expect(await p.checkHost('no-such-host.invalid', 80)).toBeUndefined();
    expect(await policy().checkHost('localhost', 8080)).toBeUndefined();
  });

  it('its lookup fails names that resolve to a refused address and passes the others through', async () => {
    const lookup = (p: EgressPolicy, all: boolean) =>
      new Promise<{ error: (Error & { code?: string }) | null; result: unknown }>((resolve) =>
        p.lookupFor(80)('localhost', { all, family: 0 }, (error, result) => resolve({ error, result })),
      );
    const denied = await lookup(policy('', '127.0.0.0/8'), false);
    expect(denied.error?.code).toBe('ERR_EGRESS_REFUSED');
    expect(denied.error?.message).toContain('localhost resolves to 127.0.0.1:80');
    expect((await lookup(policy(), false)).result).toBe('127.0.0.1');
    expect((await lookup(policy(), true)).result).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });
});
