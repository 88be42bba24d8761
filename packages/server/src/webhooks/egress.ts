/**
 * Egress policy for receivers (SSRF defence). A receiver may not resolve to loopback, private,
 * shared, link-local, unique-local or other special-purpose addresses unless the deployment
 * allows private networks; cloud metadata, unspecified and multicast addresses are refused
 * always. The check is made on what is actually connected to, not on a separate earlier lookup:
 * the HTTP client's own DNS lookup validates every address it resolved (a mixed answer is
 * refused whole, which closes the DNS-rebinding gap), and the connected socket's remote address
 * is checked again. IP-literal hosts skip the lookup and are judged before a socket is opened.
 * Through a forward proxy the same checks run before the proxy is asked to connect.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction, type Socket } from 'node:net';
import { Agent, buildConnector, type Dispatcher, Pool, ProxyAgent } from 'undici';
import { EgressRefusedError, ProxyUnreachableError } from './classify.js';

/** Never reachable, whatever the configuration; each list names why. */
const ALWAYS_REFUSED: readonly (readonly [string, BlockList])[] = [
  [
    'an unspecified address',
    blockList((b) => {
      b.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network", includes 0.0.0.0
      b.addAddress('::', 'ipv6');
    }),
  ],
  [
    'a cloud metadata address',
    blockList((b) => {
      b.addAddress('169.254.169.254', 'ipv4');
      b.addAddress('169.254.170.2', 'ipv4'); // container credentials endpoint
      b.addAddress('100.100.100.200', 'ipv4'); // another vendor's metadata
      b.addAddress('fd00:ec2::254', 'ipv6');
    }),
  ],
  [
    'a multicast or reserved address',
    blockList((b) => {
      b.addSubnet('224.0.0.0', 4, 'ipv4');
      b.addSubnet('240.0.0.0', 4, 'ipv4'); // includes broadcast
      b.addSubnet('ff00::', 8, 'ipv6');
    }),
  ],
];

/** Internal networks: allowed only with EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. */
const PRIVATE = blockList((b) => {
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
    b.addSubnet(net, bits, 'ipv4');
  }
  for (const [net, bits] of [
    ['::1', 128],
    ['fc00::', 7], // unique local
    ['fe80::', 10], // link-local
    ['fec0::', 10], // deprecated site-local
    ['100::', 64], // discard-only
    ['2001:db8::', 32], // documentation
  ] as const) {
    b.addSubnet(net, bits, 'ipv6');
  }
});
const PRIVATE_REASON =
  'a loopback or private network address (EDS_WEBHOOK_ALLOW_PRIVATE_NETWORKS=true allows it)';

function blockList(fill: (list: BlockList) => void): BlockList {
  const list = new BlockList();
  fill(list);
  return list;
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
  // IPv4-compatible (deprecated ::a.b.c.d); `::` and `::1` are IPv6's own.
  if (groups.slice(0, 6).every((g) => g === 0) && groups[6] !== 0) return v4(groups[6]!, groups[7]!);
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

/** Why the policy refuses to connect to this IP address, or undefined when it may. */
export function addressRefusal(address: string, allowPrivateNetworks: boolean): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const inner = family === 6 ? embeddedIpv4(address) : undefined;
  // BlockList matches IPv4-mapped IPv6 (::ffff:a.b.c.d) against the IPv4 rules itself.
  const matches = (list: BlockList) =>
    list.check(address, type) || (inner !== undefined && list.check(inner, 'ipv4'));
  for (const [reason, list] of ALWAYS_REFUSED) if (matches(list)) return reason;
  if (!allowPrivateNetworks && matches(PRIVATE)) return PRIVATE_REASON;
  return undefined;
}

/** Whether the policy refuses to connect to this IP address. */
export function isForbiddenAddress(address: string, allowPrivateNetworks: boolean): boolean {
  return addressRefusal(address, allowPrivateNetworks) !== undefined;
}

/**
 * The IP address a host names literally, or undefined for a DNS name. Hosts come from WHATWG URL
 * parsing (undici's and ours), which already rewrote every IPv4 spelling (2130706433, 0177.0.0.1,
 * 0x7f.1, 127.1) to dotted decimal and IPv6 to its compressed form; brackets are dropped here.
 */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/** Names that resolve to loopback by definition (RFC 6761), refused without asking DNS. */
function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * What can be known of an endpoint URL without DNS: why the policy refuses its host (an IP
 * literal in any spelling, or a loopback name), or undefined. A DNS name is checked again on
 * every connection, because answers change.
 */
export function endpointHostRefusal(urlText: string, allowPrivateNetworks: boolean): string | undefined {
  let hostname: string;
  try {
    hostname = new URL(urlText).hostname;
  } catch {
    return undefined;
  }
  const literal = literalAddress(hostname);
  if (literal !== undefined) return addressRefusal(literal, allowPrivateNetworks);
  if (!allowPrivateNetworks && isLoopbackName(hostname)) return PRIVATE_REASON;
  return undefined;
}

/** A DNS lookup for the HTTP client that refuses an answer containing any forbidden address. */
export function guardedLookup(allowPrivateNetworks: boolean): LookupFunction {
  type Callback = (err: Error | null, address?: string | LookupAddress[], family?: number) => void;
  return ((hostname: string, options: LookupAllOptions | Record<string, unknown>, callback: Callback) => {
    const wantsAll = (options as { all?: boolean }).all === true;
    dnsLookup(hostname, { ...(options as object), all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      const refusal = answerRefusal(addresses, allowPrivateNetworks);
      if (refusal) return callback(new EgressRefusedError(`receiver host resolves to ${refusal}`));
      if (wantsAll) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  }) as unknown as LookupFunction;
}

function answerRefusal(addresses: readonly LookupAddress[], allowPrivateNetworks: boolean) {
  if (addresses.length === 0) return 'no address';
  for (const a of addresses) {
    const refusal = addressRefusal(a.address, allowPrivateNetworks);
    if (refusal) return refusal;
  }
  return undefined;
}

/**
 * Resolves a receiver host under the policy: its addresses, or EgressRefusedError naming why.
 * An IP literal is judged as it stands, with no lookup.
 */
export async function resolveUnderPolicy(hostname: string, allowPrivateNetworks: boolean): Promise<string[]> {
  const literal = literalAddress(hostname);
  const addresses = literal
    ? [{ address: literal, family: isIP(literal) }]
    : await new Promise<LookupAddress[]>((resolve, reject) =>
        dnsLookup(hostname, { all: true }, (err, found) => (err ? reject(err) : resolve(found))),
      );
  const refusal = answerRefusal(addresses, allowPrivateNetworks);
  if (refusal) throw new EgressRefusedError(`receiver host ${literal ? 'is' : 'resolves to'} ${refusal}`);
  return addresses.map((a) => a.address);
}

export interface EgressOptions {
  readonly allowPrivateNetworks: boolean;
  readonly connectTimeoutMs: number;
  /** Connections kept per origin; the worker's per-endpoint limit. */
  readonly connectionsPerOrigin: number;
  /** An HTTP CONNECT forward proxy every connection goes through (credentials in the URL). */
  readonly proxyUrl?: string | undefined;
}

/**
 * Refuses an IP-literal host before any socket exists (a refused target must not be probed: what
 * listens there would otherwise change the outcome), then connects, then checks the connected
 * address again (the lookup already judged DNS names; this is the last word).
 */
export function directConnector(options: EgressOptions): buildConnector.connector {
  const base = buildConnector({
    lookup: guardedLookup(options.allowPrivateNetworks),
    timeout: options.connectTimeoutMs,
  });
  return (opts, callback) => {
    const literal = literalAddress(opts.hostname);
    const refusal = literal ? addressRefusal(literal, options.allowPrivateNetworks) : undefined;
    if (refusal) return callback(new EgressRefusedError(`receiver host is ${refusal}`), null);
    base(opts, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('no socket'), null);
      const remote = (socket as Socket).remoteAddress;
      const late = remote ? addressRefusal(remote, options.allowPrivateNetworks) : 'an unknown address';
      if (late) {
        socket.destroy();
        return callback(new EgressRefusedError(`receiver connection went to ${late}`), null);
      }
      return callback(null, socket);
    });
  };
}

const POOL_OPTIONS = { pipelining: 1, keepAliveTimeout: 30_000, allowH2: false } as const;

/** The HTTP client's dispatcher: policy-checked connections, keep-alive, HTTP/1.1 only. */
export function createEgressAgent(options: EgressOptions): Dispatcher {
  if (options.proxyUrl !== undefined) return createProxiedAgent(options, options.proxyUrl);
  return new Agent({
    connect: directConnector(options),
    connections: options.connectionsPerOrigin,
    ...POOL_OPTIONS,
  });
}

/**
 * Through the forward proxy: the target is resolved and judged here first, and only then is the
 * proxy asked to CONNECT (by name, so TLS is verified end to end against the receiver's name; the
 * proxy applies its own policy a second time). Failures reaching the proxy, and the proxy's
 * refusals, carry their own classes: the receiver is not at fault.
 */
function createProxiedAgent(options: EgressOptions, proxyUrl: string): Dispatcher {
  return new ProxyAgent({
    uri: proxyUrl,
    connections: options.connectionsPerOrigin,
    ...POOL_OPTIONS,
    clientFactory: (origin, opts: Pool.Options) =>
      new Pool(origin, { ...opts, connect: proxyReachConnector(opts.connect, options.connectTimeoutMs) }),
    factory: (origin, opts: Pool.Options) =>
      new Pool(origin, { ...opts, connect: targetCheckedConnector(opts.connect, options) }),
  });
}

type ConnectOption = Pool.Options['connect'];

function targetCheckedConnector(tunnel: ConnectOption, options: EgressOptions): buildConnector.connector {
  const connect = tunnel as buildConnector.connector;
  return (opts, callback) => {
    resolveUnderPolicy(opts.hostname, options.allowPrivateNetworks).then(
      () => connect(opts, callback),
      (error: unknown) => callback(error as Error, null),
    );
  };
}

function proxyReachConnector(given: ConnectOption, timeoutMs: number): buildConnector.connector {
  const connect = typeof given === 'function' ? given : buildConnector({ ...given, timeout: timeoutMs });
  return (opts, callback) =>
    connect(opts, (err, socket) =>
      err ? callback(new ProxyUnreachableError(err), null) : callback(null, socket as Socket),
    );
}
