// What carrying the bytes in a host process costs on this machine, with no sandbox in the way: a
// download from the bench's origin over one loopback TCP connection, against the same download
// through Warden's egress pump joining two (the client's to a listener here, and one to the origin),
// interleaved. Not a ceiling for the egress path: there the pump's second connection is on the
// sandbox's own loopback, where the host's netfilter (conntrack, loaded for Podman's networks) does
// not look at every packet as it does here, and the egress path measured faster than this figure.
import { spawn } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';

async function curlSpeed(port: number): Promise<number> {
  const c = spawn('curl', ['-sS', '-o', '/dev/null', '-w', '%{speed_download}', `http://127.0.0.1:${port}/blob`]);
  let out = '';
  c.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => c.once('close', resolve));
  if (code !== 0) throw new Error(`curl through port ${port} failed (exit ${code})`);
  return Number(out) / 1024 ** 2;
}

/** MB/s of each way, `runs` each, interleaved. */
export async function proxyCeiling(originPort: number, runs: number): Promise<{ direct: number[]; pumped: number[] }> {
  const runner = join(process.cwd(), 'out', 'runner', 'warden-runner');
  const listener = createServer({ pauseOnConnect: true }, (client) => {
    const upstream = connect(originPort, '127.0.0.1', () => {
      const pump = spawn(runner, ['egress-pump'], { stdio: ['pipe', 'pipe', 'ignore', client, upstream] });
      pump.stdout!.resume();
      pump.once('spawn', () => {
        pump.stdin!.write('go -1 0\n');
        client.destroy();
        upstream.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const via = (listener.address() as AddressInfo).port;
  const direct: number[] = [];
  const pumped: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      direct.push(await curlSpeed(originPort));
      pumped.push(await curlSpeed(via));
    }
  } finally {
    listener.close();
  }
  return { direct, pumped };
}
