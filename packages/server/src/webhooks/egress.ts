/**
 * Egress policy for receivers (SSRF defence). A receiver may not resolve to loopback, private,
 * shared, link-local, unique-local or other special-purpose addresses unless the deployment
 * allows private networks; cloud metadata, unspecified and multicast addresses are refused
 * always. The check is made on what is actually connected to, not on a separate earlier lookup:
 * the HTTP client's own DNS lookup validates every address it resolved (a mixed answer is
 * refused whole, which closes the DNS-rebinding gap), and the connected socket's remote address
 * is checked again (this also covers IP-literal hosts, which skip the lookup).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction, type Socket } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { EgressRefusedError } from './classify.js';

/** Never reachable, whatever the configuration. */
const ALWAYS_BLOCKED = new BlockList();
ALWAYS_BLOCKED.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network", includes 0.0.0.0
ALWAYS_BLOCKED.addAddress('169.254.169.254', 'ipv4'); // cloud instance metadata
ALWAYS_BLOCKED.addAddress('169.254.170.2', 'ipv4'); // container credentials endpoint
ALWAYS_BLOCKED.addAddress('100.100.100.200', 'ipv4'); // another vendor's metadata
ALWAYS_BLOCKED.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
ALWAYS_BLOCKED.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, includes broadcast
ALWAYS_BLOCKED.addAddress('::', 'ipv6'); // unspecified
ALWAYS_BLOCKED.addAddress('fd00:ec2::254', 'ipv6'); // cloud instance metadata over IPv6
ALWAYS_BLOCKED.addSubnet('ff00::', 8, 'ipv6'); // multicast

/** Internal networks: allowed only with EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv6');
}

/** IPv4 carried inside an IPv6 address (NAT64 well-known prefix, 6to4), to check it as IPv4. */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address);
  if (!groups) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) {
    return v4(groups[6]!, groups[7]!);
  }
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  return undefined;
}

function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  const all = [...h, ...fill, ...t].map((g) => Number.parseInt(g, 16));
  return all.length === 8 && all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : undefined;
}

/** Whether the policy refuses to connect to this IP address. */
export function isForbiddenAddress(address: string, allowPrivateNetworks: boolean): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  // BlockList matches IPv4-mapped IPv6 (::ffff:a.b.c.d) against the IPv4 rules itself.
  if (ALWAYS_BLOCKED.check(address, type)) return true;
  const inner = family === 6 ? embeddedIpv4(address) : undefined;
  if (inner && ALWAYS_BLOCKED.check(inner, 'ipv4')) return true;
  if (allowPrivateNetworks) return false;
  return PRIVATE.check(address, type) || (inner !== undefined && PRIVATE.check(inner, 'ipv4'));
}

/** A DNS lookup for the HTTP client that refuses an answer containing any forbidden address. */
export function guardedLookup(allowPrivateNetworks: boolean): LookupFunction {
  type Callback = (err: Error | null, address?: string | LookupAddress[], family?: number) => void;
  return ((hostname: string, options: LookupAllOptions | Record<string, unknown>, callback: Callback) => {
    const wantsAll = (options as { all?: boolean }).all === true;
    dnsLookup(hostname, { ...(options as object), all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      const refused = addresses.find((a) => isForbiddenAddress(a.address, allowPrivateNetworks));
      if (refused || addresses.length === 0) {
        return callback(new EgressRefusedError('receiver host resolves to a refused address'));
      }
      if (wantsAll) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  }) as unknown as LookupFunction;
}

export interface EgressOptions {
  readonly allowPrivateNetworks: boolean;
  readonly connectTimeoutMs: number;
  /** Connections kept per origin; the worker's per-endpoint limit. */
  readonly connectionsPerOrigin: number;
}

/** The HTTP client's dispatcher: policy-checked connections, keep-alive, HTTP/1.1 only. */
export function createEgressAgent(options: EgressOptions): Agent {
  const base = buildConnector({
    lookup: guardedLookup(options.allowPrivateNetworks),
    timeout: options.connectTimeoutMs,
  });
  const connect: buildConnector.connector = (opts, callback) => {
    base(opts, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('no socket'), null);
      const remote = (socket as Socket).remoteAddress;
      if (!remote || isForbiddenAddress(remote, options.allowPrivateNetworks)) {
        socket.destroy();
        return callback(new EgressRefusedError('receiver connection to a refused address'), null);
      }
      return callback(null, socket);
    });
  };
  return new Agent({
    connect,
    connections: options.connectionsPerOrigin,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    allowH2: false,
  });
}
