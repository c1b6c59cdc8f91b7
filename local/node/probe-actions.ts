/**
 * Runs one probe attempt: httpGet (2xx/3xx = success, like the kubelet), tcpSocket (connect
 * succeeds) or exec (exit code 0). A named port resolves against the container's ports.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { spawn } from 'node:child_process';
import type { V1ContainerPort, V1Probe } from '@kubernetes/client-node';
import { enterNamespace } from './netns/enter.js';

export interface ProbeOutcome {
  ok: boolean;
  message: string;
}

export interface ProbeTarget {
  podIP: string;
  ports: V1ContainerPort[];
  /** Environment and credentials used for exec probes. */
  env: Record<string, string>;
  uid?: number;
  gid?: number;
  cwd?: string;
  /** The pod's network namespace (namespace mode): exec probes run inside it. */
  netns?: string;
}

export function resolvePort(port: number | string | undefined, ports: V1ContainerPort[]): number | undefined {
  if (typeof port === 'number') return port;
  if (port === undefined) return undefined;
  if (/^\d+$/.test(port)) return Number(port);
  return ports.find((p) => p.name === port)?.containerPort;
}

export async function runProbe(probe: V1Probe, target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
  if (probe.httpGet) {
    const port = resolvePort(probe.httpGet.port, target.ports);
    if (port === undefined) return { ok: false, message: `probe port "${probe.httpGet.port}" is not a container port` };
    return httpProbe({
      host: probe.httpGet.host || target.podIP,
      port,
      path: probe.httpGet.path || '/',
      https: (probe.httpGet.scheme ?? 'HTTP').toUpperCase() === 'HTTPS',
      headers: Object.fromEntries((probe.httpGet.httpHeaders ?? []).map((h) => [h.name, h.value])),
      timeoutMs,
    });
  }
  if (probe.tcpSocket) {
    const port = resolvePort(probe.tcpSocket.port, target.ports);
    if (port === undefined) return { ok: false, message: `probe port "${probe.tcpSocket.port}" is not a container port` };
    return tcpProbe(probe.tcpSocket.host || target.podIP, port, timeoutMs);
  }
  if (probe.exec?.command?.length) return execProbe(probe.exec.command, target, timeoutMs);
  return { ok: false, message: 'probe has no supported handler (httpGet, tcpSocket or exec)' };
}

interface HttpProbeOptions {
  host: string;
  port: number;
  path: string;
  https: boolean;
  headers: Record<string, string>;
  timeoutMs: number;
}

export function httpProbe(options: HttpProbeOptions): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const send = options.https ? httpsRequest : httpRequest;
    const req = send({
      host: options.host,
      port: options.port,
      path: options.path,
      method: 'GET',
      headers: { 'User-Agent': 'kube-probe/1.32', Accept: '*/*', ...options.headers },
      timeout: options.timeoutMs,
      rejectUnauthorized: false,
      agent: false,
    });
    const timer = setTimeout(() => req.destroy(new Error(`timeout after ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      clearTimeout(timer);
      req.destroy();
      resolve({ ok: status >= 200 && status < 400, message: `HTTP probe returned ${status}` });
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${options.timeoutMs} ms`)));
    req.on('error', (err) => {
      clearTimeout(timer);
      resolve({ ok: false, message: `Get "${options.https ? 'https' : 'http'}://${options.host}:${options.port}${options.path}": ${err.message}` });
    });
    req.end();
  });
}

export function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ok: true, message: 'connected' });
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      resolve({ ok: false, message: `dial tcp ${host}:${port}: ${err.message}` });
    });
  });
}

export function execProbe(command: string[], target: ProbeTarget, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const launch = enterNamespace(target.netns, { argv: command, uid: target.uid, gid: target.gid });
    const child = spawn(launch.argv[0], launch.argv.slice(1), {
      env: target.env,
      cwd: target.cwd,
      uid: launch.uid,
      gid: launch.gid,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      if (output.length < 1024) output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ ok: false, message: err.message });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal) resolve({ ok: false, message: `command timed out after ${timeoutMs} ms` });
      else resolve({ ok: code === 0, message: output.trim() || `exit code ${code}` });
    });
  });
}
