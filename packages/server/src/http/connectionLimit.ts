/**
 * The process's bound on open connections (decisions.md, Hardening): at most
 * EDS_MAX_CONNECTIONS at once over the API, media and admin ports. When a connection arrives at
 * the bound, the connection that has been idle longest is closed to make room, so sockets opened
 * and left idle cannot lock keyed clients out; only when every other connection is mid-request
 * is the newcomer itself closed. Reaching the bound is counted per port and logged, at most once
 * a minute, without addresses.
 */
import type { Socket } from 'node:net';
import { LinkedRecords } from '../linkedRecords.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Services } from '../services.js';

export type PortName = 'api' | 'media' | 'admin';

/** One warning a minute at most: a flood must not become a flood of log lines. */
const LOG_INTERVAL_MS = 60_000;

interface Tracked {
  readonly socket: Socket;
  readonly port: PortName;
  /** Requests of this connection not yet answered; 0: idle. */
  inFlight: number;
  /** Its neighbours in the idle list, while it is in it. */
  older: Tracked | undefined;
  newer: Tracked | undefined;
  idle: boolean;
}

/** Idle connections in the order they became idle (every request takes its own out and back). */
class IdleList {
  private readonly list = new LinkedRecords<Tracked>();

  get longestIdle(): Tracked | undefined {
    return this.list.oldest;
  }

  append(tracked: Tracked): void {
    if (tracked.idle) return;
    tracked.idle = true;
    this.list.append(tracked);
  }

  remove(tracked: Tracked): void {
    if (!tracked.idle) return;
    tracked.idle = false;
    this.list.remove(tracked);
  }
}

export class ConnectionLimit {
  private readonly open = new Map<Socket, Tracked>();
  private readonly idle = new IdleList();
  private lastLoggedAt: number | undefined;
  private shedSinceLog = 0;

  constructor(
    private readonly maxConnections: number,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly clock: () => number,
  ) {}

  /** A new connection: counted, idle until its first request, and room made for it if needed. */
  admit(socket: Socket, port: PortName): void {
    // Admitted once: a second record would leave the first in the idle list, unreachable.
    if (this.open.has(socket)) return;
    const tracked: Tracked = { socket, port, inFlight: 0, older: undefined, newer: undefined, idle: false };
    this.open.set(socket, tracked);
    this.idle.append(tracked);
    this.metrics.openConnections.inc({ port });
    socket.once('close', () => this.forget(socket));
    while (this.open.size > this.maxConnections) {
      const longestIdle = this.idle.longestIdle;
      if (longestIdle === undefined) break;
      this.shed(longestIdle.socket);
    }
  }

  requestStarted(socket: Socket): void {
    const tracked = this.open.get(socket);
    if (tracked === undefined) return;
    tracked.inFlight++;
    this.idle.remove(tracked);
  }

  requestEnded(socket: Socket): void {
    const tracked = this.open.get(socket);
    if (tracked === undefined || --tracked.inFlight > 0) return;
    tracked.inFlight = 0;
    this.idle.append(tracked);
  }

  get size(): number {
    return this.open.size;
  }

  private shed(socket: Socket): void {
    const port = this.open.get(socket)?.port;
    this.forget(socket);
    socket.destroy();
    if (port === undefined) return;
    this.metrics.connectionsShed.inc({ port });
    this.shedSinceLog++;
    const now = this.clock();
    if (this.lastLoggedAt !== undefined && now - this.lastLoggedAt < LOG_INTERVAL_MS) return;
    this.logger.warn(
      { max_connections: this.maxConnections, port, closed_idle: this.shedSinceLog },
      'connection limit reached: closing the longest-idle connections (EDS_MAX_CONNECTIONS)',
    );
    this.lastLoggedAt = now;
    this.shedSinceLog = 0;
  }

  private forget(socket: Socket): void {
    const tracked = this.open.get(socket);
    if (tracked === undefined) return;
    this.open.delete(socket);
    this.idle.remove(tracked);
    this.metrics.openConnections.dec({ port: tracked.port });
  }
}

/** The bound the configuration sets, for the ports of one process. */
export function connectionLimitFor(
  services: Pick<Services, 'config' | 'metrics' | 'logger' | 'clock'>,
): ConnectionLimit {
  return new ConnectionLimit(
    services.config.http.maxConnections,
    services.metrics,
    services.logger,
    services.clock,
  );
}
